"""PubTator: ``PMID|t|title``, ``PMID|a|abstract``, then tab-separated annotation lines
``PMID start end text type ids [more]`` and relation lines; a blank line ends a document.

Read by our own line parser rather than ``bioc.pubtator``: that one prints
unparseable lines to stdout without a line number, strips text, and writes a
trailing tab after the id column, so neither errors nor a round trip would be
exact. Documents come out as BioC documents (title passage at offset 0,
abstract at ``len(title) + 1``), the same model as the BioC readers'.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
import re
from typing import IO, TYPE_CHECKING, Any

from bioc import BioCAnnotation, BioCDocument, BioCLocation, BioCPassage

from ontolink.core.errors import InputError
from ontolink.formats.tab_rows import FIELD_BREAKS, LINE_BREAKS
from ontolink.formats import DOCUMENT_FORMATS, DocumentFormat, decoded_lines, document_text, top_link
from ontolink.core.io import display_name

if TYPE_CHECKING:
    from ontolink.formats import DocumentWriter, Problems

_TEXT_LINE = re.compile(r"([^|\t]*)\|([ta])\|(.*)\Z", re.S)
_INTEGER = re.compile(r"-?\d+\Z")


def _new_document(pmid: str, source: tuple[str, int]) -> BioCDocument:
    document = BioCDocument()
    document.id = pmid
    document.source = source
    return document


def _passage(text: str, offset: int, kind: str) -> BioCPassage:
    passage = BioCPassage()
    passage.offset = offset
    passage.text = text
    passage.infons["type"] = kind
    return passage


def read_pubtator(path: str | Path, problems: Problems) -> Iterator[BioCDocument]:
    """Yield BioC documents; a malformed line is reported through ``problems`` as FILE:LINE."""
    name = display_name(path)
    document = None
    title = None
    count = 0

    def finish() -> BioCDocument | None:
        nonlocal document, title
        done, document, title = document, None, None
        return done

    for number, line in decoded_lines(path, problems):
        if not line.strip():
            if document is not None:
                yield finish()
            continue
        match = _TEXT_LINE.match(line)
        if match:
            pmid, kind, text = match.groups()
            if document is not None and (document.id != pmid or kind == "t" or document.annotations):
                yield finish()  # a document that was not closed by a blank line
            if document is None:
                document = _new_document(pmid, (name, number))
                title = ""
            if kind == "t":
                title = text
                document.add_passage(_passage(text, 0, "title"))
            elif any(passage.infons.get("type") == "abstract" for passage in document.passages):
                problems.report(f"second abstract line for document {pmid}", name, number)
            else:
                document.add_passage(_passage(text, len(title or "") + 1, "abstract"))  # set with the document
            continue
        columns = line.split("\t")
        if len(columns) < 4:
            problems.report("not a PubTator line: expected 'PMID|t|title', 'PMID|a|abstract' or "
                            "tab-separated 'PMID start end text type id'", name, number)
            continue
        if document is None or columns[0] != document.id:
            problems.report(f"annotation for document {columns[0]!r} outside that document's "
                            "title/abstract block", name, number)
            continue
        if not (_INTEGER.match(columns[1]) and _INTEGER.match(columns[2])):
            if len(columns) in (4, 5):
                continue  # a relation line (PMID type id1 id2 [novelty]): not a mention
            problems.report(f"start and end must be integers, got {columns[1]!r} and {columns[2]!r}",
                            name, number)
            continue
        if len(columns) < 5:
            problems.report("annotation line needs at least 5 columns: PMID start end text type [ids]",
                            name, number)
            continue
        annotation = BioCAnnotation()
        count += 1
        annotation.id = str(count)
        start, end = int(columns[1]), int(columns[2])
        annotation.add_location(BioCLocation(start, end - start))
        annotation.text = columns[3]
        annotation.infons["type"] = columns[4]
        if len(columns) > 5:
            annotation.infons["identifier"] = columns[5]
        for extra, value in enumerate(columns[6:], 1):
            annotation.infons[f"column{5 + extra}"] = value
        annotation.source = (name, number)
        document.add_annotation(annotation)
    if document is not None:
        yield finish()




def pubtator_lines(document: BioCDocument, annotations: Iterable[tuple[int, int, str, str, str]]) -> Iterator[str]:
    """PubTator lines of a document: its title and abstract as read (a line break inside either written as a
    space, which keeps every offset), then ``annotations`` as (start, end, text, type, id) tuples.

    A document id holding a "|", a tab or a line break, and a passage that starts right where the title ends
    (PubTator puts one character between them: the abstract's first would be lost), are refused."""
    if not isinstance(document.id, str) or "|" in document.id or FIELD_BREAKS.search(document.id):
        raise InputError(f"document {document.id!r}: its id holds a '|', a tab or a line break, which PubTator "
                         "cannot write ('ID|t|title')")
    text = LINE_BREAKS.sub(" ", document_text(document))
    passages = sorted(document.passages, key=lambda passage: passage.offset)
    title = text[:len(passages[0].text or "")] if passages and passages[0].offset == 0 else ""
    after_title = next((passage.offset for passage in passages[1 if title else 0:]), None)
    if title and after_title is not None and after_title <= len(title):
        raise InputError(f"document {document.id!r}: a passage starts at offset {after_title}, right after its "
                         f"{len(title)}-character title; PubTator keeps one character between title and "
                         "abstract (give that passage an offset past the title's end)")
    yield f"{document.id}|t|{title}"
    abstract = text[len(title) + 1:]
    if abstract or len(passages) > 1:
        yield f"{document.id}|a|{abstract}"
    for start, end, mention, kind, identifier in annotations:
        yield "\t".join([document.id, str(start), str(end), mention, kind, identifier])


def pubtator_annotations(links: Iterable[dict[str, Any]]) -> Iterator[tuple[int, int, str, str, str]]:
    """(start, end, text, type, id) per link: the best candidate's id, -1 for NIL. A field holding a tab or a
    line break would cut the annotation line: refused, naming the mention."""
    for record in links:
        best = top_link(record)
        annotation = (record["start"], record["end"], record["mention"], record.get("type") or "Entity",
                      best[0] if best else "-1")
        for field, value in zip(("mention", "type", "entity id"), annotation[2:]):
            if not isinstance(value, str) or FIELD_BREAKS.search(value):
                raise InputError(f"mention {record.get('id')!r}: its {field} {value!r} is not a string without "
                                 "a tab or line break, which PubTator cannot write")
        yield annotation


class PubTatorWriter:
    """Each document as read, its annotations the best candidates of its Linked mentions."""

    def __init__(self, stream: IO[Any]) -> None:
        self.stream = stream

    def write(self, document: BioCDocument | None, links: list[dict[str, Any]]) -> None:
        self.stream.write("".join(line + "\n" for line in pubtator_lines(document, pubtator_annotations(links)))
                          + "\n")
        self.stream.flush()

    def close(self) -> None:
        self.stream.flush()


@DOCUMENT_FORMATS.register("pubtator")
class PubTatorFormat(DocumentFormat):
    summary = "PubTator: 'PMID|t|title', 'PMID|a|abstract', tab-separated annotation lines"
    suffixes = (".pubtator", ".pubtator.txt", ".pubtator3")

    @classmethod
    def name_match(cls, name: str) -> int:
        # corpora name their PubTator files freely (CDR_TestSet.PubTator.txt, NCBItestset_corpus.txt):
        # the word in the file's name is enough, and beats the plain-text .txt
        return 100 if "pubtator" in name.rsplit("/", 1)[-1] else super().name_match(name)

    def read(self, path: str | Path, problems: Problems) -> Iterator[BioCDocument]:
        return read_pubtator(path, problems)

    def writer(self, stream: IO[Any], **options: Any) -> DocumentWriter:
        return PubTatorWriter(stream)
