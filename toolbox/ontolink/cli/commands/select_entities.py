import click

from ontolink.aliases.options import SelectEntitiesOptions
from ontolink.cli.options import quiet_option
from ontolink.cli.options import config_option, engine_options, input_options, ontology_option, output_option


@click.command("select-entities")
@ontology_option()
@click.option("--index", "index_dir", type=click.Path(file_okay=False),
              help="A pretrained (not fine-tuned) index of the same ontology, from `ontolink index`, "
                   "for E_BT (top-1 per mention). Without it only exact name matches are selected.")
@input_options(help_text="Mention records, JSONL (no labels needed) ('-' is stdin; .gz is read transparently).")
@output_option(help_text="Selected-entity records, JSONL ('-' is stdout; .gz is compressed).")
@click.option("--device", default=SelectEntitiesOptions.device, show_default=True, help="auto, cpu, cuda or cuda:N (for --index).")
@engine_options
@quiet_option
@config_option
def command(**options):
    """Select the entities an unlabeled mention corpus points to.

    Reads Mention records (no labels needed) and writes one Selected-entity
    record per entity: the Entity fields plus "selected_by" ("exact": its
    name equals a mention, "biencoder": top-1 of --index for a mention) and
    "mention_count", most-mentioned first. Entities without a definition
    cannot be prompted for aliases: they are counted and left out.

    \b
    Examples:
      ontolink index --ontology hpo idx/hpo
      ontolink select-entities --ontology hpo --index idx/hpo -i mentions.jsonl > selected.jsonl
      ontolink select-entities --ontology hpo --index idx/hpo -i mentions.jsonl \\
        | ontolink gen-aliases --ontology hpo | ontolink filter --ontology hpo \\
        | ontolink make-pairs --ontology hpo --mentions mentions.jsonl > pairs.jsonl
      ontolink select-entities --ontology hpo --index idx/hpo --engine ray --workers 4 -i mentions.jsonl
    """
    from ontolink.aliases.select import select_entities_files  # late: loads numpy

    select_entities_files(SelectEntitiesOptions(**options))
