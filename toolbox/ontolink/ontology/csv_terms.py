"""CSV (or TSV) ontologies: one term per row.

Columns by header name: ``id`` and ``name`` are required; ``synonyms``, ``parents``, ``alt_ids``,
``replaced_by`` and ``type`` hold ``|``-separated lists; ``definition`` and ``obsolete`` (true/false,
1/0) are optional; other columns are ignored. The delimiter is a tab for ``.tsv`` files, a comma
otherwise. Synonyms are EXACT: a spreadsheet of names says nothing finer.

A table whose columns are named otherwise is read with ``--field`` (``ENTITY_FIELD=COLUMN``, as for
JSONL records: ``id=MeSH ID,name=Term,synonyms=Entry terms,separator=;``). Columns named by their
1-based number (``id=1,name=2,type=3``) read a file without a header row: its first row is a term.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from ontolink.core.errors import InputError
from ontolink.core.io import open_input
from ontolink.ontology.loaders import ENTITY_FIELDS, LIST_FIELDS, ONTOLOGY_FORMATS, SEPARATOR, OntologyFormat, \
    term_dict

REQUIRED = ("id", "name")
TRUE = {"true", "1", "yes"}
DEFAULT_SEPARATOR = "|"


def _list(value: str | None, separator: str) -> list[str]:
    return [part.strip() for part in (value or "").split(separator) if part.strip()]


def _columns(fields: dict[str, str], header: list[str] | None, path: str | Path) -> dict[str, int]:
    """Entity field -> column position: by header name (a field not mapped is looked for under its own name), or,
    without a header, by the 1-based numbers ``fields`` give."""
    mapped = {field: column for field, column in fields.items() if field != SEPARATOR}
    if header is None:
        missing = [field for field in REQUIRED if field not in mapped]
        if missing:
            raise InputError(f"--field names columns by number: name the {' and '.join(missing)} column(s) too "
                             f"(e.g. --field id=1,name=2)", path)
        return {field: int(column) - 1 for field, column in mapped.items()}
    columns = {}
    for field in ENTITY_FIELDS:
        name = mapped.get(field, field)
        if name in header:
            columns[field] = header.index(name)
        elif field in mapped:
            raise InputError(f"--field {field}={name}: the header row has no column {name!r} "
                             f"(has: {', '.join(header)})", path, 1)
    missing = [field for field in REQUIRED if field not in columns]
    if missing:
        raise InputError(f"the header row needs the column(s) {', '.join(missing)} (has: {', '.join(header)}); "
                         f"name the file's own with --field {','.join(f'{field}=COLUMN' for field in missing)}",
                         path, 1)
    return columns


def _by_number(fields: dict[str, str], path: str | Path) -> bool:
    """Whether ``fields`` name columns by number (a file without a header row); a mix of numbers and names is
    refused."""
    values = [column for field, column in fields.items() if field != SEPARATOR]
    numbers = [column for column in values if column.isdigit()]
    if numbers and len(numbers) < len(values):
        raise InputError("--field names CSV/TSV columns all by header name or all by number (a file without a "
                         f"header row), not both: {', '.join(values)}", path)
    if any(int(column) < 1 for column in numbers):
        raise InputError("--field column numbers start at 1", path)
    return bool(numbers)


def load_csv_terms(path: str | Path, fields: dict[str, str] | None = None) -> list[dict[str, Any]]:
    fields = fields or {}
    delimiter = "\t" if str(path).lower().removesuffix(".gz").endswith(".tsv") else ","
    separator = fields.get(SEPARATOR, DEFAULT_SEPARATOR)
    headerless = _by_number(fields, path)
    terms = []
    with open_input(path) as handle:
        rows = csv.reader(handle, delimiter=delimiter)
        header = None if headerless else [name.strip() for name in next(rows, [])]
        columns = _columns(fields, header, path)
        width = max(columns.values()) + 1
        for row in rows:
            line = rows.line_num
            if not any(cell.strip() for cell in row):
                continue
            if header is not None and len(row) > len(header):
                raise InputError(f"{len(row)} fields where the header has {len(header)}", path, line)
            if len(row) < width:
                if header is None:
                    raise InputError(f"{len(row)} fields where --field names column {width}", path, line)
                row = row + [""] * (width - len(row))
            cell = {field: row[column].strip() for field, column in columns.items()}
            if not cell["id"] or not cell["name"]:
                raise InputError("empty id or name", path, line)
            lists = {field: _list(cell.get(field), separator) for field in LIST_FIELDS}
            terms.append(term_dict(cell["id"], cell["name"], cell.get("definition", ""),
                                   [(synonym, "EXACT") for synonym in lists["synonyms"]], lists["parents"],
                                   lists["alt_ids"], cell.get("obsolete", "").lower() in TRUE,
                                   lists["replaced_by"], lists["type"]))
    return terms


@ONTOLOGY_FORMATS.register("csv")
class CSVFormat(OntologyFormat):
    summary = ("CSV/TSV with a header row: id, name, synonyms|..., parents|..., type, definition (--field maps "
               "other column names, or numbers for a file without a header)")
    suffixes = (".csv", ".tsv")
    takes_fields = True

    def load(self, path: str | Path, fields: dict[str, str] | None = None) -> list[dict[str, Any]]:
        return load_csv_terms(path, fields)
