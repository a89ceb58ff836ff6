"""Literature document formats: one module per format, each registered in ``DOCUMENT_FORMATS``.

Readers: PubTator, BioC XML, BioC JSON, plain text; writers: PubTator, BioC XML,
BioC JSON (links put back into their documents) and SSSOM (a mapping table).
Every reader yields ``bioc.BioCDocument`` objects (the `bioc` package's data
model), one at a time, so a corpus of any size streams. Each document and
annotation carries ``source = (file, line)`` for error messages.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from ontolink.core.errors import InputError
from ontolink.core.file_formats import FileFormat, FormatRegistry
from ontolink.core.io import OverlongLine, display_name, open_input_lines, warn

if TYPE_CHECKING:
    from bioc import BioCDocument


class DocumentWriter(Protocol):
    """What a document format's ``writer`` returns."""

    def write(self, document: BioCDocument | None, links: list[dict[str, Any]]) -> None: ...

    def close(self) -> None: ...


class DocumentFormat(FileFormat):
    """A literature document format: a reader of BioC documents, a writer of linked documents, or both.

    A reader implements ``read``; a writer implements ``writer``. Writers that put the links back
    into the documents they came from (``needs_documents``) get each document with its Linked
    mentions; the others (a mapping table) get each Linked mention alone, with no document.
    """

    binary = False  # its writer writes bytes, not text
    needs_documents = True

    def read(self, path: str | Path, problems: Problems) -> Iterator[BioCDocument]:
        """Yield the ``BioCDocument`` objects of ``path`` ('-': stdin), one at a time, each (and each
        annotation) with ``source = (file, line)``; bad input goes to ``problems``."""
        raise NotImplementedError

    def writer(self, stream: IO[Any], **options: Any) -> DocumentWriter:
        """An object with ``write(document, links)`` and ``close()`` writing to ``stream``; ``options``
        are the command's writer options, each writer taking the ones it knows."""
        raise NotImplementedError


DOCUMENT_FORMATS: FormatRegistry[DocumentFormat] = FormatRegistry("document format", "document-format",
                                                                   "ontolink.formats", DocumentFormat)


def reader_names():
    """The document formats that can be read (what --from accepts)."""
    return DOCUMENT_FORMATS.names_that("read")


def writer_names():
    """The document formats that can be written (what convert --to accepts besides mentions)."""
    return DOCUMENT_FORMATS.names_that("writer")


def guess_format(path):
    """The readable document format of ``path`` from its name (``.gz`` ignored); None when unknown."""
    return DOCUMENT_FORMATS.guess(path, "read")


def document_format(name, method="read"):
    """The format registered as ``name``, checked to implement ``method`` ("read" or "writer")."""
    fmt = DOCUMENT_FORMATS.get(name)()
    if not DOCUMENT_FORMATS.can(name, method):
        able = reader_names() if method == "read" else writer_names()
        raise InputError(f"document format {name!r} cannot be {'read' if method == 'read' else 'written'} "
                         f"(formats that can: {', '.join(able)})")
    return fmt


def resolve_format(path, fmt, option="--from"):
    if fmt:
        return fmt
    guessed = guess_format(path)
    if guessed is None:
        raise InputError(f"cannot tell the document format from the file name: pass {option} "
                         f"({', '.join(reader_names())})", display_name(path))
    return guessed


class Problems:
    """Bad input in a document file: an ``InputError`` naming file and line, or with
    ``skip_invalid`` a warning on stderr and a count."""

    def __init__(self, skip_invalid=False):
        self.skip_invalid = skip_invalid
        self.skipped = 0

    def report(self, message, name, line=None):
        if not self.skip_invalid:
            raise InputError(message, name, line)
        self.skipped += 1
        where = f"{name}:{line}" if line is not None else name
        warn(f"{where}: {message} (skipped)")


def decoded_lines(path, problems):
    """(line number, text without its line end) of a text file, stdin or .gz; a line that is not
    UTF-8 is reported through ``problems``."""
    name = display_name(path)
    with open_input_lines(path) as lines:
        for number, raw in enumerate(lines, 1):
            if isinstance(raw, OverlongLine):
                problems.report(raw.message(), name, number)
                continue
            try:
                yield number, raw.decode("utf-8-sig" if number == 1 else "utf-8").rstrip("\r\n")
            except UnicodeDecodeError as error:
                problems.report(f"not valid UTF-8 (byte 0x{raw[error.start]:02x} at column {error.start + 1})",
                                name, number)


def one_passage_document(doc_id, text, source):
    """A BioC document of one passage at offset 0: what the readers of unstructured text build
    (plain text, JSON Lines documents, brat's .txt); ``source`` is (file name, line or None)."""
    from bioc import BioCDocument, BioCPassage  # here, as in the readers: the registry package stays light

    document = BioCDocument()
    document.id = doc_id
    passage = BioCPassage()
    passage.offset = 0
    passage.text = text
    document.add_passage(passage)
    document.source = source
    return document


class Counted:
    """Counts the documents of a stream as they pass (for the closing summary line)."""

    def __init__(self, items):
        self.items, self.count = items, 0

    def __iter__(self):
        for item in self.items:
            self.count += 1
            yield item


def read_documents(path="-", fmt=None, problems=None):
    """Yield the BioC documents of a document file in any readable format (``fmt`` or guessed); the first
    document whose id came before is said on stderr (its mentions get ids that repeat)."""
    problems = problems if problems is not None else Problems()
    return duplicate_ids_said(document_format(resolve_format(path, fmt)).read(path, problems), display_name(path))


# documents whose ids are remembered to find a repeat: bounded memory over a PubMed-sized stream (about 10 MB);
# a plain dict, as `annotate` starts without numpy (core.seen_ids needs it)
MAX_DOCUMENT_IDS = 100_000


def duplicate_ids_said(documents, name):
    """``documents`` as they come, the first whose id came before (among the first ``MAX_DOCUMENT_IDS``) said on
    stderr; ``name``: the file's, for a document that does not carry its own."""
    first_of: dict[str, int] = {}
    said = False
    for number, document in enumerate(documents, 1):
        if not said:
            first = first_of.get(document.id)
            if first is not None:
                said = True
                first_of.clear()  # said once: nothing more to look for
                where, line = source_of(document, name)
                warn(f"{where}{'' if line is None else f':{line}'}: duplicate document id {document.id!r} (document "
                     f"{number}, first as document {first}): its mentions get ids that repeat; processed anyway")
            elif len(first_of) < MAX_DOCUMENT_IDS:
                first_of[document.id] = number
        yield document


def document_text(document):
    """The text the document's offsets point into: each passage at its offset, gaps as spaces.

    For PubTator that is ``title + " " + abstract``; for BioC the passages as laid out."""
    parts = []
    length = 0
    for passage in sorted(document.passages, key=lambda passage: passage.offset):
        text = passage.text or ""
        if passage.offset > length:
            parts.append(" " * (passage.offset - length))
            length = passage.offset
        elif passage.offset < length:  # overlapping passages: keep the first text laid there
            text = text[length - passage.offset:]
        parts.append(text)
        length += len(text)
    return "".join(parts)


def source_of(item, default_name="<input>"):
    """(file, line) an item was read from, for error messages."""
    return getattr(item, "source", (default_name, None))


def top_link(record):
    """(id, name, score) of a Linked mention's best candidate; None when it is NIL or has none."""
    candidates = record.get("candidates") or []
    if record.get("nil") or not candidates:
        return None
    best = candidates[0]
    return best["id"], best.get("name", ""), best.get("score")
