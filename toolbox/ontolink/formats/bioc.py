"""BioC XML and BioC JSON, read and written with the `bioc` package's data model.

BioC XML is read with lxml's ``iterparse`` one ``<document>`` at a time, each
element cleared once converted, so memory stays bounded and every error names
the XML line (``bioc.biocxml``'s reader keeps the whole tree and reports no
lines). BioC JSON is either a collection object (read whole: JSON has no line
to resume at) or JSON lines of documents, streamed; both go through
``bioc.biocjson``'s decoder. Writers are ``bioc``'s own.
"""

from __future__ import annotations

from collections.abc import Iterator
import json
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
import re

from bioc import BioCAnnotation, BioCDocument, BioCLocation, BioCPassage

from ontolink.core.errors import InputError
from ontolink.formats import DOCUMENT_FORMATS, DocumentFormat, top_link
from ontolink.core.io import (MAX_LINE_BYTES_VARIABLE, OverlongLine, display_name, loads, max_line_bytes,
                              open_input_lines)

if TYPE_CHECKING:
    from ontolink.formats import DocumentWriter, Problems


_ENTITY_CHARACTERS = 1 << 20  # the most text one entity reference may stand for


class _XMLSource:
    """What the converters of one BioC XML file share: its name for messages, and its internal entities
    (``<!ENTITY deg "&#176;">``), whose references are replaced here, not by the parser: resolving them
    in libxml2 with ``huge_tree`` has no bound on nested expansion (a "billion laughs" file)."""

    def __init__(self, name):
        self.name = name
        self.entities = None

    def read_entities(self, element):
        """The internal DTD's entities, read once at the root element (the DTD is parsed before it)."""
        dtd = element.getroottree().docinfo.internalDTD
        declared = {entity.name: entity.content or "" for entity in dtd.iterentities()} if dtd is not None else {}
        self.entities = {}
        for entity_name in declared:
            self.entities[entity_name] = self._expand(entity_name, declared, (), element.sourceline)

    def _expand(self, entity_name, declared, outer, line):
        import re

        if entity_name in outer:
            raise InputError(f"entity &{entity_name}; refers to itself", self.name, line)
        parts = []
        size = 0
        for piece in re.split(r"(&[A-Za-z_][\w.-]*;)", declared[entity_name]):
            inner = piece[1:-1] if piece.startswith("&") and piece.endswith(";") else None
            if inner is not None and inner in declared:
                piece = self._expand(inner, declared, outer + (entity_name,), line)
            parts.append(piece)
            size += len(piece)
            if size > _ENTITY_CHARACTERS:
                raise InputError(f"entity &{entity_name}; expands past {_ENTITY_CHARACTERS:,} characters",
                                 self.name, line)
        return "".join(parts)

    def text(self, element):
        """An element's text with its entity references replaced (an undeclared one is kept as written)."""
        from lxml import etree

        if element is None:
            return None
        parts = [element.text or ""]
        for child in element:
            if isinstance(child, etree._Entity):
                parts.append((self.entities or {}).get(child.name, child.text))
            parts.append(child.tail or "")
        return "".join(parts)

    def findtext(self, element, tag):
        return self.text(element.find(tag))

    def offset(self, value, element, what):
        """An offset or length inside the document text: a whole number from 0 to the line limit (an output
        line holds the text laid out up to it)."""
        limit = max_line_bytes()
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise InputError(f"<{element.tag}> needs an integer {what}, got {value!r}", self.name,
                             element.sourceline) from None
        if not 0 <= number <= limit:
            raise InputError(f"<{element.tag}> {what} {number:,} is outside 0 to {limit:,} characters "
                             f"(set {MAX_LINE_BYTES_VARIABLE} to raise the limit)", self.name, element.sourceline)
        return number


def _infons(element, source):
    return {infon.get("key"): source.text(infon) or "" for infon in element.findall("infon")}


def _annotation(element, source):
    annotation = BioCAnnotation()
    annotation.id = element.get("id")
    annotation.infons = _infons(element, source)
    annotation.text = source.findtext(element, "text") or ""
    for location in element.findall("location"):
        if location.get("offset") is None or location.get("length") is None:
            raise InputError(f"annotation {annotation.id!r}: location needs integer offset and length",
                             source.name, location.sourceline)
        annotation.add_location(BioCLocation(source.offset(location.get("offset"), location, "offset"),
                                             source.offset(location.get("length"), location, "length")))
    annotation.source = (source.name, element.sourceline)
    return annotation


def _integer(element, tag, source):
    return source.offset(source.findtext(element, tag), element, f"<{tag}>")


def _passage(element, source):
    passage = BioCPassage()
    passage.offset = _integer(element, "offset", source)
    passage.infons = _infons(element, source)
    passage.text = source.findtext(element, "text")
    for annotation in element.findall("annotation"):
        passage.add_annotation(_annotation(annotation, source))
    sentences = element.findall("sentence")
    if sentences and passage.text is None:  # sentence-level BioC: lay the sentences at their offsets
        text = ""
        for sentence in sentences:
            text = text.ljust(_integer(sentence, "offset", source) - passage.offset) + (
                source.findtext(sentence, "text") or "")
        passage.text = text
    for sentence in sentences:
        for annotation in sentence.findall("annotation"):
            passage.add_annotation(_annotation(annotation, source))
    passage.text = passage.text or ""
    return passage


def _document(element, source):
    document = BioCDocument()
    document.id = source.findtext(element, "id") or ""
    document.infons = _infons(element, source)
    for passage in element.findall("passage"):
        document.add_passage(_passage(passage, source))
    for annotation in element.findall("annotation"):
        document.add_annotation(_annotation(annotation, source))
    document.source = (source.name, element.sourceline)
    return document


def read_bioc_xml(path):
    """Yield the documents of a BioC XML collection; malformed XML stops at its line."""
    from lxml import etree

    name = display_name(path)
    source = _XMLSource(name)
    with open_input_lines(path) as lines:
        stream = _LineStream(lines, name)
        root_checked = False
        try:
            for event, element in etree.iterparse(stream, events=("start", "end"), resolve_entities=False,
                                                  no_network=True, huge_tree=True):
                if not root_checked:
                    root_checked = True
                    if element.tag != "collection":
                        raise InputError(f"not BioC XML: the root element is <{element.tag}>, not <collection>",
                                         name, element.sourceline)
                    source.read_entities(element)
                if event == "end" and element.tag == "document":
                    yield _document(element, source)
                    element.clear()
                    parent = element.getparent()
                    while parent is not None and element.getprevious() is not None:
                        del parent[0]  # drop documents already converted: bounded memory
        except etree.XMLSyntaxError as error:
            line = error.position[0] if error.position else None
            raise InputError(f"not valid XML: {error.msg}", name, line) from None
        if not root_checked:
            raise InputError("not BioC XML: the file is empty", name)


class _LineStream:
    """A file-like ``read`` over an iterator of byte lines (stdin and .gz included)."""

    def __init__(self, lines, name):
        self.lines = lines
        self.name = name
        self.number = 0
        self.pending = b""
        self.position = 0

    def read(self, size=-1):
        # pending[position:] is what is left: each byte is copied a bounded number of times, however long
        # the line (BioC XML is often one line)
        while size < 0 or len(self.pending) - self.position < size:
            line = next(self.lines, None)
            if line is None:
                break
            self.pending = self.pending[self.position:] + _checked(line, self.name, self.number + 1)
            self.position = 0
            self.number += 1
        end = len(self.pending) if size < 0 else self.position + size
        data = self.pending[self.position:end]
        self.position += len(data)
        return data


def _checked(line, name, number):
    if isinstance(line, OverlongLine):
        raise InputError(line.message(), name, number)
    return line


def _checked_offsets(document, name, line):
    limit = max_line_bytes()
    spans = [("passage offset", passage.offset) for passage in document.passages]
    for annotation in document.annotations + [a for p in document.passages for a in p.annotations]:
        for location in annotation.locations:
            spans += [("annotation offset", location.offset), ("annotation length", location.length)]
    for what, value in spans:
        if not isinstance(value, int) or not 0 <= value <= limit:
            raise InputError(f"document {document.id}: {what} {value!r} is outside 0 to {limit:,} characters "
                             f"(set {MAX_LINE_BYTES_VARIABLE} to raise the limit)", name, line)


def _check_objects(obj, field, where, name, line):
    """``obj[field]`` must be a list of JSON objects (a string or a number there is bad data, not a crash)."""
    value = obj.get(field, [])
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise InputError(f"{where} {field!r} must be a list of objects", name, line)


def _json_document(obj, name, line, index):
    from bioc.biocjson.decoder import parse_doc

    if not isinstance(obj, dict) or "passages" not in obj:
        raise InputError(f"document {index}: not a BioC document (no 'passages')", name, line)
    # bioc's decoder insists on every key; fill the ones BioC JSON writers often leave out.
    obj = {"infons": {}, "relations": [], "annotations": [], **obj}
    obj["id"] = str(obj.get("id", ""))
    where = f"document {obj['id'] or index}"
    _check_objects(obj, "passages", where, name, line)
    _check_objects(obj, "annotations", where, name, line)
    for passage in obj["passages"]:
        _check_objects(passage, "annotations", f"{where}: a passage's", name, line)
        passage.setdefault("infons", {})
        for key in ("sentences", "annotations", "relations"):
            passage.setdefault(key, [])
        for annotation in passage["annotations"] + obj["annotations"]:
            annotation.setdefault("infons", {})
            annotation.setdefault("text", "")
            annotation.setdefault("id", None)
            annotation.setdefault("locations", [])
    try:
        document = parse_doc(obj)
    except (KeyError, TypeError, ValueError) as error:
        raise InputError(f"document {obj['id'] or index}: malformed BioC JSON ({type(error).__name__}: {error})",
                         name, line) from None
    _checked_offsets(document, name, line)
    document.source = (name, line)
    for annotation in document.annotations + [a for p in document.passages for a in p.annotations]:
        annotation.source = (name, line)
    return document


def read_bioc_json(path, problems):
    """Yield the documents of a BioC JSON collection or of BioC JSON lines (one document each)."""
    name = display_name(path)
    with open_input_lines(path) as lines:
        first = b""
        for number, first in enumerate(lines, 1):
            if _checked(first, name, number).strip():
                break
        if not first.strip():
            return
        try:
            obj = loads(first.decode("utf-8-sig"))
            collection = False
        except ValueError:  # not one document per line: the whole file is one collection object
            collection = True
        if collection:
            text = first + b"".join(_checked(raw, name, number) for number, raw in enumerate(lines, number + 1))
            try:
                obj = loads(text.decode("utf-8-sig"))
            except ValueError as error:
                line = getattr(error, "lineno", None)
                raise InputError(f"not valid JSON: {getattr(error, 'msg', error)}", name, line) from None
            if not isinstance(obj, dict) or not isinstance(obj.get("documents"), list):
                raise InputError("not a BioC JSON collection: no 'documents' list", name)
            for index, document in enumerate(obj["documents"], 1):
                yield _json_document(document, name, None, index)
            return
        if "documents" in obj and "passages" not in obj:  # a collection on one line
            for index, document in enumerate(obj["documents"], 1):
                yield _json_document(document, name, number, index)
            return
        yield _json_document(obj, name, number, 1)
        for number, raw in enumerate(lines, number + 1):
            if isinstance(raw, OverlongLine):
                problems.report(raw.message(), name, number)
                continue
            if not raw.strip():
                continue
            try:
                obj = loads(raw.decode("utf-8"))
            except ValueError as error:
                problems.report(f"not valid JSON: {error}", name, number)
                continue
            yield _json_document(obj, name, number, number)


class BioCXMLWriter:
    """Streams documents into one BioC XML collection (``bioc.biocxml``'s writer)."""

    def __init__(self, stream: IO[Any], source: str = "ontolink") -> None:
        from bioc import BioCCollection
        from bioc.biocxml import BioCXMLDocumentWriter

        self._writer = BioCXMLDocumentWriter(stream, encoding="UTF-8")
        collection = BioCCollection()
        collection.source = source
        collection.date = ""
        collection.key = "ontolink.key"
        self._writer.write_collection_info(collection)

    def write(self, document: BioCDocument, links: list[dict[str, Any]] | None = None) -> None:
        """``document`` as is, or (with ``links``) its copy annotated with its Linked mentions; a string XML
        cannot carry (a control character) is refused (``InputError`` naming where it is) before anything of
        the document is written."""
        document = document if links is None else bioc_document(document, links)
        _refuse_what_xml_cannot_carry(document)
        try:
            self._writer.write_document(document)
        except ValueError as error:  # lxml's "All strings must be XML compatible", where the check above missed
            raise InputError(f"document {document.id!r} cannot be written as XML ({error})") from None

    def close(self) -> None:
        self._writer.close()


# What XML 1.0 can carry (its Char production): a tab, line ends, and no other control character or surrogate
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _refuse_what_xml_cannot_carry(document):
    def check(value, where):
        found = _NOT_XML.search(value) if isinstance(value, str) else None
        if found:
            raise InputError(f"document {document.id!r}: {where} holds U+{ord(found.group()):04X} at character "
                             f"{found.start() + 1}, which XML cannot carry")

    def check_infons(infons, where):
        for key, value in infons.items():
            check(key, f"{where} an infon name")
            check(value, f"{where} infon {key!r}")

    check(document.id, "its id")
    check_infons(document.infons, "its")
    annotations = list(document.annotations)
    for number, passage in enumerate(document.passages, 1):
        check(passage.text, f"the text of passage {number} (offset {passage.offset})")
        check_infons(passage.infons, f"passage {number}'s")
        annotations.extend(passage.annotations)
    for annotation in annotations:
        where = f"annotation {annotation.id} ({annotation.text!r})"
        check(annotation.id, f"{where}: its id")
        check(annotation.text, f"{where}: its text")
        check_infons(annotation.infons, f"{where}:")


class BioCJSONWriter:
    """Streams documents into one BioC JSON collection object, a document at a time."""

    def __init__(self, stream: IO[Any], source: str = "ontolink") -> None:
        self.stream = stream
        self.count = 0
        header = {"source": source, "date": "", "key": "ontolink.key", "infons": {}}
        self.stream.write(json.dumps(header, ensure_ascii=False)[:-1] + ', "documents": [\n')

    def write(self, document: BioCDocument, links: list[dict[str, Any]] | None = None) -> None:
        """``document`` as is, or (with ``links``) its copy annotated with its Linked mentions."""
        from bioc.biocjson import toJSON

        if links is not None:
            document = bioc_document(document, links)
        self.stream.write((",\n" if self.count else "") + json.dumps(toJSON(document), ensure_ascii=False))
        self.count += 1
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n]}\n")
        self.stream.flush()


def bioc_document(document, links):
    """A copy of ``document`` (same id, infons, passages and text) whose annotations are ``links``."""
    copy = BioCDocument()
    copy.id = document.id
    copy.infons = dict(document.infons)
    passages = []
    for passage in sorted(document.passages, key=lambda passage: passage.offset):
        new = BioCPassage()
        new.offset, new.text, new.infons = passage.offset, passage.text, dict(passage.infons)
        copy.add_passage(new)
        passages.append(new)
    for number, record in enumerate(links, 1):
        annotation = BioCAnnotation()
        annotation.id = str(number)
        annotation.text = record["mention"]
        annotation.add_location(BioCLocation(record["start"], record["end"] - record["start"]))
        if "infons" in record and isinstance(record["infons"], dict):  # the document's own annotation, kept
            annotation.infons = dict(record["infons"])
            home = [passage for passage in passages if passage.offset <= record["start"]]
            (home[-1] if home else copy).add_annotation(annotation)
            continue
        annotation.infons["type"] = record.get("type") or "Entity"
        best = top_link(record)
        annotation.infons["identifier"] = best[0] if best else "-1"
        if best:
            annotation.infons["name"] = best[1]
            if best[2] is not None:
                annotation.infons["score"] = f"{best[2]:.6g}"
        if record.get("nil"):
            annotation.infons["nil"] = "true"
        home = [passage for passage in passages if passage.offset <= record["start"]]
        (home[-1] if home else copy).add_annotation(annotation)
    return copy


@DOCUMENT_FORMATS.register("bioc-xml")
class BioCXMLFormat(DocumentFormat):
    summary = "BioC XML: a <collection> of <document>s, passages and annotations"
    suffixes = (".xml",)
    binary = True

    def read(self, path: str | Path, problems: Problems) -> Iterator[BioCDocument]:
        return read_bioc_xml(path)

    def writer(self, stream: IO[Any], **options: Any) -> DocumentWriter:
        return BioCXMLWriter(stream)


@DOCUMENT_FORMATS.register("bioc-json")
class BioCJSONFormat(DocumentFormat):
    summary = "BioC JSON: a collection object, or JSON lines of one document each"
    suffixes = (".json",)

    def read(self, path: str | Path, problems: Problems) -> Iterator[BioCDocument]:
        return read_bioc_json(path, problems)

    def writer(self, stream: IO[Any], **options: Any) -> DocumentWriter:
        return BioCJSONWriter(stream)
