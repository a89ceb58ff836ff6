"""KG triples: one module per file format, each registered in ``TRIPLE_FORMATS``.

Built in: headerless ``head<TAB>relation<TAB>tail`` TSV, PyKEEN style (``tsv``), and JSONL
of Triple records or Text–triple pairs (``jsonl``). ``.gz`` and stdin (``-``) work as for
every JSONL input; the format follows the file name, and stdin (or an unknown extension)
is recognised by its first line (each format's ``sniff_line``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, NamedTuple, cast

import numpy as np

from ontolink.core.errors import InputError
from ontolink.core.file_formats import FileFormat, FormatRegistry
from ontolink.core.io import ReadStats, display_name, first_line, open_input_lines


class Triple(NamedTuple):
    head: str
    relation: str
    tail: str


class TripleFormat(FileFormat):
    """A file format of KG triples: ``parse`` turns the raw lines of a file into Triples."""

    @classmethod
    def sniff_line(cls, first: bytes) -> bool:
        """Whether ``first``, the first non-blank raw line (bytes) of a nameless input, is this format."""
        return False

    def parse(self, lines: Iterable[bytes], name: str, skip_invalid: bool, stats: ReadStats) -> Iterator[Triple]:
        """Yield the Triples of raw byte ``lines``; a bad line raises ``InputError`` naming ``name``:LINE
        (or, with ``skip_invalid``, is counted in ``stats``)."""
        raise NotImplementedError


TRIPLE_FORMATS: FormatRegistry[TripleFormat] = FormatRegistry("triple format", "triple-format",
                                                               "ontolink.formats.triples",
                                                               TripleFormat)


def format_names() -> list[str]:
    """The registered triple formats (what embed-kg --format accepts)."""
    return TRIPLE_FORMATS.names()


def guess_format(path: str | None) -> str | None:
    return TRIPLE_FORMATS.guess(path)


def read_triples(path: str = "-", fmt: str | None = None, skip_invalid: bool = False,
                 stats: ReadStats | None = None) -> Iterator[Triple]:
    """Yield the Triples of a triple file in any registered format (``-``: stdin), in file order.

    A line with the wrong number of columns, an empty field or a record that is
    not a triple raises ``InputError`` with ``FILE:LINE`` (or, with
    ``skip_invalid``, is counted in ``stats`` and reported on stderr).
    """
    if fmt is not None and fmt not in TRIPLE_FORMATS:
        raise InputError(f"unknown triple format {fmt!r} (known: {', '.join(format_names())})")
    stats = stats if stats is not None else ReadStats()
    name = display_name(path)
    fmt = fmt or guess_format(path)
    with open_input_lines(path) as lines:
        if fmt is None:  # no name to go by: the first non-blank line tells
            first, lines = first_line(lines)
            fmt = next((known for known in format_names() if TRIPLE_FORMATS.get(known).sniff_line(first)), None)
            if fmt is None:
                raise InputError(f"cannot tell the triple format from the first line: pass --format "
                                 f"({', '.join(format_names())})", name)
        yield from TRIPLE_FORMATS.get(fmt)().parse(lines, name, skip_invalid, stats)


class TripleSet:
    """Unique triples mapped to integer rows: entities and relations in sorted order.

    ``mapped`` is an (n, 3) int64 array of (head row, relation row, tail row).
    """

    def __init__(self, entity_ids: Iterable[str], relation_ids: Iterable[str], mapped: Any,
                 duplicates: int = 0) -> None:
        self.entity_ids = list(entity_ids)
        self.relation_ids = list(relation_ids)
        self.mapped = np.asarray(mapped, dtype=np.int64).reshape(-1, 3)
        self.duplicates = duplicates

    @classmethod
    def from_triples(cls, triples: Iterable[Sequence[str]]) -> TripleSet:
        unique = list(dict.fromkeys(Triple(*triple) for triple in triples))
        duplicates = 0
        if hasattr(triples, "__len__"):
            duplicates = len(cast(Sized, triples)) - len(unique)
        entity_ids = sorted({triple.head for triple in unique} | {triple.tail for triple in unique})
        relation_ids = sorted({triple.relation for triple in unique})
        entity_row = {entity: row for row, entity in enumerate(entity_ids)}
        relation_row = {relation: row for row, relation in enumerate(relation_ids)}
        mapped = [(entity_row[h], relation_row[r], entity_row[t]) for h, r, t in unique]
        return cls(entity_ids, relation_ids, mapped, duplicates)

    def __len__(self) -> int:
        return len(self.mapped)

    def content_hash(self) -> str:
        """sha256 of the sorted unique triples: the same KG gives the same hash, in any order."""
        import hashlib

        digest = hashlib.sha256()
        lines = sorted(f"{self.entity_ids[h]}\t{self.relation_ids[r]}\t{self.entity_ids[t]}\n"
                       for h, r, t in self.mapped.tolist())
        for line in lines:
            digest.update(line.encode("utf-8"))
        return digest.hexdigest()
