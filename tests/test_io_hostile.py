"""The shared reader and writer against hostile or unlucky input: an output that names the input, lines past
the limit, gzip bombs, JSON nested too deep or holding lone surrogates, NaN in pass-through fields, closed
standard streams, and SIGINT / SIGTERM landing while a .gz output is written."""

import gzip
import json
import os
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from conftest import interruptible, jsonl, parse_jsonl, run
from ontolink.core.errors import InputError
from ontolink.core.io import ReadStats, read_records
from ontolink.core.records import validate_mention

MAX_LINE_BYTES_VARIABLE = "ONTOLINK_MAX_LINE_BYTES"
DATA = Path(__file__).parent / "data" / "hostile"
PACKAGE_DIR = Path(__file__).resolve().parents[1] / "toolbox"


def _child_environment(**extra):
    return {**os.environ, "PYTHONPATH": str(PACKAGE_DIR), **extra}


@pytest.mark.parametrize("name_the_output", ["same", "symlink"])
def test_output_naming_the_input_is_refused_before_it_is_opened(tmp_path, name_the_output):
    mentions = tmp_path / "mentions.jsonl"
    original = jsonl([{"id": "m1", "mention": "seizures"}, {"id": "m2", "mention": "myopia"}])
    mentions.write_text(original)
    output = mentions
    if name_the_output == "symlink":
        output = tmp_path / "alias.jsonl"
        output.symlink_to(mentions)
    result = run("link", "--index", tmp_path / "no-index", "-i", mentions, "-o", output)
    assert result.exit_code == 2
    assert f"{output}: is also the input {mentions}" in result.stderr
    assert mentions.read_text() == original  # refused before the index is even looked for


def test_output_that_is_the_file_on_stdin_is_refused(tmp_path):
    mentions = tmp_path / "mentions.jsonl"
    original = jsonl([{"id": "m1", "mention": "seizures"}])
    mentions.write_text(original)
    with open(mentions, "rb") as stdin:
        result = subprocess.run([sys.executable, "-m", "ontolink", "convert", "--from", "text", "-o", str(mentions)],
                                stdin=stdin, capture_output=True, text=True, env=_child_environment(), timeout=120)
    assert result.returncode == 2 and "is also the input on stdin" in result.stderr
    assert mentions.read_text() == original


def test_a_line_past_the_limit_is_bad_data_and_the_next_lines_still_read(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(MAX_LINE_BYTES_VARIABLE, "1K")
    path = tmp_path / "long.jsonl"
    path.write_text(jsonl([{"id": "m1", "mention": "a"}, {"id": "m2", "mention": "b" * 5000},
                           {"id": "m3", "mention": "c"}]))
    with pytest.raises(InputError, match=rf"long.jsonl:2: line longer than the limit of 1,024 "
                                         rf"bytes \(set {MAX_LINE_BYTES_VARIABLE} to raise it\)"):
        list(read_records(path))
    stats = ReadStats()
    assert [record["id"] for record in read_records(path, skip_invalid=True, stats=stats)] == ["m1", "m3"]
    assert stats.skipped == 1
    monkeypatch.setenv(MAX_LINE_BYTES_VARIABLE, "1M")
    assert len(list(read_records(path))) == 3


def test_a_gzip_bomb_is_inflated_in_bounded_memory(tmp_path, monkeypatch):
    """20 MB of zeros on one line after a good record, in a 20 KB .gz: stopped at the line limit."""
    import resource

    monkeypatch.setenv(MAX_LINE_BYTES_VARIABLE, "4M")
    path = tmp_path / "bomb.jsonl.gz"
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    with open(path, "wb") as handle:
        handle.write(compressor.compress(b'{"id": "m1", "mention": "a"}\n'))
        for _ in range(20):
            handle.write(compressor.compress(b"0" * (1 << 20)))
        handle.write(compressor.flush())
    assert path.stat().st_size < 100_000
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    stats = ReadStats()
    records = list(read_records(path, skip_invalid=True, stats=stats))
    assert [record["id"] for record in records] == ["m1"] and stats.skipped == 1
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 15  # the line is dropped as it is read, never held (it was 20 MB and more)


def test_long_gzip_lines_are_read_in_linear_time(tmp_path):
    """A 16 MB line of incompressible text takes about as long gzipped as plain (it was re-split at every
    64 KB chunk: a 50 MB line took 178 s gzipped, 1.8 s plain)."""
    import base64
    import random

    text = base64.b64encode(random.Random(0).randbytes(12 << 20)).decode()
    line = json.dumps({"id": "m1", "mention": "x", "context_left": text}) + "\n"
    plain, gzipped = tmp_path / "long.jsonl", tmp_path / "long.jsonl.gz"
    plain.write_text(line)
    with gzip.open(gzipped, "wt", compresslevel=1) as handle:
        handle.write(line)
    seconds = {}
    for path in (plain, gzipped):
        started = time.perf_counter()
        assert len(next(read_records(path))["context_left"]) == len(text)
        seconds[path] = time.perf_counter() - started
    assert seconds[gzipped] < 4 * seconds[plain] + 0.5, seconds  # quadratic: 5 s against 0.2 s


@pytest.mark.parametrize("name, line, words", [
    ("deep_json_line3.jsonl", 3, "nested deeper than 1024 levels"),
    ("lone_surrogate_line2.jsonl", 2, "lone UTF-16 surrogate"),
])
def test_deep_json_and_lone_surrogates_are_bad_lines(name, line, words):
    with pytest.raises(InputError) as caught:
        list(read_records(DATA / name, validate=validate_mention))
    assert str(caught.value).startswith(f"{DATA / name}:{line}: invalid JSON: ") and words in str(caught.value)
    assert caught.value.exit_code == 2
    kept = list(read_records(DATA / name, validate=validate_mention, skip_invalid=True))
    assert [record["id"] for record in kept] == [f"m{n}" for n in range(1, 5) if n != line]


def test_link_writes_every_record_before_a_deep_line(tfidf_index, tmp_path):
    """5,999 good records, then JSON nested 5,000 deep: every good record reaches the output (4,096 did)."""
    records = [{"id": f"m{n}", "mention": "seizures"} for n in range(5999)]
    path = tmp_path / "deep.jsonl"
    path.write_text(jsonl(records) + '{"id": "deep", "mention": ' + "[" * 5000 + "]" * 5000 + "}\n")
    result = run("link", "--index", tfidf_index, "--top-k", 1, "-i", path, "-o", tmp_path / "out.jsonl")
    assert result.exit_code == 2 and f"{path}:6000: invalid JSON: nested deeper" in result.stderr
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 5999
    skipped = run("link", "--index", tfidf_index, "--top-k", 1, "-i", path, "--skip-invalid")
    assert skipped.exit_code == 0 and len(parse_jsonl(skipped.stdout)) == 5999


def test_nan_and_infinity_in_pass_through_fields_are_written_as_read(tfidf_index):
    line = '{"id": "m1", "mention": "seizures", "measure": NaN, "range": [Infinity, -Infinity], "n": 1.5}\n'
    result = run("link", "--index", tfidf_index, "--top-k", 1, input=line)
    assert result.exit_code == 0
    written = result.stdout.strip()
    assert '"measure":NaN' in written and '"range":[Infinity,-Infinity]' in written and '"n":1.5' in written


@pytest.mark.parametrize("mention", ["\u200b\u200b", "\x00", "\ufeff \u200d\t"])
def test_a_mention_of_invisible_characters_is_empty(mention):
    with pytest.raises(ValueError, match="'mention' is empty"):
        validate_mention({"id": "m1", "mention": mention})
    validate_mention({"id": "m1", "mention": "caf\u00e9\u200b"})  # a visible character is enough


def test_a_list_where_one_value_goes_in_a_config_is_a_usage_error(tfidf_index, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("top-k: [1, 2]\n")
    result = run("link", "--index", tfidf_index, "--config", config, input="")
    assert result.exit_code == 2 and "'top-k' takes one value, got a list" in result.stderr


@pytest.mark.parametrize("closed, words", [("stdin", "<stdin>: stdin is closed: give the input with -i FILE"),
                                           ("stdout", "<stdout>: stdout is closed: give the output with -o FILE")])
def test_a_closed_standard_stream_is_a_clean_message(tfidf_index, closed, words):
    command = f"{sys.executable} -m ontolink link --index {tfidf_index}"
    shell = f"{command} <&-" if closed == "stdin" else f"echo '{{\"id\": \"m\", \"mention\": \"a\"}}' | {command} >&-"
    result = subprocess.run(shell, shell=True, executable="/bin/bash", capture_output=True, text=True,
                            env=_child_environment(), timeout=120)
    assert result.returncode == 2 and f"ontolink: error: {words}" in result.stderr
    assert "Traceback" not in result.stderr and "AttributeError" not in result.stderr


WRITER = """
import random, sys
from ontolink.core.io import RecordWriter
words = random.Random(0).choices(["seizure", "myopia", "fever", "ataxia", "the", "of", "and"], k=20000)
with RecordWriter(sys.argv[1]) as writer:
    for number in range(10 ** 9):
        writer.write({"id": f"m{number}", "mention": "seizures", "context_left": " ".join(words[number % 7:])})
"""


def _written(output):
    """Bytes written so far to ``output``, which is written under a temporary name beside it until closed."""
    total = 0
    for path in [*output.parent.glob(f".{output.name}.tmp-*"), output]:
        try:
            total += path.stat().st_size
        except FileNotFoundError:  # renamed between the listing and the look
            pass
    return total


def _signal_when_written(child, output, size, signum):
    deadline = time.monotonic() + 60
    while _written(output) < size and child.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.002)
    child.send_signal(signum)
    return child.communicate(timeout=60)


def _whole_records(output):
    text = gzip.decompress(output.read_bytes()).decode()  # a CRC or length error raises here
    assert text.endswith("\n")
    return parse_jsonl(text)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_writer_compresses_leaves_a_whole_gzip_file(tmp_path, signum):
    """Real signals to a real process writing big records to .gz, where most of the time goes into
    compressing: the file is a complete gzip member of whole records every time (SIGINT broke its CRC or
    length in 8 of 10 tries, SIGTERM left no trailer in 4 of 4)."""
    for attempt in range(4):
        output = tmp_path / f"out{attempt}.jsonl.gz"
        child = subprocess.Popen([sys.executable, "-c", WRITER, str(output)], stderr=subprocess.DEVNULL,
                                 env=_child_environment(), preexec_fn=interruptible)
        try:
            _signal_when_written(child, output, 50_000 * (attempt + 1), signum)
        finally:
            child.kill()
        assert all(record["mention"] == "seizures" for record in _whole_records(output))


def _documents(count):
    abstract = "The patient had recurrent seizures and progressive myopia since childhood; " * 40
    start = abstract.index("seizures")
    for number in range(count):
        title = f"Case {number}"
        yield (f"{number}|t|{title}\n{number}|a|{abstract}\n"
               f"{number}\t{len(title) + 1 + start}\t{len(title) + 1 + start + 8}\tseizures\tDisease\tD012640\n\n")


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_to_a_command_writing_gzip_exits_with_its_status_and_a_whole_file(tmp_path, signum, status):
    documents = tmp_path / "docs.pubtator"
    documents.write_text("".join(_documents(3000)))
    output = tmp_path / "out.jsonl.gz"
    child = subprocess.Popen([sys.executable, "-m", "ontolink", "convert", "-i", str(documents), "-o", str(output)],
                             stderr=subprocess.PIPE, env=_child_environment(), preexec_fn=interruptible)
    try:
        _, stderr = _signal_when_written(child, output, 20_000, signum)
    finally:
        child.kill()
    assert child.returncode == status and b"Traceback" not in stderr, stderr
    assert all(record["mention"] == "seizures" for record in _whole_records(output))


def test_dev_null_as_output_with_dev_null_on_stdin_is_not_an_input(tmp_path):
    with open(os.devnull, "rb") as stdin:
        result = subprocess.run([sys.executable, "-m", "ontolink", "convert", "--from", "text", "-o", os.devnull],
                                stdin=stdin, capture_output=True, text=True, env=_child_environment(), timeout=120)
    assert result.returncode == 0, result.stderr
