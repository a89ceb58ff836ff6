"""JSON Lines documents: one object per line, ``{"id": ..., "text": ...}``, what a pipe of JSONL
commands hands `annotate`. The text field can be another (``text_field``); ``doc_id`` is read when
there is no ``id``, the line number when neither is there. Other fields are not kept."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ontolink.formats import DOCUMENT_FORMATS, DocumentFormat, decoded_lines, one_passage_document
from ontolink.core.io import display_name, loads

if TYPE_CHECKING:
    from bioc import BioCDocument

    from ontolink.formats import Problems


def read_jsonl_documents(path: str | Path, problems: Problems, text_field: str = "text") -> Iterator[BioCDocument]:
    name = display_name(path)
    for number, line in decoded_lines(path, problems):
        if not line.strip():
            continue
        try:
            record = loads(line)
        except ValueError as error:
            problems.report(f"not JSON ({error})", name, number)
            continue
        if not isinstance(record, dict):
            problems.report(f"a document must be a JSON object, got {type(record).__name__}", name, number)
            continue
        text = record.get(text_field)
        if not isinstance(text, str):
            fields = ", ".join(sorted(record)) or "none"
            problems.report(f"no text in field {text_field!r} (a string); fields: {fields}", name, number)
            continue
        doc_id = record.get("id", record.get("doc_id"))
        if not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool) or not str(doc_id).strip():
            doc_id = number
        yield one_passage_document(str(doc_id).strip(), text, (name, number))


@DOCUMENT_FORMATS.register("jsonl")
class JsonlDocumentFormat(DocumentFormat):
    summary = "JSON Lines documents, {\"id\", \"text\"} per line (annotate --text-field names another field)"
    suffixes = (".jsonl",)

    def __init__(self, text_field: str = "text") -> None:
        self.text_field = text_field

    def read(self, path: str | Path, problems: Problems) -> Iterator[BioCDocument]:
        return read_jsonl_documents(path, problems, self.text_field)
