"""Triple records (docs/records.md): headerless ``head<TAB>relation<TAB>tail`` TSV, PyKEEN style, or JSONL.

JSONL lines are Triple records ``{"head", "relation", "tail"}``; Text–triple pairs
(``{"subject": {"id"}, "predicate", "object": {"id"}}``) are read as their triple,
so a pairs file can serve as a (small) KG too. ``.gz`` and stdin (``-``) work as
for every JSONL input; the format follows the file name, and stdin (or an
unknown extension) is recognised by its first character (``{`` is JSONL).
"""

from typing import NamedTuple

import numpy as np

from ontolink.errors import InputError
from ontolink.io import ReadStats, display_name, first_line, open_input_lines, parse_jsonl, parse_tsv
from ontolink.records import string_field

TSV_SUFFIXES = (".tsv", ".txt", ".tsv.gz", ".txt.gz")
JSONL_SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".json.gz", ".ndjson")
FORMATS = ("tsv", "jsonl")


class Triple(NamedTuple):
    head: str
    relation: str
    tail: str


def triple_of_record(record):
    """The Triple of a Triple record or of a Text–triple pair; ValueError naming the field otherwise."""
    if "head" in record or "relation" in record or "tail" in record:
        return Triple(string_field(record, "head"), string_field(record, "relation"), string_field(record, "tail"))
    if "subject" in record or "predicate" in record or "object" in record:
        ends = []
        for field in ("subject", "object"):
            value = record.get(field)
            if not isinstance(value, dict):
                raise ValueError(f"field {field!r} must be an object with an 'id'")
            ends.append(string_field(value, "id"))
        return Triple(ends[0], string_field(record, "predicate"), ends[1])
    raise ValueError("not a triple: expected 'head', 'relation', 'tail' (or a Text–triple pair's "
                     "'subject', 'predicate', 'object')")


def guess_format(path):
    name = str(path).lower()
    if name.endswith(TSV_SUFFIXES):
        return "tsv"
    if name.endswith(JSONL_SUFFIXES):
        return "jsonl"
    return None


def _tsv_triple(columns):
    """The Triple of a TSV row; ValueError naming the problem otherwise."""
    if len(columns) != 3:
        raise ValueError(f"expected 3 tab-separated columns (head, relation, tail), got {len(columns)}"
                         + (" (is the file space-separated?)" if len(columns) == 1 and " " in columns[0] else ""))
    columns = [column.strip() for column in columns]
    empty = [field for field, column in zip(Triple._fields, columns) if not column]
    if empty:
        raise ValueError(f"empty {empty[0]}")
    return Triple(*columns)


def read_triples(path="-", fmt=None, skip_invalid=False, stats=None):
    """Yield the Triples of a TSV or JSONL file (``-``: stdin), in file order.

    A line with the wrong number of columns, an empty field or a record that is
    not a triple raises ``InputError`` with ``FILE:LINE`` (or, with
    ``skip_invalid``, is counted in ``stats`` and reported on stderr).
    """
    if fmt is not None and fmt not in FORMATS:
        raise InputError(f"unknown triple format {fmt!r} (known: {', '.join(FORMATS)})")
    stats = stats if stats is not None else ReadStats()
    name = display_name(path)
    fmt = fmt or (guess_format(path) if path not in (None, "-") else None)
    with open_input_lines(path) as lines:
        if fmt is None:  # sniff: the first non-blank line of a JSONL file starts with "{"
            first, lines = first_line(lines)
            fmt = "jsonl" if first.startswith(b"{") else "tsv"
        if fmt == "tsv":
            yield from parse_tsv(lines, name, _tsv_triple, skip_invalid, stats)
            return
        for record in parse_jsonl(lines, name, validate=triple_of_record, skip_invalid=skip_invalid, stats=stats):
            yield triple_of_record(record)


class TripleSet:
    """Unique triples mapped to integer rows: entities and relations in sorted order.

    ``mapped`` is an (n, 3) int64 array of (head row, relation row, tail row).
    """

    def __init__(self, entity_ids, relation_ids, mapped, duplicates=0):
        self.entity_ids = list(entity_ids)
        self.relation_ids = list(relation_ids)
        self.mapped = np.asarray(mapped, dtype=np.int64).reshape(-1, 3)
        self.duplicates = duplicates

    @classmethod
    def from_triples(cls, triples):
        unique = list(dict.fromkeys(Triple(*triple) for triple in triples))
        duplicates = 0
        if hasattr(triples, "__len__"):
            duplicates = len(triples) - len(unique)
        entity_ids = sorted({triple.head for triple in unique} | {triple.tail for triple in unique})
        relation_ids = sorted({triple.relation for triple in unique})
        entity_row = {entity: row for row, entity in enumerate(entity_ids)}
        relation_row = {relation: row for row, relation in enumerate(relation_ids)}
        mapped = [(entity_row[h], relation_row[r], entity_row[t]) for h, r, t in unique]
        return cls(entity_ids, relation_ids, mapped, duplicates)

    def __len__(self):
        return len(self.mapped)

    def content_hash(self):
        """sha256 of the sorted unique triples: the same KG gives the same hash, in any order."""
        import hashlib

        digest = hashlib.sha256()
        lines = sorted(f"{self.entity_ids[h]}\t{self.relation_ids[r]}\t{self.entity_ids[t]}\n"
                       for h, r, t in self.mapped.tolist())
        for line in lines:
            digest.update(line.encode("utf-8"))
        return digest.hexdigest()
