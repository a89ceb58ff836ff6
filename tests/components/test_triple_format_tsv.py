"""The TSV triple format (headerless head<TAB>relation<TAB>tail, PyKEEN's): the shared align KG reads to its rows,
a row of the wrong width names the file and line or is skipped and counted."""

import pytest

from conftest import shared_path
from ontolink.core.errors import InputError
from ontolink.core.io import ReadStats
from ontolink.formats.triples import TRIPLE_FORMATS, Triple, read_triples


def test_the_align_kg_reads_to_its_rows(kg_slice):
    rows = [line.split("\t") for line in kg_slice.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 600 and all(len(row) == 3 for row in rows)
    assert TRIPLE_FORMATS.guess(kg_slice) == "tsv"
    stats = ReadStats()
    assert list(read_triples(kg_slice, stats=stats)) == [Triple(*row) for row in rows]
    assert (stats.records, stats.skipped) == (600, 0)


def test_a_space_separated_file_is_told_so(tmp_path):
    path = tmp_path / "kg.tsv"
    path.write_text("a\tr\tb\nc r d\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"kg\.tsv:2: expected 3 tab-separated columns \(head, relation, tail\), "
                                         r"got 1 \(is the file space-separated\?\)"):
        list(read_triples(path))


def test_wrong_column_count_is_an_error_at_line_2():
    path = shared_path("bad_inputs", "triples_wrong_columns.tsv")
    with pytest.raises(InputError, match=r"triples_wrong_columns\.tsv:2: expected 3 tab-separated columns"):
        list(read_triples(path))
    stats = ReadStats()
    assert list(read_triples(path, skip_invalid=True, stats=stats)) == [Triple("A", "rel", "B")]
    assert (stats.records, stats.skipped) == (1, 2)
