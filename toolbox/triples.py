"""Triple records (CONTRACT.md): headerless ``head<TAB>relation<TAB>tail`` TSV, PyKEEN style, or JSONL.

JSONL lines are Triple records ``{"head", "relation", "tail"}``; Text–triple pairs
(``{"subject": {"id"}, "predicate", "object": {"id"}}``) are read as their triple,
so a pairs file can serve as a (small) KG too. ``.gz`` and stdin (``-``) work as
for every JSONL input; the format follows the file name, and stdin (or an
unknown extension) is recognised by its first character (``{`` is JSONL).
"""

import itertools
from typing import NamedTuple

import numpy as np

from toolbox.errors import InputError
from toolbox.io import ReadStats, display_name, open_input_lines, read_records, warn

TSV_SUFFIXES = (".tsv", ".txt", ".tsv.gz", ".txt.gz")
JSONL_SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".json.gz", ".ndjson")
FORMATS = ("tsv", "jsonl")


class Triple(NamedTuple):
    head: str
    relation: str
    tail: str


def _string_field(record, field):
    value = record.get(field)
    if value is None:
        raise ValueError(f"missing required field {field!r}")
    if not isinstance(value, str):
        raise ValueError(f"field {field!r} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"field {field!r} is empty")
    return value


def triple_of_record(record):
    """The Triple of a Triple record or of a Text–triple pair; ValueError naming the field otherwise."""
    if "head" in record or "relation" in record or "tail" in record:
        return Triple(_string_field(record, "head"), _string_field(record, "relation"), _string_field(record, "tail"))
    if "subject" in record or "predicate" in record or "object" in record:
        ends = []
        for field in ("subject", "object"):
            value = record.get(field)
            if not isinstance(value, dict):
                raise ValueError(f"field {field!r} must be an object with an 'id'")
            ends.append(_string_field(value, "id"))
        return Triple(ends[0], _string_field(record, "predicate"), ends[1])
    raise ValueError("not a triple: expected 'head', 'relation', 'tail' (or a Text–triple pair's "
                     "'subject', 'predicate', 'object')")


def guess_format(path):
    name = str(path).lower()
    if name.endswith(TSV_SUFFIXES):
        return "tsv"
    if name.endswith(JSONL_SUFFIXES):
        return "jsonl"
    return None


def _tsv_triples(lines, name, skip_invalid, stats):
    for line_number, raw in enumerate(lines, 1):
        try:
            text = raw.decode("utf-8-sig" if line_number == 1 else "utf-8")
        except UnicodeDecodeError as error:
            message = (f"not valid UTF-8 (byte 0x{raw[error.start]:02x} at column {error.start + 1}); "
                       "convert the file with `iconv -f latin1 -t utf-8`")
            if not skip_invalid:
                raise InputError(message, name, line_number) from None
            stats.skipped += 1
            warn(f"{name}:{line_number}: {message} (skipped)")
            continue
        text = text.rstrip("\r\n")
        if not text.strip():
            continue
        columns = text.split("\t")
        problem = None
        if len(columns) != 3:
            problem = (f"expected 3 tab-separated columns (head, relation, tail), got {len(columns)}"
                       + (" (is the file space-separated?)" if len(columns) == 1 and " " in text else ""))
        else:
            columns = [column.strip() for column in columns]
            empty = [field for field, column in zip(Triple._fields, columns) if not column]
            if empty:
                problem = f"empty {empty[0]}"
        if problem:
            if not skip_invalid:
                raise InputError(problem, name, line_number)
            stats.skipped += 1
            warn(f"{name}:{line_number}: {problem} (skipped)")
            continue
        stats.records += 1
        yield Triple(*columns)


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
    if fmt == "jsonl":
        def validate(record):
            triple_of_record(record)

        for record in read_records(path, validate=validate, skip_invalid=skip_invalid, stats=stats):
            yield triple_of_record(record)
        return
    with open_input_lines(path) as lines:
        if fmt is None:  # sniff: the first non-blank line of a JSONL file starts with "{"
            head = []
            for raw in lines:
                head.append(raw)
                if raw.strip():
                    break
            first = head[-1].lstrip(b"\xef\xbb\xbf").lstrip() if head else b""
            lines = itertools.chain(head, lines)
            if first.startswith(b"{"):
                yield from _jsonl_from_lines(lines, name, skip_invalid, stats)
                return
        yield from _tsv_triples(lines, name, skip_invalid, stats)


def _jsonl_from_lines(lines, name, skip_invalid, stats):
    """JSONL triples from already-open lines (stdin that was sniffed), with the reader's checks."""
    import json

    for line_number, raw in enumerate(lines, 1):
        text = raw.decode("utf-8-sig" if line_number == 1 else "utf-8", errors="replace").strip()
        if not text:
            continue
        try:
            record = json.loads(text)
            if not isinstance(record, dict):
                raise ValueError("expected a JSON object")
            triple = triple_of_record(record)
        except ValueError as error:  # json.JSONDecodeError is a ValueError
            message = f"invalid JSON: {error.msg}" if isinstance(error, json.JSONDecodeError) else str(error)
            if not skip_invalid:
                raise InputError(message, name, line_number) from None
            stats.skipped += 1
            warn(f"{name}:{line_number}: {message} (skipped)")
            continue
        stats.records += 1
        yield triple


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
