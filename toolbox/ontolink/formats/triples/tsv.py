"""Headerless ``head<TAB>relation<TAB>tail`` TSV, PyKEEN style."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from ontolink.core.io import parse_tsv
from ontolink.formats.triples import TRIPLE_FORMATS, Triple, TripleFormat

if TYPE_CHECKING:
    from ontolink.core.io import ReadStats


def _tsv_triple(columns: Sequence[str]) -> Triple:
    """The Triple of a TSV row; ValueError naming the problem otherwise."""
    if len(columns) != 3:
        raise ValueError(f"expected 3 tab-separated columns (head, relation, tail), got {len(columns)}"
                         + (" (is the file space-separated?)" if len(columns) == 1 and " " in columns[0] else ""))
    stripped = [column.strip() for column in columns]
    empty = [field for field, column in zip(Triple._fields, stripped) if not column]
    if empty:
        raise ValueError(f"empty {empty[0]}")
    return Triple(*stripped)


@TRIPLE_FORMATS.register("tsv")
class TSVTriples(TripleFormat):
    summary = "headerless head<TAB>relation<TAB>tail lines (PyKEEN style)"
    suffixes = (".tsv", ".txt")

    @classmethod
    def sniff_line(cls, first: bytes) -> bool:
        return not first.startswith(b"{")

    def parse(self, lines: Iterable[bytes], name: str, skip_invalid: bool, stats: ReadStats) -> Iterator[Triple]:
        return parse_tsv(lines, name, _tsv_triple, skip_invalid, stats)
