import click

from ontolink.cli.options import config_option, input_options, output_option
from ontolink.core.registry import LazyChoice
from ontolink.formats.options import ConvertOptions
from ontolink.formats.sssom import AUTO, JUSTIFICATIONS, PREDICATES
from ontolink.formats import reader_names
from ontolink.formats.convert import target_names, convert_files


def _readers():
    return reader_names()


def _sources():
    return _readers() + ["jsonl"]


def _targets():
    return target_names()


@click.command("convert")
@input_options(help_text="Documents (PubTator, BioC XML or JSON, text) or Linked-mention JSONL (--from, else the "
                          "file name) ('-' is stdin; .gz is read transparently).")
@output_option(help_text="Mention JSONL, or PubTator, BioC XML / JSON or SSSOM TSV (--to, else the file name)"
                         " ('-' is stdout; .gz is compressed).")
@click.option("--from", "source_format", type=LazyChoice(_sources),
              help="Input format.  [default: from the file name; stdin: jsonl unless --to mentions]")
@click.option("--to", "target_format", type=LazyChoice(_targets),
              help="Output format.  [default: mentions for documents, else from the -o file name]")
@click.option("--types", help="Comma-separated entity types to keep (e.g. Disease,Chemical); default all.")
@click.option("--id-prefix", "id_prefix", metavar="PREFIX|TYPE=PREFIX,...",
              help="Prefix for bare ids (no ':'): the gold ids read from documents, the candidate ids written; "
                   "e.g. 'MESH:' or 'Disease=MESH:,Gene=NCBIGene:'.")
@click.option("--strip-prefix", "strip_prefix", metavar="PREFIX|TYPE=PREFIX,...",
              help="Prefix taken off the ids that have it, before --id-prefix (the two replace a prefix): "
                   "'MESH:' (or 'MESH') writes MESH:D015738 as D015738, as a corpus with bare ids wrote it.")
@click.option("--context-chars", type=click.IntRange(0), default=ConvertOptions.context_chars,
              show_default=True,
              help="Context kept on each side of a mention (0: the whole document text).")
@click.option("--documents", "documents_path", metavar="FILE", type=click.Path(),
              help="--to pubtator/bioc-*: the documents the mentions came from (text and offsets are copied).")
@click.option("--documents-format", type=LazyChoice(_readers),
              help="Format of --documents.  [default: from its file name]")
@click.option("--keep-annotations", is_flag=True,
              help="--to pubtator/bioc-*: keep the --documents' own annotations beside the linked mentions (by "
                   "offset; one that a linked mention repeats, same span, type and id, is written once). Without "
                   "it the output holds the linked mentions only.")
@click.option("--mapping-set-id", default=ConvertOptions.mapping_set_id, show_default=True,
              help="SSSOM: mapping_set_id of the table.")
@click.option("--license", "license_url", default=ConvertOptions.license_url, show_default=True,
              help="SSSOM: license of the table.")
@click.option("--justification", type=click.Choice((AUTO,) + JUSTIFICATIONS), default=ConvertOptions.justification,
              show_default=True,
              help="SSSOM: mapping_justification (semapv) of every row; auto: from how each candidate was matched "
                   "(matched_by exact or annotate: LexicalMatching, tfidf: LexicalSimilarityThresholdMatching, an encoder: "
                   "SemanticSimilarityThresholdMatching, also after a ranker reorders the candidates; NIL: "
                   "UnspecifiedMatching).")
@click.option("--predicate", type=click.Choice((AUTO,) + PREDICATES), default=ConvertOptions.predicate,
              show_default=True,
              help="SSSOM: predicate_id of every row; auto: skos:exactMatch for a mention's best candidate "
                   "(scoring at least --exact-min), skos:closeMatch for the others (scoring at least --close-min), "
                   "skos:relatedMatch below --close-min.")
@click.option("--exact-min", type=float, metavar="SCORE",
              help="SSSOM, --predicate auto: a best candidate is skos:exactMatch only when its score (the "
                   "confidence column) is at least SCORE, else skos:closeMatch.  [default: any score]")
@click.option("--close-min", type=float, metavar="SCORE",
              help="SSSOM, --predicate auto: a candidate that is not an exact match and scores under SCORE is "
                   "skos:relatedMatch.  [default: none is]")
@click.option("--top-n", type=click.IntRange(1), default=ConvertOptions.top_n, show_default=True,
              help="SSSOM: rows per mention (its best N candidates).")
@click.option("--object-prefix", default=ConvertOptions.object_prefix,
              help="SSSOM: prefix for entity ids that have none (e.g. 'MESH:').")
@click.option("--curie-map", metavar="PREFIX=URI,...",
              help="SSSOM: prefix expansions to add or override (others: http://purl.obolibrary.org/obo/P_).")
@config_option
def command(**options):
    """Convert PubTator / BioC / plain text to Mention JSONL, and Linked JSONL back.

    Documents to mentions (--to mentions): one Mention record per annotation,
    {"id": "DOC:START-END", "doc_id", "start", "end", "mention",
    "context_left", "context_right", "type", "gold"}; "gold" holds the
    annotation's ids ('|', ',' or ';' separated; '-1' or empty: "gold": []).
    Plain text (--from text) is one document per line ('ID<TAB>text' or just
    text, id = line number) and has no annotations: use `ontolink annotate`.

    Linked mentions (the output of `ontolink link`) to PubTator or BioC: the
    documents of --documents, text and offsets untouched, with one annotation
    per mention carrying its best candidate's id (-1 when NIL; --strip-prefix
    and --id-prefix write ids as the corpus writes them); relations
    are dropped. To SSSOM: a mapping table (subject = mention, object =
    entity, sssom:NoTermFound when NIL) with a curie_map header; the
    predicate follows rank and, with --exact-min / --close-min, score.

    \b
    Examples:
      ontolink convert -i CDR_TestSet.PubTator.txt --types Disease --id-prefix MESH: -o mentions.jsonl
      ontolink convert -i corpus.xml --from bioc-xml | ontolink link --index idx/hpo > linked.jsonl
      ontolink convert -i linked.jsonl --to pubtator --documents CDR_TestSet.PubTator.txt -o linked.pubtator
      ontolink convert -i linked.jsonl --to pubtator --documents CDR_TestSet.PubTator.txt --strip-prefix MESH:
      ontolink convert -i linked.jsonl --to bioc-xml --documents corpus.xml -o linked.xml
      ontolink convert -i linked.jsonl --to sssom --mapping-set-id https://example.org/run1 -o links.sssom.tsv
      ontolink convert -i linked.jsonl --to sssom --exact-min 0.9 --top-n 3 -o links.sssom.tsv
    """
    convert_files(ConvertOptions(**options))
