import click

from ontolink.formats import DOCUMENT_FORMATS
from ontolink.formats.sssom import JUSTIFICATIONS, PREDICATES
from ontolink.io import open_output, warn as summary
from ontolink.options import config_option, input_options, output_option

OUTPUT_FORMATS = ("mentions", "pubtator", "bioc-xml", "bioc-json", "sssom")


def _guess_output(path):
    from ontolink.formats import guess_format

    name = str(path).lower()
    if name.endswith((".tsv", ".sssom.tsv")):
        return "sssom"
    if name.endswith((".jsonl", ".jsonl.gz")):
        return "mentions"
    return guess_format(path)


@click.command("convert")
@input_options
@output_option
@click.option("--from", "source_format", type=click.Choice(DOCUMENT_FORMATS + ("jsonl",)),
              help="Input format.  [default: from the file name; stdin: jsonl unless --to mentions]")
@click.option("--to", "target_format", type=click.Choice(OUTPUT_FORMATS),
              help="Output format.  [default: mentions for documents, else from the -o file name]")
@click.option("--types", help="Comma-separated entity types to keep (e.g. Disease,Chemical); default all.")
@click.option("--id-prefix", "id_prefix", metavar="PREFIX|TYPE=PREFIX,...",
              help="Prefix for bare gold ids, e.g. 'MESH:' or 'Disease=MESH:,Gene=NCBIGene:'.")
@click.option("--context-chars", type=click.IntRange(0), default=0, show_default=True,
              help="Context kept on each side of a mention (0: the whole document text).")
@click.option("--documents", "documents_path", metavar="FILE", type=click.Path(),
              help="--to pubtator/bioc-*: the documents the mentions came from (text and offsets are copied).")
@click.option("--documents-format", type=click.Choice(DOCUMENT_FORMATS),
              help="Format of --documents.  [default: from its file name]")
@click.option("--mapping-set-id", default="https://w3id.org/ontolink/mappings/linked", show_default=True,
              help="SSSOM: mapping_set_id of the table.")
@click.option("--license", "license_url", default="https://creativecommons.org/publicdomain/zero/1.0/",
              show_default=True, help="SSSOM: license of the table.")
@click.option("--justification", type=click.Choice(JUSTIFICATIONS), default=JUSTIFICATIONS[0], show_default=True,
              help="SSSOM: mapping_justification (semapv), e.g. semapv:LexicalMatching for dictionary links.")
@click.option("--predicate", type=click.Choice(PREDICATES), default=PREDICATES[0], show_default=True,
              help="SSSOM: predicate_id.")
@click.option("--top-n", type=click.IntRange(1), default=1, show_default=True,
              help="SSSOM: rows per mention (its best N candidates).")
@click.option("--object-prefix", default="", help="SSSOM: prefix for entity ids that have none (e.g. 'MESH:').")
@click.option("--curie-map", metavar="PREFIX=URI,...",
              help="SSSOM: prefix expansions to add or override (others: http://purl.obolibrary.org/obo/P_).")
@config_option
def command(input_path, skip_invalid, output_path, source_format, target_format, types, id_prefix, context_chars,
            documents_path, documents_format, mapping_set_id, license_url, justification, predicate, top_n,
            object_prefix, curie_map):
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
    from ontolink.formats import Problems, resolve_format

    if source_format is None:
        if input_path == "-" or str(input_path).lower().endswith((".jsonl", ".jsonl.gz")):
            if target_format == "mentions":
                raise click.UsageError("reading documents from stdin needs --from")
            source_format = "jsonl"
        else:
            source_format = resolve_format(input_path, None)
    if target_format is None:
        target_format = "mentions" if source_format != "jsonl" else _guess_output(output_path)
        if target_format is None or (source_format == "jsonl" and target_format == "mentions"):
            raise click.UsageError("say the output format with --to (pubtator, bioc-xml, bioc-json, sssom)")
    if (source_format == "jsonl") == (target_format == "mentions"):
        raise click.UsageError("convert reads documents into mentions (--to mentions), or Linked JSONL "
                               f"(--from jsonl) into pubtator/bioc-xml/bioc-json/sssom; not {source_format} to "
                               f"{target_format}")
    if target_format in ("pubtator", "bioc-xml", "bioc-json") and not documents_path:
        raise click.UsageError(f"--to {target_format} needs --documents FILE: the documents the mentions came from")
    problems = Problems(skip_invalid)
    if target_format == "mentions":
        _documents_to_mentions(input_path, source_format, output_path, types, id_prefix, context_chars, problems)
    elif target_format == "sssom":
        _linked_to_sssom(input_path, output_path, skip_invalid, mapping_set_id, license_url, justification,
                         predicate, top_n, object_prefix, curie_map)
    else:
        _linked_to_documents(input_path, output_path, skip_invalid, target_format, documents_path,
                             documents_format, problems)


def _documents_to_mentions(input_path, source_format, output_path, types, id_prefix, context_chars, problems):
    from ontolink.formats import Counted, read_documents
    from ontolink.io import RecordWriter
    from ontolink.steps.convert import document_mentions, parse_id_prefixes

    counter = Counted(read_documents(input_path, source_format, problems))
    kept = {part.strip() for part in types.split(",") if part.strip()} if types else None
    with RecordWriter(output_path) as writer:
        writer.write_all(document_mentions(counter, types=kept, id_prefixes=parse_id_prefixes(id_prefix),
                                           context_characters=context_chars, problems=problems),
                         flush_every=1)  # a document's mentions go downstream as soon as its block is read
    skipped = f"; {problems.skipped} invalid lines or annotations skipped" if problems.skipped else ""
    summary(f"converted {counter.count} documents to {writer.count} mentions{skipped}")


def _linked_records(input_path, skip_invalid, stats):
    from ontolink.io import read_records
    from ontolink.records import validate_linked_mention

    return read_records(input_path, validate=validate_linked_mention, skip_invalid=skip_invalid, stats=stats)


def _linked_to_sssom(input_path, output_path, skip_invalid, mapping_set_id, license_url, justification, predicate,
                     top_n, object_prefix, curie_map):
    from ontolink.formats.sssom import SSSOMWriter, parse_curie_map
    from ontolink.io import ReadStats

    stats = ReadStats()
    with open_output(output_path) as stream:
        writer = SSSOMWriter(stream, mapping_set_id, license_url, justification=justification, predicate=predicate,
                             object_prefix=object_prefix, curie_map=parse_curie_map(curie_map), top_n=top_n)
        for record in _linked_records(input_path, skip_invalid, stats):
            writer.write(record)
        writer.close()
    summary(f"wrote {writer.count} SSSOM mappings; read {stats.summary()}")


def _linked_to_documents(input_path, output_path, skip_invalid, target_format, documents_path, documents_format,
                         problems):
    from ontolink.formats import read_documents
    from ontolink.formats.bioc import BioCJSONWriter, BioCXMLWriter
    from ontolink.formats.pubtator import pubtator_lines
    from ontolink.io import ReadStats, display_name
    from ontolink.steps.convert import bioc_document, linked_documents, pubtator_annotations

    stats = ReadStats()
    documents = read_documents(documents_path, documents_format, problems)
    pairs = linked_documents(documents, _linked_records(input_path, skip_invalid, stats),
                             documents_name=display_name(documents_path))
    count = links = 0
    with open_output(output_path, binary=target_format == "bioc-xml") as stream:
        if target_format == "pubtator":
            for document, linked in pairs:
                stream.write("".join(line + "\n" for line in pubtator_lines(document, pubtator_annotations(linked)))
                             + "\n")
                stream.flush()
                count, links = count + 1, links + len(linked)
        else:
            writer = (BioCXMLWriter if target_format == "bioc-xml" else BioCJSONWriter)(stream)
            for document, linked in pairs:
                writer.write(bioc_document(document, linked))
                count, links = count + 1, links + len(linked)
            writer.close()
    summary(f"wrote {count} documents with {links} linked mentions as {target_format}; read {stats.summary()}")
