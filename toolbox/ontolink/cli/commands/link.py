import click

from ontolink.cli.options import quiet_option
from ontolink.cli.options import (
    config_option,
    device_option,
    engine_options,
    input_options,
    ontology_option,
    output_option,
    subset_options,
)
from ontolink.linking.options import DEFAULT_TOP_K, LinkOptions
from ontolink.linking.run import link_files


@click.command("link")
@click.argument("phrases", nargs=-1)
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False),
              help="Index directory made by `ontolink index`.")
@input_options(help_text="Mention records, JSONL; a directory or a quoted glob of shards ('-' is stdin; .gz is "
                          "read transparently).")
@output_option(help_text="Linked mentions: JSONL, or TSV when FILE ends in .tsv or with --to tsv ('-' is stdout; "
                         ".gz is compressed).")
@click.option("--to", "output_format", type=click.Choice(["jsonl", "tsv"]),
              help="jsonl: each Mention record with its candidates; tsv: one row per (mention, rank): "
                   "mention_id, mention, rank, id, name, score, matched_name, matched_kind, matched_by (choose "
                   "them with --fields and --candidate-fields).  [default: from the -o name, else jsonl]")
@click.option("--fields", "fields_text", metavar="FIELD,...",
              help="Keep only these fields of each output record, in this order (e.g. id,mention,candidates; a "
                   "field a record lacks is left out).  With --to tsv: the mention's columns before rank "
                   "(candidates, the rows, is skipped).  [default: every field; tsv: id,mention]")
@click.option("--candidate-fields", "candidate_fields_text", metavar="FIELD,...",
              help="Keep only these fields of each candidate, in this order (e.g. id,name,score).  With --to tsv: "
                   "the columns after rank.  [default: every field; tsv: id,name,score,matched_name,matched_kind,"
                   "matched_by]")
@click.option("--no-context", is_flag=True,
              help="Leave context_left and context_right out of the output records (they are still read; "
                   "the same as --fields without them).")
@click.option("--output-dir", type=click.Path(file_okay=False),
              help="With -i DIRECTORY or a quoted glob of shards: one output shard per input shard, of the same "
                   "name, in this directory (instead of one -o stream).")
@click.option("--top-k", type=click.IntRange(1),
              help=f"Candidates per mention.  [default: {DEFAULT_TOP_K}; with --ranker or --reranker, the number it "
                   "was trained on (64)]")
@click.option("--batch-size", type=click.IntRange(1),
              help="Mentions encoded and searched together (output is flushed after each batch); the links "
                   "are the same at any size, a large one encodes and searches faster.  [default: 4096; 256 "
                   "with --reranker, whose cross-encoder takes seconds a batch]")
@ontology_option(required=False, help_text="Check that the index was built for this ontology (file or 'hpo'; "
                                           "compared by content hash, not parsed).")
@subset_options
@click.option("--reranker", "reranker_dir", type=click.Path(file_okay=False),
              help="A reranker from `ontolink train reranker` (either architecture): rescores all top-K "
                   "candidates.")
@click.option("--ranker", "ranker_dir", type=click.Path(file_okay=False),
              help="A feature ranker from `ontolink train ranker`: orders the top-K candidates (CPU-cheap).  "
                   "[default: the index's own, chosen by `ontolink index`: the packaged ranker, one fitted on the "
                   "ontology's synonyms, or none]")
@click.option("--no-ranker", is_flag=True,
              help="The index's order, with no ranker: what `link` wrote before it had a default ranker.")
@click.option("--prior", default=LinkOptions.prior, show_default=True, metavar="auto|hpo|none|FILE",
              help="With a ranker: the entity prior ('hpo', a select-entities output or id/count file, 'none'; "
                   "auto: hpo for an HPO index, else none).")
@click.option("--with-features", is_flag=True,
              help="With a ranker: add each candidate's feature values (\"features\") to the output.")
@click.option("--nil-threshold", metavar="FLOAT|auto",
              help="Mark a mention \"nil\": true (candidates kept) when its best retriever score (with a ranker, "
                   "the best \"retriever_score\": the ranker's \"score\" is a probability) is below this; 'auto' "
                   "calibrates it on the index, without labels (docs/recognition.md: NIL).")
@click.option("--annotate-ids/--no-annotate-ids", default=LinkOptions.annotate_ids, show_default=True,
              help="Candidates that `annotate`'s dictionary found over the mention (its matched_ids) are marked "
                   "\"matched_by\": \"annotate\" and come right after exact names, before the index's order (a "
                   "--ranker or --reranker orders them afterwards); --no-annotate-ids ignores matched_ids.")
@device_option
@engine_options
@quiet_option
@config_option
def command(**options):
    """Add the top-K entities to every Mention record.

    Reads Mention records ({"id", "mention", ...}; other fields pass through;
    a record with an "expansion", as `annotate` writes for a coordinated
    name, is searched by it: "palmar pits" for "palmar and plantar pits")
    and writes each with "candidates": [{"id", "name", "score",
    "matched_name", "matched_kind", "matched_by"}], best first, one per
    entity. "matched_name" is the entity's name or synonym that matched,
    "matched_kind" what it is ("name", or its synonym scope: EXACT,
    RELATED, ...). A candidate whose matched name is the mention itself
    once case, British spellings and plurals are folded (as `annotate`
    folds them: "astrocytes" is "astrocyte") comes first, with
    "matched_by": "exact". Then, for a mention `annotate` found in its
    dictionary, the entities whose name it found there ("matched_ids"),
    with "matched_by": "annotate"; the others have the index method
    ("dense", "tfidf", ...). With --reranker or --ranker the order is theirs and
    each candidate also keeps its "retriever_score"; a --ranker's
    candidate found through the long form of an abbreviation defined in
    the mention's document has "matched_by": "abbreviation".

    --entities and --where keep the candidates among some entities (the
    index searched as deep as it takes to fill --top-k with them).

    PHRASES given as arguments are linked instead of -i, as Mention
    records with ids "1", "2", ... in order.

    --fields and --candidate-fields keep only the fields named, in that
    order, of each record and of each of its candidates (leave out the
    context copied into every record, or keep three fields of each
    candidate); in a TSV they choose its columns.

    \b
    Examples:
      ontolink link --index idx/hpo -i mentions.jsonl -o linked.jsonl
      ontolink link --index idx/cl --to tsv "Kupffer cells" "astrocytes"
      ontolink link --index idx/hpo -i mentions.jsonl --no-context -o linked.jsonl
      ontolink link --index idx/entities --where type=Disease -i mentions.jsonl -o linked.jsonl
      ontolink link --index idx/hpo -i mentions.jsonl --fields id,mention,candidates --candidate-fields id,name,score
      ontolink link --index idx/hpo -i mentions.jsonl --fields doc_id,start,end,mention -o linked.tsv
      echo '{"id": "m1", "mention": "short stature"}' | ontolink link --index idx/hpo --top-k 3
      zcat mentions.jsonl.gz | ontolink link --index idx/hpo | head -1
      ontolink link --index idx/tuned --reranker models/reranker -i mentions.jsonl
      ontolink link --index idx/hpo --ranker models/ranker -i mentions.jsonl -o linked.jsonl
      ontolink link --index idx/hpo --engine ray --workers 8 -i mentions.jsonl -o linked.jsonl
      ontolink link --index idx/hpo --engine ray --ray-address auto -i 'pubmed/*.jsonl.gz' --output-dir linked/
    """
    link_files(LinkOptions(**options))
