"""`ontolink convert`: literature documents to Mention records, and Linked mentions back.

Documents (PubTator, BioC XML/JSON, plain text; see ontolink.formats) give one
Mention record per annotation, its context taken from the document text. The
way back puts the top candidate of each Linked mention into the original
documents as annotations at the same offsets, the text untouched.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any

from ontolink.core.errors import InputError, UsageError
from ontolink.formats import (Problems, document_format, document_text, source_of, writer_names, DOCUMENT_FORMATS,
    resolve_format, Counted, read_documents)
from ontolink.core.io import RecordWriter, plural, warn, ReadStats, display_name, open_output, read_records
from ontolink.core.records import validate_linked_mention
from ontolink.formats.sssom import AUTO, parse_curie_map
from ontolink.formats.options import ConvertOptions

if TYPE_CHECKING:
    from bioc import BioCDocument

MENTIONS = "mentions"  # convert's target for documents: Mention JSONL
NO_ID = {"", "-", "-1"}
# tmVar variant ids (BioRED, PubTator) use "|" inside one id: "c|DEL|4153|A", "p|SUB|V|1763|M".
_TMVAR_ID = re.compile(r"[a-z]\|[A-Z]{2,}\|")
# Infon keys that hold an annotation's ids in BioC files seen in the wild (PubTator3, BC5CDR, NCBI).
ID_INFONS = ("identifier", "Identifier", "MESH", "NCBI Gene", "ID", "id")


def parse_id_prefixes(text: str | None) -> dict[str, str]:
    """``--id-prefix``: "MESH:" for every type, or "Disease=MESH:,Gene=NCBIGene:" per type."""
    prefixes = {}
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        kind, equals, prefix = part.rpartition("=")
        prefixes[kind.strip() if equals else ""] = prefix.strip()
    return prefixes


class IdRewriter:
    """``--strip-prefix`` and ``--id-prefix`` applied to an id of a mention of some type: the first removes a
    prefix ("MESH:" or "MESH": D015738 for MESH:D015738), the second gives a bare id (no ``:``) one. Both are
    "PREFIX" for every type or "TYPE=PREFIX,..." per type; stripping comes first, so the two together replace a
    prefix. The same options rewrite the gold ids read from documents and the ids written into them: a corpus
    that writes its ids bare is read with ``--id-prefix MESH:`` and written back with ``--strip-prefix MESH:``."""

    def __init__(self, id_prefix: str | None = None, strip_prefix: str | None = None) -> None:
        self.adds = parse_id_prefixes(id_prefix)
        self.strips = {kind: prefix if prefix.endswith((":", "_", "/", "#")) else prefix + ":"
                       for kind, prefix in parse_id_prefixes(strip_prefix).items() if prefix}
        self.changed = 0  # ids rewritten (for the summary)

    def __bool__(self) -> bool:
        return any(self.adds.values()) or bool(self.strips)

    def __call__(self, entity_id: str, kind: str | None = "") -> str:
        kind = kind or ""
        rewritten = entity_id
        strip = self.strips.get(kind, self.strips.get(""))
        if strip and rewritten.startswith(strip) and len(rewritten) > len(strip):
            rewritten = rewritten[len(strip):]
        add = self.adds.get(kind, self.adds.get("", ""))
        if add and ":" not in rewritten:
            rewritten = add + rewritten
        if rewritten != entity_id:
            self.changed += 1
        return rewritten

    def record(self, record: dict[str, Any]) -> dict[str, Any]:
        """A Linked mention with its candidates' ids rewritten (a copy); ``changed`` counts it once when one was."""
        candidates = record.get("candidates")
        if not isinstance(candidates, list):
            return record
        kind = record.get("type") if isinstance(record.get("type"), str) else ""
        before = self.changed
        rewritten = [{**candidate, "id": self(candidate["id"], kind)}
                     if isinstance(candidate, dict) and isinstance(candidate.get("id"), str) else candidate
                     for candidate in candidates]
        self.changed = before + (self.changed > before)
        return {**record, "candidates": rewritten}


def parse_ids(value: str | None, prefix: str | IdRewriter = "") -> list[str]:
    """Ids of one annotation: ``|``, ``,`` or ``;`` separated (a tmVar id keeps its ``|``);
    ``-1``, ``-`` and empty mean none.
    A bare id (no ``:``) gets ``prefix``; an ``IdRewriter`` rewrites each id (its type already chosen)."""
    ids = []
    for part in re.split(r"[,;]" if _TMVAR_ID.match(value or "") else r"[|,;]", value or ""):
        part = part.strip()
        if part in NO_ID:
            continue
        if isinstance(prefix, IdRewriter):
            part = prefix(part)
        elif prefix and ":" not in part:
            part = prefix + part
        if part not in ids:
            ids.append(part)
    return ids


def annotation_ids(infons):
    """The raw id string of an annotation, or None when it has no id field at all."""
    for key in ID_INFONS:
        if key in infons:
            return infons[key] or ""
    return None


def _annotations(document):
    found = list(document.annotations)
    for passage in document.passages:
        found.extend(passage.annotations)
    return found


def _span(annotation):
    starts = [location.offset for location in annotation.locations]
    ends = [location.offset + location.length for location in annotation.locations]
    return min(starts), max(ends)


def document_mentions(documents: Iterable[BioCDocument], types: Collection[str] | None = None,
                      id_prefixes: dict[str, str] | None = None, context_characters: int = ConvertOptions.context_chars,
                      problems: Problems | None = None, ids: IdRewriter | None = None) -> Iterator[dict[str, Any]]:
    """Yield one Mention record per annotation (of ``types`` when given), in document order.

    ``id`` is ``DOC:START-END``; context is the document text around the span
    (all of it, or ``context_characters`` on each side). An annotation whose
    offsets fall outside the text or whose text differs from the text at its
    offsets is reported through ``problems`` with its file and line. Gold ids: a bare one gets the prefix
    ``id_prefixes`` gives its type, or ``ids`` rewrites each (``IdRewriter``: --id-prefix and --strip-prefix).
    """
    problems = problems if problems is not None else Problems()
    id_prefixes = id_prefixes or {}
    for document in documents:
        text = document_text(document)
        seen: dict[Any, Any] = {}
        entries = []
        for annotation in _annotations(document):
            kind = annotation.infons.get("type", "")
            if types and kind not in types:
                continue
            name, line = source_of(annotation, source_of(document)[0])
            if not annotation.locations:
                problems.report(f"document {document.id}: annotation {annotation.id!r} has no location", name, line)
                continue
            start, end = _span(annotation)
            if start < 0 or end > len(text) or start >= end:
                problems.report(f"document {document.id}: offsets {start}-{end} " + (
                    "are an empty span" if 0 <= start == end <= len(text) else
                    f"are outside its text ({len(text)} characters)"), name, line)
                continue
            span = text[start:end]
            if len(annotation.locations) == 1 and span != annotation.text:
                problems.report(f"document {document.id}: mention text {annotation.text!r} does not match the "
                                f"text at offsets {start}-{end} ({span!r})", name, line)
                continue
            mention = span if len(annotation.locations) == 1 else annotation.text
            if not mention.strip():
                problems.report(f"document {document.id}: empty mention at offsets {start}-{end}", name, line)
                continue
            entries.append((start, end, mention, kind, annotation))
        for start, end, mention, kind, annotation in sorted(entries, key=lambda entry: entry[:2]):
            mention_id = f"{document.id}:{start}-{end}"
            seen[mention_id] = seen.get(mention_id, 0) + 1
            if seen[mention_id] > 1:  # the same span annotated twice (two types or two ids)
                mention_id += f"#{seen[mention_id]}"
            left, right = text[:start], text[end:]
            if context_characters:
                left, right = left[-context_characters:], right[:context_characters]
            record = {"id": mention_id, "doc_id": document.id, "start": start, "end": end, "mention": mention,
                      "context_left": left, "context_right": right, "type": kind}
            raw_ids = annotation_ids(annotation.infons)
            if raw_ids is not None:
                record["gold"] = [ids(entity_id, kind) for entity_id in parse_ids(raw_ids)] if ids else \
                    parse_ids(raw_ids, id_prefixes.get(kind, id_prefixes.get("", "")))
            yield record


def linked_documents(documents: Iterable[BioCDocument], records: Iterable[dict[str, Any]],
                     documents_name: str = "documents", records_name: str | None = None,
                     stats: Any = None) -> Iterator[tuple[BioCDocument, list[dict[str, Any]]]]:
    """Pair each document with the Linked mentions that name it (``doc_id``), in order.

    Both streams are in document order (convert, annotate and link keep it),
    so this is a merge in bounded memory. A mention whose span is outside its
    document or whose text differs from the document's is refused, named with ``records_name`` and the line
    ``stats`` (the records' ``ReadStats``) last read, which is the mention's.
    """
    def refused(message):
        return InputError(message, records_name, getattr(stats, "line", None))

    records = iter(records)
    pending = next(records, None)
    for document in documents:
        text = document_text(document)
        links = []
        while pending is not None and str(pending.get("doc_id")) == document.id:
            start, end = pending.get("start"), pending.get("end")
            if not isinstance(start, int) or not isinstance(end, int) or not 0 <= start < end <= len(text):
                raise refused(f"mention {pending['id']!r}: start/end {start}-{end} are not a span of document "
                              f"{document.id} ({len(text)} characters)")
            if text[start:end] != pending["mention"]:
                raise refused(f"mention {pending['id']!r}: text {pending['mention']!r} differs from document "
                              f"{document.id} at {start}-{end} ({text[start:end]!r})")
            links.append(pending)
            pending = next(records, None)
        yield document, links
    if pending is not None:
        raise refused(f"mention {pending['id']!r} names document {pending.get('doc_id')!r}, which is not in "
                      f"{documents_name} (or comes out of their order)")


def own_annotations(document):
    """The document's own annotations as Linked-mention-like records (their id the one candidate, their infons
    kept), for ``keep_annotations``; an annotation without a location is left out."""
    text = document_text(document)
    for number, annotation in enumerate(_annotations(document), 1):
        if not annotation.locations:
            continue
        start, end = _span(annotation)
        identifier = annotation_ids(annotation.infons)
        yield {"id": f"{document.id}:own-{number}", "start": start, "end": end,
               "mention": annotation.text if annotation.text is not None else text[start:end],
               "type": annotation.infons.get("type") or "Entity",
               "candidates": [{"id": identifier, "name": ""}] if identifier else [],
               "infons": dict(annotation.infons)}


def with_own_annotations(document, links):
    """``links`` and the document's own annotations, by offset; an own annotation that a link repeats (same
    span, type and id) is written once."""
    def key(record):
        best = (record.get("candidates") or [{}])[0].get("id")
        return record["start"], record["end"], record.get("type") or "Entity", best

    linked = {key(record) for record in links}
    merged = list(links) + [record for record in own_annotations(document) if key(record) not in linked]
    return sorted(merged, key=lambda record: (record["start"], record["end"]))


def write_linked(records: Iterable[dict[str, Any]], target_format: str, stream: IO[Any],
                 documents: Iterable[BioCDocument] | None = None, documents_name: str = "documents",
                 keep_annotations: bool = ConvertOptions.keep_annotations, records_name: str | None = None,
                 stats: Any = None, **options: Any) -> tuple[int, int]:
    """Write Linked mentions in the document format ``target_format``; (documents, mentions) written.

    A writer that puts links back into their documents gets each of ``documents`` with its
    mentions (see ``linked_documents``; ``keep_annotations``: with the documents' own annotations too);
    a mapping table gets the mentions one by one.
    ``options`` go to the format's writer (SSSOM's mapping_set_id, license_url, ...)."""
    fmt = document_format(target_format, "writer")
    writer = fmt.writer(stream, **options)
    count = links = 0
    if fmt.needs_documents:
        if documents is None:
            raise InputError(f"the {target_format} format writes the documents the mentions are in: give them")
        for document, linked in linked_documents(documents, records, documents_name, records_name, stats):
            try:
                writer.write(document, with_own_annotations(document, linked) if keep_annotations else linked)
            except InputError as error:  # a mention's field is the linked records' fault, the rest the documents'
                raise _named(error, records_name if str(error).startswith("mention ") else documents_name) from None
            count, links = count + 1, links + len(linked)
    else:
        for record in records:
            try:
                writer.write(None, [record])
            except InputError as error:  # named with the record's file, line and mention
                mention = str(error).startswith("mention ")
                raise _named(error, records_name, getattr(stats, "line", None),
                             "" if mention else f"mention {record.get('id')!r}: ") from None
            links += 1
    writer.close()
    return count, links


def target_names() -> list[str]:
    """What convert writes: mentions (from documents), then the document formats with a writer."""
    return [MENTIONS] + writer_names()


def _guess_output(path):
    if str(path).lower().endswith((".jsonl", ".jsonl.gz")):
        return MENTIONS
    return DOCUMENT_FORMATS.guess(path, "writer")


def _formats(options: ConvertOptions) -> tuple[str, str]:
    """(source format, target format) of a conversion: the options' own, or guessed from the file names."""
    source_format, target_format = options.source_format, options.target_format
    if source_format is None:
        if options.input_path == "-" or str(options.input_path).lower().endswith((".jsonl", ".jsonl.gz")):
            if target_format == MENTIONS:
                raise UsageError(f"reading documents from {'stdin' if options.input_path == '-' else 'a .jsonl file'}"
                                 " needs --from (jsonl documents, or the format they are in)")
            source_format = "jsonl"
        else:
            source_format = resolve_format(options.input_path, None)
    if target_format is None:
        target_format = MENTIONS if source_format != "jsonl" else _guess_output(options.output_path)
        if target_format is None or (source_format == "jsonl" and target_format == MENTIONS):
            raise UsageError(f"say the output format with --to ({', '.join(target_names()[1:])})")
    if (source_format == "jsonl") == (target_format == MENTIONS):
        raise UsageError(f"convert reads documents into mentions (--to {MENTIONS}), or Linked JSONL "
                         f"(--from jsonl) into {'/'.join(target_names()[1:])}; not {source_format} to "
                         f"{target_format}")
    return source_format, target_format


def convert_files(options: ConvertOptions) -> None:
    """`ontolink convert`: documents to Mention JSONL, or Linked JSONL to a document format, from
    ``options.input_path`` to ``options.output_path``, with a one-line summary on stderr."""
    source_format, target_format = _formats(options)
    needs_documents = target_format != MENTIONS and DOCUMENT_FORMATS.get(target_format).needs_documents
    if options.keep_annotations and not needs_documents:
        raise UsageError("--keep-annotations applies to --to pubtator, bioc-xml or bioc-json (with --documents)")
    thresholds = [name for name, value in (("--exact-min", options.exact_min), ("--close-min", options.close_min))
                  if value is not None]
    if thresholds and (target_format != "sssom" or options.predicate != AUTO):
        raise UsageError(f"{' and '.join(thresholds)} decide SSSOM's predicate: they apply with --to sssom and "
                         "--predicate auto")
    if needs_documents and not options.documents_path:
        raise UsageError(f"--to {target_format} needs --documents FILE: the documents the mentions came from")
    problems = Problems(options.skip_invalid)
    if target_format == MENTIONS:
        _documents_to_mentions(options, source_format, problems)
    else:
        _linked_to_format(options, target_format, options.documents_path if needs_documents else None, problems)


def _documents_to_mentions(options: ConvertOptions, source_format: str, problems: Problems) -> None:
    counter = Counted(read_documents(options.input_path, source_format, problems))
    kept = {part.strip() for part in options.types.split(",") if part.strip()} if options.types else None
    ids = IdRewriter(options.id_prefix, options.strip_prefix)
    with RecordWriter(options.output_path) as writer:
        writer.write_all(document_mentions(counter, types=kept, context_characters=options.context_chars,
                                           problems=problems, ids=ids),
                         flush_every=1)  # a document's mentions go downstream as soon as its block is read
    skipped = f"; {problems.skipped} invalid lines or annotations skipped" if problems.skipped else ""
    warn(f"converted {plural(counter.count, 'document')} to {plural(writer.count, 'mention')}{skipped}"
         f"{_rewritten(ids, 'gold id')}")


def _linked_to_format(options: ConvertOptions, target_format: str, documents_path: str | None,
                      problems: Problems) -> None:
    writer_options = {"mapping_set_id": options.mapping_set_id, "license_url": options.license_url,
                      "justification": options.justification, "predicate": options.predicate,
                      "top_n": options.top_n, "object_prefix": options.object_prefix,
                      "curie_map": parse_curie_map(options.curie_map), "exact_min": options.exact_min,
                      "close_min": options.close_min}
    stats = ReadStats()
    records = read_records(options.input_path, validate=validate_linked_mention, skip_invalid=options.skip_invalid,
                           stats=stats)
    ids = IdRewriter(options.id_prefix, options.strip_prefix)
    if ids:  # the ids written as the corpus writes them (its own annotations, --keep-annotations, are left as read)
        records = map(ids.record, records)
    documents = read_documents(documents_path, options.documents_format, problems) if documents_path else None
    with open_output(options.output_path, binary=DOCUMENT_FORMATS.get(target_format).binary) as stream:
        count, links = write_linked(records, target_format, stream, documents=documents,
                                    documents_name=display_name(documents_path) if documents_path else "documents",
                                    keep_annotations=options.keep_annotations,
                                    records_name=display_name(options.input_path), stats=stats, **writer_options)
    into = f"{plural(count, 'document')} with " if documents is not None else ""
    warn(f"wrote {into}{plural(links, 'linked mention')} as {target_format}"
         f"{_rewritten(ids, 'linked mention')}; "
         f"read {stats.summary()}")


def _rewritten(ids: IdRewriter, what: str) -> str:
    """The summary's account of --id-prefix / --strip-prefix: how many ids they changed."""
    return f"; ids of {plural(ids.changed, what)} rewritten (--id-prefix/--strip-prefix)" if ids else ""


def _named(error: InputError, path: str | None, line: int | None = None, prefix: str = "") -> InputError:
    """A writer's refusal of a record, named with the file (and line) it came from, unless it names one."""
    if error.path is not None or path is None:
        return error
    return InputError(prefix + str(error), path, line)
