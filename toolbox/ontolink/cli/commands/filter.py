import click

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
@click.option("--tau", type=click.FloatRange(-1, 1), default=0.9, show_default=True,
              help="Keep an alias only if its similarity to the entity's name is at least tau.")
@click.option("--neighbours", type=click.Choice(["n-plus", "n"]), default="n-plus", show_default=True,
              help="Neighbours an alias may drift to: n-plus = parents, children and siblings; n = no siblings.")
@click.option("--precision", type=click.Choice(["fp32", "fp16", "bf16", "int8", "auto"]), default="fp32", show_default=True,
              help="Encoder arithmetic; fp32 keeps cosine similarities exact next to the tau threshold.")
@device_option
@click.option("--batch-size", type=click.IntRange(1), default=64, show_default=True, help="Records per batch.")
@config_option
def command(ontology, input_path, skip_invalid, output_path, model, tau, neighbours,
            precision, device, batch_size):
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
    from ontolink.encoders import load_encoder
    from ontolink.core.progress import counting
    from ontolink.core.io import ReadStats, RecordWriter, display_name, read_records, warn
    from ontolink.core.records import validate_alias_record
    from ontolink.aliases.filter import FilterStats, filter_aliases

    loaded = ontology.load()
    stats, read_stats = FilterStats(), ReadStats()
    records = read_records(input_path, validate=validate_alias_record, skip_invalid=skip_invalid, stats=read_stats)
    with RecordWriter(output_path) as writer:
        # the encoder loads when the first record arrives (in a pipe: after gen-aliases has its GPU share)
        filtered = filter_aliases(records, loaded, lambda: load_encoder(model, device=device, precision=precision),
                                  tau=tau, with_siblings=neighbours == "n-plus",
                                  batch_size=batch_size, stats=stats, source=display_name(input_path))
        writer.write_all(counting(filtered, "filter", "entity"), flush_every=batch_size)
    warn(f"filter: {stats.summary()}")
