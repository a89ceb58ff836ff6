import gzip
import io
import sys

import pytest

from conftest import shared_path
from ontolink.core.errors import InputError
from ontolink.core.io import ReadStats, RecordWriter, read_records
from ontolink.core.records import validate_mention


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


def test_tsv_rows_name_file_and_line(tmp_path):
    from ontolink.core.io import read_tsv

    path = tmp_path / "rows.tsv"
    path.write_text("a\tb\n\nc\n")

    def two_columns(columns):
        if len(columns) != 2:
            raise ValueError(f"expected 2 columns, got {len(columns)}")
        return tuple(columns)

    rows = read_tsv(path, two_columns)
    assert next(rows) == ("a", "b")
    with pytest.raises(InputError, match=r"rows.tsv:3: expected 2 columns, got 1"):
        next(rows)


def test_first_record_is_peeked_without_consuming_stdin(tmp_path, monkeypatch):
    from ontolink.core.io import peek_first_record

    path = tmp_path / "x.jsonl.gz"
    with gzip.open(path, "wt") as handle:
        handle.write('\n{"id": "a"}\n{"id": "b"}\n')
    assert peek_first_record(path) == {"id": "a"}
    assert peek_first_record(tmp_path / "missing.jsonl") is None
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(b'{"id": "s"}\n'))))
    assert peek_first_record("-") == {"id": "s"}
    assert [record["id"] for record in read_records("-")] == ["s"]


def test_eval_output_ending_in_gz_is_gzip(tfidf_index, tmp_path):
    from conftest import jsonl, run

    linked = run("link", "--index", tfidf_index, input=jsonl([{"id": "m1", "mention": "seizures",
                                                                "gold": ["HP:0001250"]}])).stdout
    report = tmp_path / "report.json.gz"
    result = run("eval", "--format", "json", "-o", report, input=linked)
    assert result.exit_code == 0, result.output
    with gzip.open(report, "rt") as handle:
        assert '"R@1"' in handle.read()


def test_a_cache_file_is_replaced_whole_or_not_at_all(tmp_path):
    from ontolink.core.cache import write_atomically

    target = tmp_path / "vectors.json"
    write_atomically(target, lambda temporary: temporary.write_text("old"))

    def fails_half_way(temporary):
        temporary.write_text("half")
        raise OSError("disk full")

    with pytest.raises(OSError):
        write_atomically(target, fails_half_way)
    assert target.read_text() == "old" and [path.name for path in tmp_path.iterdir()] == ["vectors.json"]
    write_atomically(target, lambda temporary: temporary.write_text("new"))
    assert target.read_text() == "new" and len(list(tmp_path.iterdir())) == 1
