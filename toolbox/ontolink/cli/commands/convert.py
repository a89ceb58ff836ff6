import click

from ontolink.formats.sssom import AUTO, JUSTIFICATIONS, PREDICATES
from ontolink.core.io import open_output, plural, warn as summary
from ontolink.cli.options import config_option, input_options, output_option
from ontolink.core.registry import LazyChoice

MENTIONS = "mentions"  # Mention JSONL: what documents become


def _readers():
    from ontolink.formats import reader_names

    return reader_names()


def _sources():
    return _readers() + ["jsonl"]


def _targets():
    from ontolink.formats import writer_names

    return [MENTIONS] + writer_names()


def _guess_output(path):
    from ontolink.formats import DOCUMENT_FORMATS

    if str(path).lower().endswith((".jsonl", ".jsonl.gz")):
        return MENTIONS
    return DOCUMENT_FORMATS.guess(path, "writer")


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
              help="Prefix for bare gold ids, e.g. 'MESH:' or 'Disease=MESH:,Gene=NCBIGene:'.")
@click.option("--context-chars", type=click.IntRange(0), default=0, show_default=True,
              help="Context kept on each side of a mention (0: the whole document text).")
@click.option("--documents", "documents_path", metavar="FILE", type=click.Path(),
              help="--to pubtator/bioc-*: the documents the mentions came from (text and offsets are copied).")
@click.option("--documents-format", type=LazyChoice(_readers),
              help="Format of --documents.  [default: from its file name]")
@click.option("--keep-annotations", is_flag=True,
              help="--to pubtator/bioc-*: keep the --documents' own annotations beside the linked mentions (by "
                   "offset; one that a linked mention repeats, same span, type and id, is written once). Without "
                   "it the output holds the linked mentions only.")
@click.option("--mapping-set-id", default="https://w3id.org/ontolink/mappings/linked", show_default=True,
              help="SSSOM: mapping_set_id of the table.")
@click.option("--license", "license_url", default="https://creativecommons.org/publicdomain/zero/1.0/",
              show_default=True, help="SSSOM: license of the table.")
@click.option("--justification", type=click.Choice((AUTO,) + JUSTIFICATIONS), default=AUTO, show_default=True,
              help="SSSOM: mapping_justification (semapv) of every row; auto: from how each candidate was matched "
                   "(matched_by exact or annotate: LexicalMatching, tfidf: LexicalSimilarityThresholdMatching, an encoder: "
                   "SemanticSimilarityThresholdMatching, also after a ranker reorders the candidates; NIL: "
                   "UnspecifiedMatching).")
@click.option("--predicate", type=click.Choice((AUTO,) + PREDICATES), default=AUTO, show_default=True,
              help="SSSOM: predicate_id of every row; auto: skos:exactMatch for a mention's best candidate, "
                   "skos:closeMatch for the ones below it (--top-n).")
@click.option("--top-n", type=click.IntRange(1), default=1, show_default=True,
              help="SSSOM: rows per mention (its best N candidates).")
@click.option("--object-prefix", default="", help="SSSOM: prefix for entity ids that have none (e.g. 'MESH:').")
@click.option("--curie-map", metavar="PREFIX=URI,...",
              help="SSSOM: prefix expansions to add or override (others: http://purl.obolibrary.org/obo/P_).")
@config_option
def command(input_path, skip_invalid, output_path, source_format, target_format, types, id_prefix, context_chars,
            documents_path, documents_format, keep_annotations, mapping_set_id, license_url, justification, predicate,
            top_n, object_prefix, curie_map):
    """Convert PubTator / BioC / plain text to Mention JSONL, and Linked JSONL back.

    Documents to mentions (--to mentions): one Mention record per annotation,
    {"id": "DOC:START-END", "doc_id", "start", "end", "mention",
    "context_left", "context_right", "type", "gold"}; "gold" holds the
    annotation's ids ('|', ',' or ';' separated; '-1' or empty: "gold": []).
    Plain text (--from text) is one document per line ('ID<TAB>text' or just
    text, id = line number) and has no annotations: use `ontolink annotate`.

    Linked mentions (the output of `ontolink link`) to PubTator or BioC: the
    documents of --documents, text and offsets untouched, with one annotation
    per mention carrying its best candidate's id (-1 when NIL); relations
    are dropped. To SSSOM: a mapping table (subject = mention, object =
    entity, sssom:NoTermFound when NIL) with a curie_map header.

    \b
    Examples:
      ontolink convert -i CDR_TestSet.PubTator.txt --types Disease --id-prefix MESH: -o mentions.jsonl
      ontolink convert -i corpus.xml --from bioc-xml | ontolink link --index idx/hpo > linked.jsonl
      ontolink convert -i linked.jsonl --to pubtator --documents CDR_TestSet.PubTator.txt -o linked.pubtator
      ontolink convert -i linked.jsonl --to bioc-xml --documents corpus.xml -o linked.xml
      ontolink convert -i linked.jsonl --to sssom --mapping-set-id https://example.org/run1 -o links.sssom.tsv
    """
    from ontolink.formats import DOCUMENT_FORMATS, Problems, resolve_format

    if source_format is None:
        if input_path == "-" or str(input_path).lower().endswith((".jsonl", ".jsonl.gz")):
            if target_format == MENTIONS:
                raise click.UsageError("reading documents from stdin needs --from")
            source_format = "jsonl"
        else:
            source_format = resolve_format(input_path, None)
    if target_format is None:
        target_format = MENTIONS if source_format != "jsonl" else _guess_output(output_path)
        if target_format is None or (source_format == "jsonl" and target_format == MENTIONS):
            raise click.UsageError(f"say the output format with --to ({', '.join(_targets()[1:])})")
    if (source_format == "jsonl") == (target_format == MENTIONS):
        raise click.UsageError(f"convert reads documents into mentions (--to {MENTIONS}), or Linked JSONL "
                               f"(--from jsonl) into {'/'.join(_targets()[1:])}; not {source_format} to "
                               f"{target_format}")
    needs_documents = target_format != MENTIONS and DOCUMENT_FORMATS.get(target_format).needs_documents
    if keep_annotations and not needs_documents:
        raise click.UsageError("--keep-annotations applies to --to pubtator, bioc-xml or bioc-json (with --documents)")
    if needs_documents and not documents_path:
        raise click.UsageError(f"--to {target_format} needs --documents FILE: the documents the mentions came from")
    problems = Problems(skip_invalid)
    if target_format == MENTIONS:
        _documents_to_mentions(input_path, source_format, output_path, types, id_prefix, context_chars, problems)
        return
    from ontolink.formats.sssom import parse_curie_map

    writer_options = {"mapping_set_id": mapping_set_id, "license_url": license_url, "justification": justification,
                      "predicate": predicate, "top_n": top_n, "object_prefix": object_prefix,
                      "curie_map": parse_curie_map(curie_map)}
    _linked_to_format(input_path, output_path, skip_invalid, target_format,
                      documents_path if needs_documents else None, documents_format, problems, writer_options,
                      keep_annotations)


def _documents_to_mentions(input_path, source_format, output_path, types, id_prefix, context_chars, problems):
    from ontolink.formats import Counted, read_documents
    from ontolink.core.io import RecordWriter
    from ontolink.formats.convert import document_mentions, parse_id_prefixes

    counter = Counted(read_documents(input_path, source_format, problems))
    kept = {part.strip() for part in types.split(",") if part.strip()} if types else None
    with RecordWriter(output_path) as writer:
        writer.write_all(document_mentions(counter, types=kept, id_prefixes=parse_id_prefixes(id_prefix),
                                           context_characters=context_chars, problems=problems),
                         flush_every=1)  # a document's mentions go downstream as soon as its block is read
    skipped = f"; {problems.skipped} invalid lines or annotations skipped" if problems.skipped else ""
    summary(f"converted {plural(counter.count, 'document')} to {plural(writer.count, 'mention')}{skipped}")


def _linked_to_format(input_path, output_path, skip_invalid, target_format, documents_path, documents_format,
                      problems, writer_options, keep_annotations=False):
    from ontolink.formats import DOCUMENT_FORMATS, read_documents
    from ontolink.core.io import ReadStats, display_name, read_records
    from ontolink.core.records import validate_linked_mention
    from ontolink.formats.convert import write_linked

    stats = ReadStats()
    records = read_records(input_path, validate=validate_linked_mention, skip_invalid=skip_invalid, stats=stats)
    documents = read_documents(documents_path, documents_format, problems) if documents_path else None
    with open_output(output_path, binary=DOCUMENT_FORMATS.get(target_format).binary) as stream:
        count, links = write_linked(records, target_format, stream, documents=documents,
                                    documents_name=display_name(documents_path) if documents_path else "documents",
                                    keep_annotations=keep_annotations, **writer_options)
    into = f"{plural(count, 'document')} with " if documents is not None else ""
    summary(f"wrote {into}{plural(links, 'linked mention')} as {target_format}; read {stats.summary()}")
