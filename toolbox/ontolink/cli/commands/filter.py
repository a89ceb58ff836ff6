import click

from ontolink.aliases.options import FilterOptions
from ontolink.cli.options import quiet_option
from ontolink.cli.options import (
    config_option,
    device_option,
    input_options,
    ontology_option,
    output_option,
)


@click.command("filter")
@ontology_option()
@input_options(help_text="Aliases records, JSONL (from gen-aliases) ('-' is stdin; .gz is read transparently).")
@output_option(help_text="Filtered-aliases records, JSONL ('-' is stdout; .gz is compressed).")
@click.option("--model", help="Sentence encoder for the similarities (hub name or local path).  "
                              "[default: sentence-transformers/all-MiniLM-L6-v2 from PyPI; "
                              "the published choice is FremyCompany/BioLORD-2023-M]")
@click.option("--tau", type=click.FloatRange(-1, 1), default=FilterOptions.tau, show_default=True,
              help="Keep an alias only if its similarity to the entity's name is at least tau.")
@click.option("--neighbours", type=click.Choice(["n-plus", "n"]), default=FilterOptions.neighbours,
              show_default=True,
              help="Neighbours an alias may drift to: n-plus = parents, children and siblings; n = no siblings.")
@click.option("--precision", type=click.Choice(["fp32", "fp16", "bf16", "int8", "auto"]),
              default=FilterOptions.precision, show_default=True,
              help="Encoder arithmetic; fp32 keeps cosine similarities exact next to the tau threshold.")
@device_option
@click.option("--batch-size", type=click.IntRange(1), default=FilterOptions.batch_size, show_default=True,
              help="Records per batch.")
@quiet_option
@config_option
def command(**options):
    """Drop generated aliases that drift to a neighbouring entity.

    Reads Aliases records (from gen-aliases). For each alias a of entity e:
    s_anchor = cos(name(e), a) and s_drift = the best cos(name(e'), a) over
    e's neighbours; a is kept only if s_anchor >= s_drift and s_anchor >= tau.
    "aliases" becomes the kept ones and "decisions" lists every alias with
    s_anchor, s_drift, drift_to (the neighbour) and kept.

    \b
    Examples:
      ontolink filter --ontology hpo -i aliases.jsonl -o filtered.jsonl
      ontolink filter --ontology hpo --tau 0.8 --neighbours n < aliases.jsonl
      ontolink filter --ontology hpo --model FremyCompany/BioLORD-2023-M --device cuda < aliases.jsonl
    """
    from ontolink.aliases.filter import filter_aliases_files  # late: loads numpy

    filter_aliases_files(FilterOptions(**options))
