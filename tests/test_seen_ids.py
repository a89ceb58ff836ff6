"""The record of ids behind the duplicate-id check of link, gen-aliases and make-pairs: the same answers as
the dict it replaced, in a bounded number of bytes, and said on stderr and in the summary when full."""

import itertools
import os
import random
import subprocess
import sys
import tracemalloc

from conftest import jsonl
from ontolink.core.io import ReadStats, parse_jsonl, read_records
from ontolink.core.seen_ids import BUDGET_VARIABLE, SeenIds, id_key


def test_first_lines_are_those_a_dict_gives_across_merges():
    """Random ids with repeats; a small budget so that the pending dict is merged into the arrays (and the filter
    made larger) ten times."""
    chooser = random.Random(7)
    ids = [f"PMID{chooser.randrange(1500)}:{chooser.randrange(3)}" for _ in range(6000)]
    seen, first_seen = SeenIds(budget=200_000), {}
    assert seen._pending_max * 10 < len(set(ids)) < seen.capacity
    for line, value in enumerate(ids, start=1):
        expected = first_seen.setdefault(value, line)
        assert seen.first_line(value, line) == (expected if expected != line else None), (line, value)
    assert not seen.full and seen.recorded == len(first_seen)


def test_ids_compare_as_a_dict_of_them_did():
    assert id_key("1") != id_key(1)
    assert id_key(1) == id_key(1.0) == id_key(True)
    assert id_key(2.5) != id_key(2) and id_key(None) == id_key(None)
    assert id_key({"a": 1, "b": [2]}) == id_key({"b": [2], "a": 1}) != id_key({"a": 1})
    assert id_key("m1") != id_key("m2") and id_key("") != id_key(None)


def test_the_hash_is_the_same_in_every_process():
    """Not Python's hash(), which is salted per process: two interpreters with different seeds agree."""
    program = "from ontolink.core.seen_ids import id_key; print(id_key('PMID1:2-9'), id_key(7))"
    outputs = {subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(outputs) == 1 and outputs.pop().split()[0] == str(id_key("PMID1:2-9"))


def test_duplicates_before_the_budget_is_spent_are_still_found(tmp_path, monkeypatch, capsys):
    """A budget for a few dozen ids: later ids are checked against those, not recorded, and that is said once
    on stderr and in the summary."""
    monkeypatch.setenv(BUDGET_VARIABLE, "2K")
    capacity = SeenIds().capacity
    assert 10 < capacity < 100
    first = [{"id": f"m{number}", "mention": "x"} for number in range(capacity + 20)]
    again = [{"id": "m3", "mention": "x"},  # recorded on line 4: found
             {"id": f"m{capacity + 5}", "mention": "x"},  # past the budget: not found
             {"id": "m0", "mention": "x"}]  # recorded on line 1: found, counted
    path = tmp_path / "mentions.jsonl"
    path.write_text(jsonl(first + again))
    stats = ReadStats()
    assert len(list(read_records(path, stats=stats, check_duplicate_ids=True))) == len(first) + 3
    err = capsys.readouterr().err
    assert stats.duplicates == 2 and stats.unrecorded_ids == 20 + 1 and stats.ids_checked_among == capacity
    assert err.count(f"duplicate ids are checked among the first {capacity} records only") == 1
    assert f"{path}:{capacity + 1}: duplicate ids are checked" in err and BUDGET_VARIABLE in err
    assert f"{path}:{len(first) + 1}: duplicate id 'm3' (first at line 4)" in err
    assert "'m0'" not in err  # further duplicates are counted, not each said
    assert f"2 duplicate ids, duplicate ids checked among the first {capacity} records" in stats.summary()


def test_a_budget_that_fits_says_nothing_more(tmp_path, capsys):
    path = tmp_path / "mentions.jsonl"
    path.write_text(jsonl([{"id": f"m{number % 500}", "mention": "x"} for number in range(1000)]))
    stats = ReadStats()
    assert len(list(read_records(path, stats=stats, check_duplicate_ids=True))) == 1000
    assert stats.duplicates == 500 and stats.unrecorded_ids == 0
    assert stats.summary() == "1000 records, 500 duplicate ids"
    assert "checked among" not in capsys.readouterr().err


def test_reading_150k_records_holds_the_budget_not_every_id(monkeypatch, capsys):
    """tracemalloc (numpy's arrays included) over the reader alone: the dict of ids it kept took 18 MiB on these
    150,000 records (37 MiB on twice as many); a 4 MiB budget holds, and the first ids still find their
    duplicates."""
    monkeypatch.setenv(BUDGET_VARIABLE, "4M")
    count = 150_000
    lines = (f'{{"id":"PMID{number:08d}.{number % 7}:{number % 997}-{number % 997 + 12}","mention":"x"}}\n'.encode()
             for number in range(count))
    repeated = [b'{"id":"PMID00000002.2:2-14","mention":"x"}\n']
    stats = ReadStats()
    tracemalloc.start()
    try:
        for _ in parse_jsonl(itertools.chain(lines, repeated), "synthetic", stats=stats, check_duplicate_ids=True):
            pass
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert stats.records == count + 1 and stats.duplicates == 1 and stats.unrecorded_ids > 0
    assert "(first at line 3)" in capsys.readouterr().err
    assert peak < 4 << 20, peak / 2 ** 20
