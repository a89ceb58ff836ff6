"""CSV (or TSV) ontologies: a header row, then one term per row.

Columns by header name: ``id`` and ``name`` are required; ``synonyms``, ``parents`` and
``alt_ids`` hold ``|``-separated lists; ``definition`` and ``obsolete`` (true/false, 1/0)
are optional; other columns are ignored. The delimiter is a tab for ``.tsv`` files, a comma
otherwise. Synonyms are EXACT: a spreadsheet of names says nothing finer.
"""

import csv

from ontolink.core.errors import InputError
from ontolink.core.io import open_input
from ontolink.ontology.loaders import ONTOLOGY_FORMATS, OntologyFormat, term_dict

REQUIRED = ("id", "name")
TRUE = {"true", "1", "yes"}


def _list(value):
    return [part.strip() for part in (value or "").split("|") if part.strip()]


def load_csv_terms(path):
    delimiter = "\t" if str(path).lower().removesuffix(".gz").endswith(".tsv") else ","
    terms = []
    with open_input(path) as handle:
        rows = csv.DictReader(handle, delimiter=delimiter)
        missing = [column for column in REQUIRED if column not in (rows.fieldnames or [])]
        if missing:
            raise InputError(f"the header row needs the column(s) {', '.join(missing)} "
                             f"(has: {', '.join(rows.fieldnames or [])})", path, 1)
        for row in rows:
            line = rows.line_num
            if None in row:
                raise InputError(f"{len(row[None]) + len(rows.fieldnames)} fields where the header has "
                                 f"{len(rows.fieldnames)}", path, line)
            if not (row["id"] or "").strip() or not (row["name"] or "").strip():
                raise InputError("empty id or name", path, line)
            terms.append(term_dict(row["id"].strip(), row["name"].strip(), (row.get("definition") or "").strip(),
                                   [(synonym, "EXACT") for synonym in _list(row.get("synonyms"))],
                                   _list(row.get("parents")), _list(row.get("alt_ids")),
                                   (row.get("obsolete") or "").strip().lower() in TRUE))
    return terms


@ONTOLOGY_FORMATS.register("csv")
class CSVFormat(OntologyFormat):
    summary = "CSV/TSV with a header row: id, name, synonyms|..., parents|..., definition"
    suffixes = (".csv", ".tsv")

    def load(self, path):
        return load_csv_terms(path)
