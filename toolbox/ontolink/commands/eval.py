import sys

import click

from ontolink.options import config_option, ontology_option, output_option


@click.command("eval")
@click.argument("predictions", nargs=-1, type=click.Path(allow_dash=True))
@ontology_option(required=False, help_text="Ontology of the gold ids: resolves alt/obsolete ids and gives the "
                                           "HO/LO/NO overlap categories (file or 'hpo').")
@click.option("--gold", "gold_path", type=click.Path(dir_okay=False, allow_dash=True),
              help="Labeled mentions whose gold ids (joined by id) replace those in the predictions: Mention JSONL, "
                   "or PubTator / BioC (read as `ontolink convert` does).")
@click.option("--spans", is_flag=True, help="Mentions found in raw text (`annotate | link`): precision, recall, F1 "
                                            "of (span, top id) against --gold's offsets.")
@click.option("--ks", help="Comma-separated K of Recall@K.  [default: 1,5,32,64 for linked mentions; 1,10 for "
                          "retrieved records]")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown", "tsv"]),
              help="Output format.  [default: table on a terminal, json otherwise]")
@output_option
@click.option("--skip-invalid", is_flag=True, help="Count, report and skip bad lines.")
@click.option("--by-predicate", is_flag=True, help="Retrieved records: also one row per direction and predicate.")
@config_option
def command(predictions, ontology, gold_path, spans, ks, fmt, output_path, skip_invalid, by_predicate):
    """Score Linked-mention or Retrieved files: Recall@K, MRR and more.

    PREDICTIONS are outputs of `ontolink link` ('-' or none: stdin). Several
    files (one per seed) give mean ± std. With --ontology, a hit counts any
    gold id, what it resolves to (alt_id, replaced_by) and its alt ids, and
    mentions are split by overlap with the gold name: HO (mention inside the
    name), LO (a shared token), NO (none).

    \b
    Examples:
      ontolink eval linked.jsonl --ontology hpo
      ontolink eval seed0.jsonl seed42.jsonl seed52313.jsonl --ontology hpo --format markdown
      ontolink link --index idx/hpo -i gold.jsonl | ontolink eval --ontology hpo --format json
      ontolink eval cv/fold-*.jsonl --by-predicate --format markdown
    """
    from ontolink.io import write_text
    from ontolink.steps.eval_files import evaluate_files

    files = list(predictions) or ["-"]
    if files.count("-") > 1:
        raise click.UsageError("stdin ('-') can be read only once")
    if fmt is None:
        fmt = "table" if output_path == "-" and sys.stdout.isatty() else "json"
    write_text(output_path, evaluate_files(files, ontology, gold_path=gold_path, spans=spans, ks=ks, fmt=fmt,
                                           skip_invalid=skip_invalid, by_predicate=by_predicate))
