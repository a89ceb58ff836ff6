"""Headerless ``head<TAB>relation<TAB>tail`` TSV, PyKEEN style."""

from ontolink.core.io import parse_tsv
from ontolink.formats.triples import TRIPLE_FORMATS, Triple, TripleFormat


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


@TRIPLE_FORMATS.register("tsv")
class TSVTriples(TripleFormat):
    summary = "headerless head<TAB>relation<TAB>tail lines (PyKEEN style)"
    suffixes = (".tsv", ".txt")

    @classmethod
    def sniff_line(cls, first):
        return not first.startswith(b"{")

    def parse(self, lines, name, skip_invalid, stats):
        return parse_tsv(lines, name, _tsv_triple, skip_invalid, stats)
