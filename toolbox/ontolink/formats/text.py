"""Plain text: one document per non-blank line; ``ID<TAB>text`` gives the document its id,
otherwise the id is the line number."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ontolink.formats import DOCUMENT_FORMATS, DocumentFormat, decoded_lines, one_passage_document
from ontolink.core.io import display_name

if TYPE_CHECKING:
    from bioc import BioCDocument

    from ontolink.formats import Problems


def read_text(path: str | Path, problems: Problems) -> Iterator[BioCDocument]:
    name = display_name(path)
    for number, line in decoded_lines(path, problems):
        if not line.strip():
            continue
        doc_id, tab, text = line.partition("\t")
        if not tab or not doc_id.strip() or " " in doc_id.strip():
            doc_id, text = str(number), line
        yield one_passage_document(doc_id.strip(), text, (name, number))


@DOCUMENT_FORMATS.register("text")
class TextFormat(DocumentFormat):
    summary = "plain text, one document per line ('ID<TAB>text' or just text); no annotations"
    suffixes = (".txt",)

    def read(self, path: str | Path, problems: Problems) -> Iterator[BioCDocument]:
        return read_text(path, problems)
