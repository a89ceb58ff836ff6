"""Literature document formats: PubTator, BioC XML, BioC JSON and plain text.

Every reader yields ``bioc.BioCDocument`` objects (the `bioc` package's data
model), one at a time, so a corpus of any size streams. Each document and
annotation carries ``source = (file, line)`` for error messages.
"""

from ontolink.errors import InputError
from ontolink.io import display_name, open_input_lines, warn

DOCUMENT_FORMATS = ("pubtator", "bioc-xml", "bioc-json", "text")


def guess_format(path):
    """The document format of ``path`` from its name (``.gz`` ignored); None when unknown."""
    name = str(path).lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if name.endswith((".pubtator", ".pubtator.txt", ".pubtator3")) or "pubtator" in name.rsplit("/", 1)[-1]:
        return "pubtator"
    if name.endswith(".xml"):
        return "bioc-xml"
    if name.endswith(".json"):
        return "bioc-json"
    if name.endswith(".txt"):
        return "text"
    return None


def resolve_format(path, fmt, option="--from"):
    if fmt:
        return fmt
    guessed = guess_format(path)
    if guessed is None:
        raise InputError(f"cannot tell the document format from the file name: pass {option} "
                         f"({', '.join(DOCUMENT_FORMATS)})", display_name(path))
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
            try:
                yield number, raw.decode("utf-8-sig" if number == 1 else "utf-8").rstrip("\r\n")
            except UnicodeDecodeError as error:
                problems.report(f"not valid UTF-8 (byte 0x{raw[error.start]:02x} at column {error.start + 1})",
                                name, number)


class Counted:
    """Counts the documents of a stream as they pass (for the closing summary line)."""

    def __init__(self, items):
        self.items, self.count = items, 0

    def __iter__(self):
        for item in self.items:
            self.count += 1
            yield item


def read_documents(path="-", fmt=None, problems=None):
    """Yield the BioC documents of a PubTator, BioC XML, BioC JSON or plain-text file."""
    problems = problems if problems is not None else Problems()
    fmt = resolve_format(path, fmt)
    if fmt == "pubtator":
        from ontolink.formats.pubtator import read_pubtator

        return read_pubtator(path, problems)
    if fmt == "bioc-xml":
        from ontolink.formats.bioc import read_bioc_xml

        return read_bioc_xml(path)
    if fmt == "bioc-json":
        from ontolink.formats.bioc import read_bioc_json

        return read_bioc_json(path, problems)
    if fmt == "text":
        from ontolink.formats.text import read_text

        return read_text(path, problems)
    raise InputError(f"unknown document format {fmt!r} (one of {', '.join(DOCUMENT_FORMATS)})")


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
