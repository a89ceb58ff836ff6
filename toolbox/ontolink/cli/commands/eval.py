import click

from ontolink.cli.options import config_option, ontology_option, output_option
from ontolink.evaluation.options import EvalOptions


@click.command("eval")
@click.argument("predictions", nargs=-1, type=click.Path(allow_dash=True))
@ontology_option(required=False, help_text="Ontology of the gold ids: resolves alt/obsolete ids, gives the "
                                           "HO/LO/NO overlap categories and, from its is_a graph, the error "
                                           "classes of the misses (file or 'hpo').")
@click.option("--gold", "gold_path", type=click.Path(dir_okay=False, allow_dash=True),
              help="Labeled mentions whose gold ids (joined by id) replace those in the predictions: Mention JSONL, "
                   "or PubTator / BioC (read as `ontolink convert` does).")
@click.option("--id-prefix", "id_prefix", metavar="PREFIX|TYPE=PREFIX,...",
              help="Prefix for bare gold ids, e.g. 'MESH:' or 'Disease=MESH:,Chemical=MESH:' (as in convert).")
@click.option("--spans", is_flag=True, help="Mentions found in raw text (`annotate | link`): precision, recall, F1 "
                                            "of (span, top id) against --gold's offsets, and the span error classes.")
@click.option("--ks", help="Comma-separated K of Recall@K.  [default: for linked mentions 1,5,32,64 up to the "
                          "number of candidates (10 candidates: 1,5,10); 1,10 for retrieved records]")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown", "tsv", "html"]),
              help="Output format; html: one self-contained page (tables, plots, sortable misses).  [default: "
                   "table on a terminal, json otherwise]")
@click.option("--table", "table_name", metavar="NAME",
              help="TSV / Markdown: the table to print (one per stream): metrics, errors or nil.  [default: metrics]")
@output_option(help_text="The report: a table, JSON, Markdown, TSV or an HTML page (--format) ('-' is stdout; .gz "
                         "is compressed).")
@click.option("--errors", "errors_path", metavar="FILE.jsonl", type=click.Path(dir_okay=False, allow_dash=True),
              help="Write one JSON record per miss (per span error with --spans): mention, context, gold and "
                   "predicted id and name, rank of gold, score, error class, is_a path between them.")
@click.option("--plot", "plot_path", metavar="FILE", type=click.Path(dir_okay=False),
              help="Draw the report's plots into FILE (.svg, .png or .pdf, by its extension; needs the [plot] "
                   "extra).")
@click.option("--label", "labels", multiple=True, metavar="TEXT",
              help="Name of each file in the tables, plots and the HTML page, once per file in order.  [default: "
                   "file name]")
@click.option("--aggregate/--side-by-side", "aggregate", default=None,
              help="Several files: mean ± std (one system's seeds) or one row per file (different systems).  "
                   "[default: mean ± std when the paths differ only in one number, as seed0/seed42 do, or the "
                   "records are `align cv` folds; side by side otherwise]")
@click.option("--by", "by_field", metavar="FIELD",
              help="Linked mentions: also split every table by this record field, one group of rows per value "
                   "(e.g. type: type=Disease, type=Chemical).")
@click.option("--nil-table", is_flag=True,
              help="Add the nil table (NIL precision / recall / F1) even when no prediction carries a NIL decision "
                   "(`link --nil-threshold` writes them).")
@click.option("--related-within", type=click.IntRange(2), default=EvalOptions.related_within, show_default=True,
              help="A miss whose common ancestor with gold is at most this many is_a steps away in all is "
                   "'related', further 'unrelated'.")
@click.option("--skip-invalid", is_flag=True, help="Count, report and skip bad lines.")
@click.option("--by-predicate", is_flag=True, help="Retrieved records: also one row per direction and predicate.")
@config_option
def command(**options):
    """Score Linked-mention or Retrieved files: Recall@K, MRR, error classes and more.

    PREDICTIONS are outputs of `ontolink link` ('-' or none: stdin). Several
    files are drawn side by side in plots; the tables give the seeds of one
    system (paths that differ only in one number: run__0, run__42) mean ± std
    and different systems (frozen.jsonl ranker.jsonl) one row per file, each
    named by --label; --aggregate / --side-by-side decide instead. With
    --ontology, a hit counts any gold id, what it resolves to (alt_id,
    replaced_by) and its alt ids, and mentions are split by overlap with the
    gold name: HO (mention inside the name), LO (a shared token), NO (none),
    and not-in-ontology (gold ids it does not hold); with NIL gold ([]) a NIL
    row counts them. Recall@K past the candidates a file holds is n/a.

    \b
    With an ontology that has is_a relations, each top-1 miss gets a class:
      too-general   the prediction is an ancestor of gold (N steps up)
      too-specific  a descendant of gold (N steps down)
      sibling       they share a parent
      related       a common ancestor within --related-within steps in all
      unrelated     none that close
    and lenient_R@1 also counts a miss one step away (parent or child);
    R@1 stays strict.

    \b
    Tables: metrics (Recall@K, MRR), errors (class counts and shares), nil
    (when predictions carry NIL decisions, or --nil-table). JSON holds all of
    them (plain values for one file; mean and std over seeds; {label: value}
    side by side); TSV and Markdown print one per stream, chosen by --table.

    \b
    Examples:
      ontolink eval linked.jsonl --ontology hpo
      ontolink eval seed0.jsonl seed42.jsonl seed52313.jsonl --ontology hpo --format markdown
      ontolink eval frozen.jsonl ranker.jsonl tfidf.jsonl --ontology hpo --format markdown
      ontolink eval linked.jsonl --ontology hpo --by type
      ontolink link --index idx/hpo -i gold.jsonl | ontolink eval --ontology hpo --format json
      ontolink eval linked.jsonl --ontology hpo --format tsv --table errors --errors misses.jsonl
      ontolink eval frozen.jsonl ranker.jsonl --ontology hpo --plot recall.png --label frozen --label ranker
      ontolink eval frozen.jsonl ranker.jsonl --ontology hpo --format html -o report.html
      ontolink eval linked.jsonl --gold CDR_TestSet.PubTator.txt --id-prefix MESH:
      ontolink eval cv/fold-*.jsonl --by-predicate --format markdown
    """
    from ontolink.evaluation.run import eval_files  # late: loads numpy

    eval_files(EvalOptions(**options))
