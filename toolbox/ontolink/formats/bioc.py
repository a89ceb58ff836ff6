"""BioC XML and BioC JSON, read and written with the `bioc` package's data model.

BioC XML is read with lxml's ``iterparse`` one ``<document>`` at a time, each
element cleared once converted, so memory stays bounded and every error names
the XML line (``bioc.biocxml``'s reader keeps the whole tree and reports no
lines). BioC JSON is either a collection object (read whole: JSON has no line
to resume at) or JSON lines of documents, streamed; both go through
``bioc.biocjson``'s decoder. Writers are ``bioc``'s own.
"""

import json

from bioc import BioCAnnotation, BioCDocument, BioCLocation, BioCPassage

from ontolink.errors import InputError
from ontolink.formats import DOCUMENT_FORMATS, DocumentFormat, top_link
from ontolink.io import display_name, open_input_lines


def _infons(element):
    return {infon.get("key"): infon.text or "" for infon in element.findall("infon")}


def _annotation(element, name):
    annotation = BioCAnnotation()
    annotation.id = element.get("id")
    annotation.infons = _infons(element)
    annotation.text = element.findtext("text") or ""
    for location in element.findall("location"):
        try:
            annotation.add_location(BioCLocation(int(location.get("offset")), int(location.get("length"))))
        except (TypeError, ValueError):
            raise InputError(f"annotation {annotation.id!r}: location needs integer offset and length",
                             name, location.sourceline) from None
    annotation.source = (name, element.sourceline)
    return annotation


def _integer(element, tag, name):
    text = element.findtext(tag)
    try:
        return int(text)
    except (TypeError, ValueError):
        raise InputError(f"<{element.tag}> needs an integer <{tag}>, got {text!r}", name, element.sourceline) from None


def _passage(element, name):
    passage = BioCPassage()
    passage.offset = _integer(element, "offset", name)
    passage.infons = _infons(element)
    passage.text = element.findtext("text")
    for annotation in element.findall("annotation"):
        passage.add_annotation(_annotation(annotation, name))
    sentences = element.findall("sentence")
    if sentences and passage.text is None:  # sentence-level BioC: lay the sentences at their offsets
        text = ""
        for sentence in sentences:
            text = text.ljust(_integer(sentence, "offset", name) - passage.offset) + (sentence.findtext("text") or "")
        passage.text = text
    for sentence in sentences:
        for annotation in sentence.findall("annotation"):
            passage.add_annotation(_annotation(annotation, name))
    passage.text = passage.text or ""
    return passage


def _document(element, name):
    document = BioCDocument()
    document.id = element.findtext("id") or ""
    document.infons = _infons(element)
    for passage in element.findall("passage"):
        document.add_passage(_passage(passage, name))
    for annotation in element.findall("annotation"):
        document.add_annotation(_annotation(annotation, name))
    document.source = (name, element.sourceline)
    return document


def read_bioc_xml(path):
    """Yield the documents of a BioC XML collection; malformed XML stops at its line."""
    from lxml import etree

    name = display_name(path)
    with open_input_lines(path) as lines:
        stream = _LineStream(lines)
        root_checked = False
        try:
            for event, element in etree.iterparse(stream, events=("start", "end"), resolve_entities=False,
                                                  no_network=True, huge_tree=True):
                if not root_checked:
                    root_checked = True
                    if element.tag != "collection":
                        raise InputError(f"not BioC XML: the root element is <{element.tag}>, not <collection>",
                                         name, element.sourceline)
                if event == "end" and element.tag == "document":
                    yield _document(element, name)
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

    def __init__(self, lines):
        self.lines = lines
        self.pending = b""

    def read(self, size=-1):
        while size < 0 or len(self.pending) < size:
            line = next(self.lines, None)
            if line is None:
                break
            self.pending += line
        if size < 0:
            size = len(self.pending)
        data, self.pending = self.pending[:size], self.pending[size:]
        return data


def _json_document(obj, name, line, index):
    from bioc.biocjson.decoder import parse_doc

    if not isinstance(obj, dict) or "passages" not in obj:
        raise InputError(f"document {index}: not a BioC document (no 'passages')", name, line)
    # bioc's decoder insists on every key; fill the ones BioC JSON writers often leave out.
    obj = {"infons": {}, "relations": [], "annotations": [], **obj}
    obj["id"] = str(obj.get("id", ""))
    for passage in obj["passages"]:
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
    document.source = (name, line)
    for annotation in document.annotations + [a for p in document.passages for a in p.annotations]:
        annotation.source = (name, line)
    return document


def read_bioc_json(path, problems):
    """Yield the documents of a BioC JSON collection or of BioC JSON lines (one document each)."""
    name = display_name(path)
    with open_input_lines(path) as lines:
        first = b""
        for first in lines:
            if first.strip():
                break
        if not first.strip():
            return
        try:
            obj = json.loads(first.decode("utf-8-sig"))
            collection = False
        except ValueError:  # not one document per line: the whole file is one collection object
            collection = True
        if collection:
            text = first + b"".join(lines)
            try:
                obj = json.loads(text.decode("utf-8-sig"))
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
                yield _json_document(document, name, 1, index)
            return
        yield _json_document(obj, name, 1, 1)
        for number, raw in enumerate(lines, 2):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw.decode("utf-8"))
            except ValueError as error:
                problems.report(f"not valid JSON: {error}", name, number)
                continue
            yield _json_document(obj, name, number, number)


class BioCXMLWriter:
    """Streams documents into one BioC XML collection (``bioc.biocxml``'s writer)."""

    def __init__(self, stream, source="ontolink"):
        from bioc import BioCCollection
        from bioc.biocxml import BioCXMLDocumentWriter

        self._writer = BioCXMLDocumentWriter(stream, encoding="UTF-8")
        collection = BioCCollection()
        collection.source = source
        collection.date = ""
        collection.key = "ontolink.key"
        self._writer.write_collection_info(collection)

    def write(self, document, links=None):
        """``document`` as is, or (with ``links``) its copy annotated with its Linked mentions."""
        self._writer.write_document(document if links is None else bioc_document(document, links))

    def close(self):
        self._writer.close()


class BioCJSONWriter:
    """Streams documents into one BioC JSON collection object, a document at a time."""

    def __init__(self, stream, source="ontolink"):
        self.stream = stream
        self.count = 0
        header = {"source": source, "date": "", "key": "ontolink.key", "infons": {}}
        self.stream.write(json.dumps(header, ensure_ascii=False)[:-1] + ', "documents": [\n')

    def write(self, document, links=None):
        """``document`` as is, or (with ``links``) its copy annotated with its Linked mentions."""
        from bioc.biocjson import toJSON

        if links is not None:
            document = bioc_document(document, links)
        self.stream.write((",\n" if self.count else "") + json.dumps(toJSON(document), ensure_ascii=False))
        self.count += 1
        self.stream.flush()

    def close(self):
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

    def read(self, path, problems):
        return read_bioc_xml(path)

    def writer(self, stream, **options):
        return BioCXMLWriter(stream)


@DOCUMENT_FORMATS.register("bioc-json")
class BioCJSONFormat(DocumentFormat):
    summary = "BioC JSON: a collection object, or JSON lines of one document each"
    suffixes = (".json",)

    def read(self, path, problems):
        return read_bioc_json(path, problems)

    def writer(self, stream, **options):
        return BioCJSONWriter(stream)
