import gzip
import io
import sys

import pytest

from conftest import shared_path
from toolbox.errors import InputError
from toolbox.io import ReadStats, RecordWriter, read_records
from toolbox.records import validate_mention


def read(name, **options):
    return list(read_records(shared_path("bad_inputs", name), validate=validate_mention, **options))


@pytest.mark.parametrize("name, count", [
    ("blank_lines.jsonl", 2), ("utf8_bom.jsonl", 1), ("crlf.jsonl", 2), ("no_trailing_newline.jsonl", 2),
    ("empty.jsonl", 0), ("huge_line.jsonl", 1),
])
def test_valid_oddities_are_read(name, count):
    records = read(name)
    assert len(records) == count
    assert all(record["mention"] == "seizures" for record in records)


@pytest.mark.parametrize("name, line, words", [
    ("invalid_json_line3.jsonl", 3, "invalid JSON"),
    ("missing_mention_line2.jsonl", 2, "'mention'"),
    ("not_an_object_line1.jsonl", 1, "JSON object"),
    ("latin1_line2.jsonl", 2, "UTF-8"),
    ("wrong_types.jsonl", 1, "'id'"),
    ("empty_mention.jsonl", 1, "'mention' is empty"),
])
def test_bad_line_names_file_and_line(name, line, words):
    with pytest.raises(InputError) as caught:
        read(name)
    message = str(caught.value)
    assert message.startswith(f"{shared_path('bad_inputs', name)}:{line}: ")
    assert words in message
    assert caught.value.exit_code == 2


def test_skip_invalid_counts_and_keeps_good_records(capsys):
    stats = ReadStats()
    records = read("invalid_json_line3.jsonl", skip_invalid=True, stats=stats)
    assert [record["id"] for record in records] == ["m1", "m2", "m4"]
    assert stats.skipped == 1
    assert ":3: invalid JSON" in capsys.readouterr().err


def test_empty_mentions_skipped_with_count():
    stats = ReadStats()
    records = read("empty_mention.jsonl", skip_invalid=True, stats=stats)
    assert stats.skipped == 2 and records == []


def test_truncated_gzip_names_the_file():
    with pytest.raises(InputError, match="truncated.jsonl.gz: gzip data is truncated"):
        read("truncated.jsonl.gz")


def test_duplicate_ids_are_said(capsys):
    stats = ReadStats()
    records = read("duplicate_ids.jsonl", stats=stats, check_duplicate_ids=True)
    assert len(records) == 2 and stats.duplicates == 1
    assert "duplicate id 'm1'" in capsys.readouterr().err


def test_gzip_round_trip_and_records_before_a_cut(tmp_path):
    path = tmp_path / "out.jsonl.gz"
    with RecordWriter(path) as writer:
        for number in range(2000):
            writer.write({"id": f"m{number}", "mention": "x" * 50, "extra": {"nested": [number]}})
    assert [r["extra"]["nested"][0] for r in read_records(path)] == list(range(2000))
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    seen = []
    with pytest.raises(InputError, match="truncated"):
        for record in read_records(cut):
            seen.append(record)
    assert seen and [r["id"] for r in seen] == [f"m{n}" for n in range(len(seen))]


def test_gzipped_stdin_is_recognised(monkeypatch):
    data = gzip.compress(b'{"id": "a", "mention": "b"}\n')
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(data))))
    assert list(read_records("-")) == [{"id": "a", "mention": "b"}]
