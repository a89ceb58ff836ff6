"""The one module that opens the files users pass: JSONL records, TSV rows, text reports, and the
files other modules parse whole (an ontology, a --config file).

Reading yields one record (a dict, or a row of columns) per non-blank line, in
order, in bounded memory; ``-`` is stdin and ``.gz`` is gunzipped (a gzipped
stdin is recognised too). Every problem becomes an ``InputError`` that names
the file and line, or, with ``skip_invalid``, a counted warning on stderr.
Writing: ``-`` is stdout and a ``.gz`` name is compressed.
"""

import gzip
import itertools
import json
import sys
import zlib
from contextlib import contextmanager, nullcontext

import orjson

from ontolink.errors import InputError


def display_name(path):
    return "<stdin>" if path in (None, "-") else str(path)


def warn(message):
    """One line on stderr: the only way library code talks to the user."""
    print(f"ontolink: {message}", file=sys.stderr, flush=True)


GZIP_MAGIC = b"\x1f\x8b"


def _gzip_lines(stream):
    """Lines of a gzip stream, decompressed chunk by chunk so that the records
    before a truncation point are still delivered; the truncation then raises."""
    decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
    pending = b""
    while True:
        chunk = stream.read(1 << 16)
        if not chunk:
            break
        data = decompressor.decompress(chunk)
        while decompressor.eof and decompressor.unused_data:  # concatenated gzip members
            rest = decompressor.unused_data
            decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
            data += decompressor.decompress(rest)
        pending += data
        *lines, pending = pending.split(b"\n")
        for line in lines:
            yield line + b"\n"
    if not decompressor.eof:
        raise EOFError("compressed data ends before the end-of-stream marker")
    if pending:
        yield pending


@contextmanager
def open_input_lines(path):
    """Yield an iterator over the raw lines of a file or stdin, gunzipping when needed."""
    if path in (None, "-"):
        stream = sys.stdin.buffer
        # A gzipped stdin (`zcat` forgotten) is recognised by its magic bytes.
        gzipped = hasattr(stream, "peek") and stream.peek(2)[:2] == GZIP_MAGIC
        yield _gzip_lines(stream) if gzipped else iter(stream)
        return
    path = str(path)
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a JSONL file", path) from None
    with handle:
        yield _gzip_lines(handle) if path.endswith(".gz") else iter(handle)


def open_input(path, binary=False, encoding="utf-8-sig"):
    """A named file opened for reading as a whole (an ontology, a --config file), gunzipped when the
    name ends in .gz; text (a byte-order mark dropped) unless ``binary``. OSError is the caller's to word."""
    path = str(path)
    if path.endswith(".gz"):
        return gzip.open(path, "rb") if binary else gzip.open(path, "rt", encoding=encoding)
    return open(path, "rb") if binary else open(path, encoding=encoding)


def open_output(path, binary=False):
    """stdout (``-``) or a file (.gz compressed) for writing, text or binary; closing it never closes
    stdout."""
    if path in (None, "-"):
        return nullcontext(sys.stdout.buffer if binary else sys.stdout)
    path = str(path)
    if path.endswith(".gz"):
        return gzip.open(path, "wb") if binary else gzip.open(path, "wt", encoding="utf-8", newline="")
    return open(path, "wb") if binary else open(path, "w", encoding="utf-8", newline="")


class ReadStats:
    """What a reader saw: records, skipped bad lines, duplicate ids."""

    def __init__(self):
        self.records = 0
        self.skipped = 0
        self.duplicates = 0

    def add(self, other):
        """Count what another reader (of another shard, elsewhere) saw too."""
        self.records += other.records
        self.skipped += other.skipped
        self.duplicates += other.duplicates

    def summary(self):
        parts = [f"{self.records} records"]
        if self.skipped:
            parts.append(f"{self.skipped} invalid lines skipped")
        if self.duplicates:
            parts.append(f"{self.duplicates} duplicate ids")
        return ", ".join(parts)


def read_records(path="-", validate=None, skip_invalid=False, stats=None, check_duplicate_ids=False):
    """Yield the JSON objects of a JSONL file (``-`` is stdin, ``.gz`` is gunzipped).

    ``validate(record)`` may raise ``ValueError`` with a message naming the
    field; the reader adds file and line. Blank lines, CRLF line ends, a UTF-8
    byte-order mark and a missing final newline are all accepted.
    """
    with open_input_lines(path) as lines:
        yield from parse_jsonl(lines, display_name(path), validate, skip_invalid, stats, check_duplicate_ids)


def record_batches(records, size):
    """Lists of up to ``size`` records. When reading fails (a bad line), the
    records read before it are still yielded, then the error propagates."""
    batch = []
    try:
        for record in records:
            batch.append(record)
            if len(batch) >= size:
                yield batch
                batch = []
    except InputError:
        if batch:
            yield batch
        raise
    if batch:
        yield batch


class RecordBatchReader:
    """``reader(path, stats)``: the records of one JSONL input (``read_records``) in lists of up to
    ``batch_size``; picklable, so that an engine can read its files elsewhere."""

    def __init__(self, batch_size, validate=None, skip_invalid=False, check_duplicate_ids=False):
        self.batch_size = batch_size
        self.options = {"validate": validate, "skip_invalid": skip_invalid,
                        "check_duplicate_ids": check_duplicate_ids}

    def __call__(self, path, stats):
        return record_batches(read_records(path, stats=stats, **self.options), self.batch_size)


SHARD_SUFFIXES = (".jsonl", ".jsonl.gz")


def input_shards(path):
    """The shards ``path`` names, sorted: a directory's ``*.jsonl`` / ``*.jsonl.gz`` files, or a glob's
    matches; None when ``path`` is one file or stdin."""
    import glob
    from pathlib import Path

    if path in (None, "-"):
        return None
    if Path(path).is_dir():
        shards = sorted(str(child) for child in Path(path).iterdir()
                        if child.is_file() and child.name.endswith(SHARD_SUFFIXES))
        if not shards:
            raise InputError(f"holds no {' or '.join('*' + suffix for suffix in SHARD_SUFFIXES)} shard", path)
        return shards
    if glob.has_magic(str(path)):
        shards = sorted(match for match in glob.glob(str(path)) if Path(match).is_file())
        if not shards:
            raise InputError("matches no file", path)
        return shards
    return None


def output_shard(shard, directory):
    """Where the output of input ``shard`` goes in ``directory`` (created): the same file name."""
    from pathlib import Path

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / Path(shard).name
    if target.resolve() == Path(shard).resolve():
        raise InputError("would be overwritten by its own output: give another --output-dir", shard)
    return str(target)


def read_tsv(path="-", parse_row=None, skip_invalid=False, stats=None):
    """Yield ``parse_row(columns)`` for each non-blank line of a tab-separated file (no header).

    ``parse_row`` may raise ``ValueError`` naming the problem (a wrong column
    count, an empty field); the reader adds file and line.
    """
    with open_input_lines(path) as lines:
        yield from parse_tsv(lines, display_name(path), parse_row, skip_invalid, stats)


def _lines_of_text(lines, name, bad):
    """(line number, decoded text) of raw lines; undecodable lines go to ``bad``."""
    line_number = 0
    while True:
        try:
            raw = next(lines)
        except StopIteration:
            return
        except (EOFError, zlib.error) as error:
            raise InputError(f"gzip data is truncated or corrupt after line {line_number} ({error})", name) from None
        line_number += 1
        try:
            yield line_number, raw.decode("utf-8-sig" if line_number == 1 else "utf-8")
        except UnicodeDecodeError as error:
            bad(line_number, f"not valid UTF-8 (byte 0x{raw[error.start]:02x} at column {error.start + 1}); "
                             "the file may be Latin-1: convert it with `iconv -f latin1 -t utf-8`")


def _problem_handler(name, skip_invalid, stats):
    def bad(line_number, message):
        if not skip_invalid:
            raise InputError(message, name, line_number)
        stats.skipped += 1
        warn(f"{name}:{line_number}: {message} (skipped)")
    return bad


def parse_jsonl(lines, name, validate=None, skip_invalid=False, stats=None, check_duplicate_ids=False):
    """The records of already-open raw JSONL lines (see ``read_records``); ``name`` is used in messages."""
    stats = stats if stats is not None else ReadStats()
    seen_ids = {} if check_duplicate_ids else None
    bad = _problem_handler(name, skip_invalid, stats)
    for line_number, text in _lines_of_text(iter(lines), name, bad):
        text = text.strip()
        if not text:
            continue
        try:
            record = loads(text)
        except json.JSONDecodeError as error:
            bad(line_number, f"invalid JSON: {error.msg} at column {error.colno}")
            continue
        if not isinstance(record, dict):
            bad(line_number, "expected a JSON object, got "
                             f"{type(record).__name__ if not isinstance(record, list) else 'an array'}")
            continue
        if validate is not None:
            try:
                validate(record)
            except ValueError as error:
                bad(line_number, str(error))
                continue
        if seen_ids is not None and "id" in record:
            first = seen_ids.setdefault(record["id"], line_number)
            if first != line_number:
                stats.duplicates += 1
                if stats.duplicates == 1:
                    warn(f"{name}:{line_number}: duplicate id {record['id']!r} (first at line {first}); "
                         "processed anyway, further duplicates are only counted")
        stats.records += 1
        yield record


def parse_tsv(lines, name, parse_row=None, skip_invalid=False, stats=None):
    """The rows of already-open raw TSV lines (see ``read_tsv``); ``name`` is used in messages."""
    stats = stats if stats is not None else ReadStats()
    bad = _problem_handler(name, skip_invalid, stats)
    for line_number, text in _lines_of_text(iter(lines), name, bad):
        text = text.rstrip("\r\n")
        if not text.strip():
            continue
        try:
            row = parse_row(text.split("\t")) if parse_row else text.split("\t")
        except ValueError as error:
            bad(line_number, str(error))
            continue
        stats.records += 1
        yield row


def first_line(lines):
    """(the first non-blank raw line without a byte-order mark, all lines again): for sniffing a format."""
    head = []
    for raw in lines:
        head.append(raw)
        if raw.strip():
            break
    first = head[-1].lstrip(b"\xef\xbb\xbf").strip() if head else b""
    return first, itertools.chain(head, lines)


def peek_first_record(path):
    """The first JSON record of a file or stdin (None when unreadable or not JSON), for choosing a reader.

    Stdin is peeked without being consumed (its first line stays in the buffer)."""
    if path in (None, "-"):
        stream = sys.stdin.buffer
        if hasattr(stream, "peek"):
            line = stream.peek(1 << 16).split(b"\n", 1)[0]
        elif stream.seekable():
            start = stream.tell()
            line = stream.readline()
            stream.seek(start)
        else:
            line = b""
    else:
        try:
            with open_input_lines(path) as lines:
                line, _ = first_line(lines)
        except Exception:
            return None  # the reader that follows reports the problem with file and line
    try:
        return json.loads(line.decode("utf-8-sig"))
    except ValueError:
        return None


def write_text(path, text):
    """Write a report (a table, JSON) to stdout (``-``) or a file, gzip-compressed when it ends in .gz."""
    with open_output(path) as handle:
        handle.write(text + "\n")
        handle.flush()


def loads(text):
    """One JSON value: orjson (5x faster on linked records), the standard library where orjson refuses
    (NaN, integers past 64 bits, lone surrogates) or to word the error of an invalid line."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def dumps(record):
    """One compact JSON line: orjson (7x faster than the standard library on a linked record of 64
    candidates), which writes NaN as null; the standard library for what orjson cannot write (numpy
    scalars, integers past 64 bits, keys that are not strings)."""
    try:
        return orjson.dumps(record).decode("utf-8")
    except TypeError:
        return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


class RecordWriter:
    """Write dicts as JSONL to stdout (``-``) or a file (``.gz`` compressed).

    ``flush()`` after each batch so a downstream command sees records as soon
    as they are ready.
    """

    def __init__(self, path="-"):
        self.path = path
        self._owned = path not in (None, "-")
        self._stream = open_output(path) if self._owned else sys.stdout
        self.count = 0

    def write(self, record):
        self._stream.write(dumps(record) + "\n")
        self.count += 1

    def write_all(self, records, flush_every=64):
        for record in records:
            self.write(record)
            if self.count % flush_every == 0:
                self.flush()
        self.flush()

    def flush(self):
        self._stream.flush()

    def close(self):
        self.flush()
        if self._owned:
            self._stream.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
