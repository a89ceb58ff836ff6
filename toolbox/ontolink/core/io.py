"""The one module that opens the files users pass: JSONL records, TSV rows, text reports, and the
files other modules parse whole (an ontology, a --config file).

Reading yields one record (a dict, or a row of columns) per non-blank line, in
order, in bounded memory; ``-`` is stdin and ``.gz`` is gunzipped (a gzipped
stdin is recognised too). Every problem becomes an ``InputError`` that names
the file and line, or, with ``skip_invalid``, a counted warning on stderr.
Writing: ``-`` is stdout and a ``.gz`` name is compressed.
"""

import gzip
import io
import itertools
import json
import math
import os
import re
import select
import stat
import sys
import threading
import time
import zlib
from contextlib import contextmanager, nullcontext

import orjson

from ontolink.core import signal_guard
from ontolink.core.byte_budget import byte_budget
from ontolink.core.errors import InputError, OntolinkError, UsageError


def display_name(path):
    return "<stdin>" if path in (None, "-") else str(path)


def warn(message):
    """One line on stderr: the only way library code talks to the user."""
    print(f"ontolink: {message}", file=sys.stderr, flush=True)


GZIP_MAGIC = b"\x1f\x8b"
DEFAULT_MAX_LINE_BYTES = 64 << 20
MAX_LINE_BYTES_VARIABLE = "ONTOLINK_MAX_LINE_BYTES"
_READ_SIZE = 1 << 16
_GUNZIP_SIZE = 1 << 20  # output per decompression call: a gzip bomb is inflated a megabyte at a time


def max_line_bytes():
    """The longest input line accepted, in bytes: 64 MiB, or ``ONTOLINK_MAX_LINE_BYTES`` (a number, with an
    optional K, M or G suffix). A longer line is bad data, so that one line cannot take all memory."""
    return byte_budget(MAX_LINE_BYTES_VARIABLE, DEFAULT_MAX_LINE_BYTES, minimum=1)


class OverlongLine(bytes):
    """Stands for an input line longer than ``max_line_bytes()``: it comes out as soon as the limit is passed
    (an endless line, ``< /dev/zero``, is refused there, not read to an end it never reaches), and the rest
    of the line is dropped as it is read. Readers report it as a bad line."""

    def __new__(cls, limit):
        line = super().__new__(cls, b"")
        line.limit = limit
        return line

    def message(self):
        return (f"line longer than the limit of {self.limit:,} bytes "
                f"(set {MAX_LINE_BYTES_VARIABLE} to raise it)")


def _split_lines(chunks, limit, waiting=None):
    """Byte lines (newline kept) of a stream of byte chunks, each at most ``limit`` bytes; a longer line comes
    out as one ``OverlongLine`` the moment the limit is passed, and its rest is skipped up to its newline,
    never held. Linear in the input, however long its lines. ``waiting`` (a ``WaitingInput``) is told when the
    line handed on is the last whole line of its chunk: the next one is read from the stream."""
    pending, pending_size = [], 0
    skipping = False  # inside a too-long line already reported: drop up to its newline
    for chunk in chunks:
        pieces = chunk.split(b"\n")
        for position, piece in enumerate(pieces):
            ends_line = position < len(pieces) - 1
            if skipping:
                skipping = not ends_line
            elif pending_size + len(piece) > limit:
                pending, pending_size = [], 0
                skipping = not ends_line
                yield OverlongLine(limit)
            elif ends_line:
                if pending:
                    pending.append(piece)
                    piece = b"".join(pending)
                    pending, pending_size = [], 0
                if waiting is not None:
                    waiting.drained = position == len(pieces) - 2
                yield piece + b"\n"
            elif piece:
                pending.append(piece)
                pending_size += len(piece)
    if pending:
        yield b"".join(pending)


def _chunks(stream):
    """What a binary stream holds, as soon as it arrives (``read1``: a pipe is not waited on to fill 64 KB)."""
    read = getattr(stream, "read1", stream.read)
    while True:
        chunk = read(_READ_SIZE)
        if not chunk:
            return
        yield chunk


class WaitingInput:
    """Whether the next record of a pipe would wait on whoever writes it: what lets a batching reader hand on
    the records it has when its writer is slow (a person typing, a service answering now and then) instead of
    holding them until its batch fills, which may be never.

    ``watch(stream)`` takes a pipe, socket or terminal (a file never waits, nor does a gzipped stream: its reader
    holds data the pipe no longer shows); ``drained`` says that every whole line read has been handed on
    (``_split_lines`` keeps it); ``stalled(patience)`` is True when nothing more comes within ``patience``
    seconds. The stream's own buffer is empty then: ``_chunks`` reads with ``read1`` of more than it holds."""

    def __init__(self):
        self.descriptor = None
        self.drained = False

    def watch(self, stream):
        try:
            descriptor = stream.fileno()
            mode = os.fstat(descriptor).st_mode
        except (AttributeError, OSError, ValueError):  # a stream without a descriptor (a test's BytesIO)
            return
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(descriptor):  # a terminal: a person typing
            self.descriptor = descriptor

    def stalled(self, patience):
        if self.descriptor is None or not self.drained:
            return False
        try:
            return not select.select([self.descriptor], [], [], patience)[0]
        except (OSError, ValueError):  # closed under us: the next read says so
            return False


def _gunzipped(chunks):
    """The decompressed chunks of gzip data (concatenated members too), at most a megabyte each, so the
    records before a truncation point are still delivered; the truncation then raises EOFError."""
    decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
    for data in chunks:
        more = True
        while more:
            if decompressor.eof:
                if not data:
                    break
                decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)  # the next member
            out = decompressor.decompress(data, _GUNZIP_SIZE)
            if out:
                yield out
            data = decompressor.unused_data if decompressor.eof else decompressor.unconsumed_tail
            more = bool(data) or (len(out) == _GUNZIP_SIZE and not decompressor.eof)
    if not decompressor.eof:
        raise EOFError("compressed data ends before the end-of-stream marker")


def _gzip_lines(stream, limit=None, name=None):
    """Lines of a gzip stream (see ``_gunzipped`` and ``_split_lines``); truncated or corrupt data is an
    ``InputError`` naming ``name`` and the last whole line, whichever reader takes the lines."""
    count = 0
    try:
        for line in _split_lines(_gunzipped(_chunks(stream)), limit or max_line_bytes()):
            yield line
            count += 1
    except (EOFError, zlib.error) as error:
        raise InputError(f"gzip data is truncated or corrupt after line {count} ({error})", name) from None


def _stdin_buffer():
    if sys.stdin is None:
        raise InputError("stdin is closed: give the input with -i FILE", "<stdin>")
    return sys.stdin.buffer


@contextmanager
def open_input_lines(path, waiting=None):
    """Yield an iterator over the raw lines of a file or stdin, gunzipping when needed. A line longer
    than ``max_line_bytes()`` comes as an ``OverlongLine``. ``waiting`` (a ``WaitingInput``) watches a
    pipe, stdin or named (``-i <(annotate ...)``)."""
    limit = max_line_bytes()
    if path in (None, "-"):
        stream = _stdin_buffer()
        # A gzipped stdin (`zcat` forgotten) is recognised by its magic bytes.
        gzipped = hasattr(stream, "peek") and stream.peek(2)[:2] == GZIP_MAGIC
        yield _gzip_lines(stream, limit, "<stdin>") if gzipped else _watched_lines(stream, limit, waiting)
        return
    path = str(path)
    handle = _open_named(path, "a JSONL file")
    with handle:
        yield _gzip_lines(handle, limit, path) if path.endswith(".gz") else _watched_lines(handle, limit, waiting)


def _watched_lines(stream, limit, waiting):
    if waiting is not None:
        waiting.watch(stream)
    return _split_lines(_chunks(stream), limit, waiting)


DEFAULT_MAX_INFLATION = 100
MAX_INFLATION_VARIABLE = "ONTOLINK_MAX_INFLATION"
INFLATION_FLOOR = 64 << 20  # a .gz may always inflate this far, whatever its ratio


def max_inflation():
    """How many times its compressed size a .gz file read whole may inflate to (past ``INFLATION_FLOOR``):
    100, or ``ONTOLINK_MAX_INFLATION``. Text ontologies gzip 5 to 15 times; a gzip bomb, a thousand."""
    text = os.environ.get(MAX_INFLATION_VARIABLE, "").strip()
    if not text:
        return DEFAULT_MAX_INFLATION
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise InputError(f"{MAX_INFLATION_VARIABLE}={text!r} is not a positive whole number (e.g. 1000)")
    return value


def _open_named(path, what="a file"):
    """``path`` opened for reading in binary, noted as read (an output may not be it); a path that cannot be
    opened is one line naming it, ``what`` saying what a directory there is not."""
    try:
        handle = open(path, "rb")
        _note_read(handle)
        return handle
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except IsADirectoryError:
        raise InputError(f"is a directory, not {what}", path) from None
    except PermissionError:
        raise InputError("cannot be read (permission denied)", path) from None
    except OSError as error:
        raise InputError(f"cannot be read ({error.strerror or error})", path) from None


def _checked_chunks(handle, path, utf8):
    """The plain bytes of an open file, gunzipped when it starts with gzip's magic bytes, checked as JSONL
    lines are: a line past ``max_line_bytes()``, a truncated or corrupt .gz and (``utf8``) bytes that are not
    UTF-8 are ``InputError``s naming the file and line; a .gz inflating past ``max_inflation()`` times its
    size is refused as soon as it does. Yields the bytes in chunks, in bounded memory, checked a chunk at a
    time at C speed (a per-line loop took minutes on a file of 10 million short lines)."""
    gzipped = handle.peek(2)[:2] == GZIP_MAGIC if hasattr(handle, "peek") else str(path).endswith(".gz")
    chunks = _chunks(handle)
    if gzipped:
        compressed = os.fstat(handle.fileno()).st_size
        ceiling = max(INFLATION_FLOOR, max_inflation() * compressed)
        chunks = _bounded(_gunzipped(chunks), ceiling, compressed, path)
    limit = max_line_bytes()
    lines_before = 0  # newlines before the current chunk
    line_length = 0  # bytes of the current line before the current chunk
    carry = b""  # the start of a UTF-8 sequence cut by the chunk's end
    try:
        for chunk in chunks:
            started_at = line_length  # where in its line the chunk starts
            first, last = chunk.find(b"\n"), chunk.rfind(b"\n")
            if first < 0:
                line_length += len(chunk)
                if line_length > limit:
                    raise InputError(OverlongLine(limit).message(), path, lines_before + 1)
            else:
                # a line inside the chunk is shorter than the chunk: split only when that could pass the limit
                inner = max(map(len, chunk[first + 1:last].split(b"\n"))) if last - first - 1 > limit else 0
                if line_length + first > limit or inner > limit:
                    offset = 0 if line_length + first > limit else next(
                        index for index, piece in enumerate(chunk[first + 1:last].split(b"\n"), 1)
                        if len(piece) > limit)
                    raise InputError(OverlongLine(limit).message(), path, lines_before + 1 + offset)
                line_length = len(chunk) - last - 1
            if utf8:
                data = carry + chunk
                try:
                    data.decode("utf-8")
                    carry = b""
                except UnicodeDecodeError as error:
                    if error.reason == "unexpected end of data" and error.end == len(data):
                        carry = data[error.start:]  # checked with the next chunk
                    else:
                        _not_utf8(path, data, error.start, lines_before, started_at - len(carry))
            lines_before += chunk.count(b"\n")
            yield chunk
        if carry:
            _not_utf8(path, carry, 0, lines_before, line_length - len(carry))
    except (EOFError, zlib.error) as error:
        raise InputError(f"gzip data is truncated or corrupt after line {lines_before} ({error})", path) from None


def _not_utf8(path, data, position, lines_before, data_column):
    """Raise the error of a byte that is not UTF-8 at ``position`` of ``data``, which starts after
    ``lines_before`` newlines, ``data_column`` bytes into its line."""
    line = lines_before + data.count(b"\n", 0, position) + 1
    line_start = data.rfind(b"\n", 0, position) + 1
    column = position - line_start + 1 + (data_column if line_start == 0 else 0)
    raise InputError(f"not valid UTF-8 (byte 0x{data[position]:02x} at column {column}); the file may be Latin-1: "
                     "convert it with `iconv -f latin1 -t utf-8`", path, line)


def _bounded(chunks, ceiling, compressed, path):
    inflated = 0
    for chunk in chunks:
        inflated += len(chunk)
        if inflated > ceiling:
            raise InputError(f"inflates to more than {ceiling:,} bytes from {compressed:,} compressed, past the "
                             f"{max_inflation()}-fold limit for a file read whole: refused as a likely gzip bomb "
                             f"(set {MAX_INFLATION_VARIABLE} to raise it)", path)
        yield chunk


@contextmanager
def guarded_path(path, utf8=True):
    """A plain file holding what ``path`` holds, for parsers that take a file name (fastobo, pronto), after
    the checks JSONL input gets (``_checked_chunks``): the file itself when it is plain, else its content
    inflated into a temporary file, deleted afterwards."""
    import tempfile

    path = str(path)
    with _open_named(path) as handle:
        if handle.peek(2)[:2] != GZIP_MAGIC:
            for _ in _checked_chunks(handle, path, utf8):
                pass
            yield path
            return
        suffix = "".join(part for part in (os.path.splitext(path.removesuffix(".gz"))[1],) if part)
        with tempfile.NamedTemporaryFile(prefix="ontolink-", suffix=suffix) as plain:
            for chunk in _checked_chunks(handle, path, utf8):
                plain.write(chunk)
            plain.flush()
            yield plain.name


def open_input(path, binary=False, utf8=True, newline=None):
    """A named file opened for reading as a whole (an ontology, a --config file), after the checks JSONL
    input gets: line limit, truncation, UTF-8 named with file and line, a gzip bomb refused (see
    ``_checked_chunks``); gunzipped when it starts with gzip's magic bytes; text (a byte-order mark dropped)
    unless ``binary``, its line ends as ``newline`` says (``open``'s: None turns "\r\n" into "\n", "" keeps them,
    as character offsets into the file need). Its content is checked into a temporary file that the handle
    reads (on disk past 8 MiB), so the parser reads exactly what was checked."""
    import tempfile

    path = str(path)
    spool = tempfile.SpooledTemporaryFile(max_size=8 << 20)
    try:
        with _open_named(path) as handle:
            for chunk in _checked_chunks(handle, path, utf8):
                spool.write(chunk)
        spool.seek(0)
    except BaseException:
        spool.close()
        raise
    if binary:
        return spool
    return io.TextIOWrapper(spool, encoding="utf-8-sig", newline=newline)


def refuse_output_over_inputs(output, inputs=()):
    """Refuse, before anything is opened, an output file that is one of the inputs (by another name or a
    symbolic link too) or the file on stdin: opening it for writing would empty it before it is read."""
    if output in (None, "-"):
        return
    try:
        written = os.stat(output)
    except OSError:
        return  # not there yet: it cannot be an input
    if not stat.S_ISREG(written.st_mode):
        return  # /dev/null, a pipe, a terminal: opening it empties nothing
    if sys.stdin is not None:
        try:
            on_stdin = os.fstat(sys.stdin.fileno())
        except (OSError, ValueError, AttributeError):  # no real stdin (a test runner's buffer)
            on_stdin = None
        if on_stdin is not None and (on_stdin.st_dev, on_stdin.st_ino) == (written.st_dev, written.st_ino):
            raise InputError("is also the input on stdin: writing it would empty it before it is read; "
                             "give another output file", output)
    for path in inputs:
        if path in (None, "-"):
            continue
        try:
            same = os.path.samefile(path, output)
        except OSError:
            continue
        if same:
            raise InputError(f"is also the input {display_name(path)}: writing it would empty it before it is "
                             "read; give another output file", output)


def refuse_shared_outputs(outputs):
    """Refuse one file named by two output options ({option: path}; by another name or a link too): each
    would replace the other's records."""
    seen = {}
    for option, path in outputs.items():
        if path is None:
            continue
        try:  # "-" is stdout: a file it is redirected to is that file (`-o - --errors /dev/stdout > f`)
            status = os.fstat(sys.stdout.fileno()) if path == "-" else os.stat(path)
            key = (status.st_dev, status.st_ino) if stat.S_ISREG(status.st_mode) else None
        except (OSError, ValueError, AttributeError):  # not there yet; or stdout is no real file (a test's)
            key = None if path == "-" else os.path.realpath(path)
        if key is None:
            continue  # /dev/null, a pipe: written by both is what was asked
        if key in seen and not (path == "-" and seen[key][1] == "-"):  # "-" twice: one stream, written in turn
            raise UsageError(f"{path} is given to both {seen[key][0]} and {option}: each output needs its own file")
        seen[key] = (option, path)


_READ_FILES: set[tuple[int, int]] = set()  # (device, inode) of every file this process opened for reading: never an output


def _note_read(handle):
    try:
        status = os.fstat(handle.fileno())
    except (OSError, ValueError, AttributeError):
        return
    if stat.S_ISREG(status.st_mode):
        _READ_FILES.add((status.st_dev, status.st_ino))


def forget_reads():
    """A command starts: the files earlier commands of this process read are no longer its inputs (a test
    runner's process runs many; a file deleted since may lend its inode number to a new output)."""
    _READ_FILES.clear()


def refuse_read_file(path):
    """Refuse an output that is a file this process has read (``eval PRED --errors PRED``): written, it would
    replace an input with the output. Every output goes through here (``open_output``, ``write_atomically``)."""
    try:
        status = os.stat(path)
    except OSError:
        return
    if stat.S_ISREG(status.st_mode) and (status.st_dev, status.st_ino) in _READ_FILES:
        raise InputError("is also one of the input files: writing it would replace that input; give another "
                         "output file", path)


def _stdout():
    """stdout, UTF-8 whatever PYTHONIOENCODING or the locale say: JSONL is UTF-8 by definition."""
    if sys.stdout is None:
        raise InputError("stdout is closed: give the output with -o FILE", "<stdout>")
    stream = sys.stdout
    encoding = (getattr(stream, "encoding", None) or "utf-8").lower().replace("_", "-")
    if encoding not in ("utf-8", "utf8") and hasattr(stream, "reconfigure"):
        stream.reconfigure(encoding="utf-8", errors="strict")
    return stream


class OutputFailed(OntolinkError):
    """An output file could not be written (no space, a read-only file system): exit status 1. ``path``: the
    output's name ("<stdout>" for stdout)."""

    def __init__(self, message, path=None):
        super().__init__(message)
        self.path = path


def write_failure(path, error):
    """The one-line error of an OSError met writing ``path``: a missing directory, a directory or a denied
    permission is a bad path (exit 2); no space or a read-only file system, a failure (exit 1)."""
    reason = error.strerror or str(error)
    if isinstance(error, FileNotFoundError):
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            return InputError(f"cannot be written: the directory {parent} does not exist", path)
        return InputError(f"cannot be written ({reason})", path)
    if isinstance(error, IsADirectoryError):
        return InputError("cannot be written: it is a directory", path)
    if isinstance(error, PermissionError):
        return InputError("cannot be written (permission denied)", path)
    return OutputFailed(f"{path}: cannot be written ({reason})", path)


def _commits(exc_type):
    """Whether an output closed while ``exc_type`` unwinds keeps what was written: yes when the command
    ended well or was interrupted (Ctrl-C, SIGTERM: every record written before the signal is kept, as
    documented); no when it failed, which leaves the file that was there before, untouched."""
    return exc_type is None or issubclass(exc_type, (KeyboardInterrupt, SystemExit))


class _HeldOutput:
    """An output file written under a temporary name beside it and renamed over it when closed, so that a
    failed command leaves the old file whole instead of a fragment; its writes SIGINT and SIGTERM wait for
    (``signal_guard``), so that an interrupted command closes a whole file: a .gz one with its CRC and
    length right, holding every record written. ``temporary`` None: written in place (a device, a pipe)."""

    def __init__(self, stream, path, temporary=None):
        self._stream = stream
        self._path = path
        self._temporary = temporary
        self._held = signal_guard.hold()

    def write(self, data):
        with signal_guard.uninterrupted:
            try:
                return self._stream.write(data)
            except OSError as error:
                raise write_failure(self._path, error) from None

    def flush(self):
        with signal_guard.uninterrupted:
            try:
                self._stream.flush()
            except OSError as error:
                raise write_failure(self._path, error) from None

    def close(self, commit=True):
        try:
            with signal_guard.uninterrupted:
                try:
                    self._stream.close()
                    if self._temporary is not None and commit:
                        os.replace(self._temporary, self._path)
                        self._temporary = None
                except OSError as error:
                    raise write_failure(self._path, error) from None
                finally:
                    if self._temporary is not None:
                        try:
                            os.unlink(self._temporary)
                        except OSError:
                            pass
                        self._temporary = None
        finally:
            if self._held:
                self._held = False
                signal_guard.release()

    @property
    def closed(self):
        return self._stream.closed

    def __getattr__(self, name):
        return getattr(self._stream, name)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        self.close(commit=_commits(exc_type))


def _open_file(path, binary, compressed, final_name=None):
    """``path`` opened for writing; ``compressed``: gzip, whose header records ``final_name``'s base name (not
    the temporary's, which `gunzip -N` would restore) and no time, so the same records give the same bytes."""
    if not compressed:
        return open(path, "wb") if binary else open(path, "w", encoding="utf-8", newline="")
    raw = open(path, "wb")
    try:
        packed = gzip.GzipFile(filename=os.path.basename(final_name or path), mode="wb", fileobj=raw, mtime=0)
    except BaseException:
        raw.close()
        raise
    packed.myfileobj = raw  # what gzip.GzipFile closes with itself, as when it opened the file by name
    return packed if binary else io.TextIOWrapper(packed, encoding="utf-8", newline="")


def temporary_beside(path):
    """The name ``path`` is written under before it is renamed over it."""
    import threading

    directory, name = os.path.split(path)
    return os.path.join(directory, f".{name}.tmp-{os.getpid()}-{threading.get_ident()}")


def open_output(path, binary=False):
    """stdout (``-``) or a file (.gz compressed) for writing, text or binary; closing it never closes
    stdout. A file that is also the input on stdin, or one this process read, is refused. A regular file is
    written beside itself and renamed into place when closed (``_HeldOutput``); a failure opening or writing
    it is one line naming it (``write_failure``)."""
    if path in (None, "-"):
        stdout = _stdout()
        return nullcontext(stdout.buffer if binary else stdout)
    refuse_output_over_inputs(path)
    path = str(path)
    refuse_read_file(path)
    try:
        existing = os.stat(path)
    except OSError:
        existing = None
    if existing is not None and not stat.S_ISREG(existing.st_mode):  # /dev/null, /dev/full, a pipe
        # opened by the name given: /dev/stdout or /dev/fd/N on a pipe resolves to "/proc/PID/fd/pipe:[N]",
        # a name that cannot be opened
        try:
            return _HeldOutput(_open_file(path, binary, path.endswith(".gz")), path)
        except OSError as error:
            raise write_failure(path, error) from None
    target = os.path.realpath(path)  # through a symbolic link: the file it names is replaced, not the link
    temporary = temporary_beside(target)
    try:
        stream = _open_file(temporary, binary, path.endswith(".gz"), path)
    except PermissionError:
        if existing is None or not os.access(target, os.W_OK):
            raise write_failure(path, PermissionError(13, "Permission denied")) from None
        try:  # a writable file in a directory that is not: written in place
            return _HeldOutput(_open_file(target, binary, path.endswith(".gz")), path)
        except OSError as error:
            raise write_failure(path, error) from None
    except OSError as error:
        raise write_failure(path, error) from None
    if existing is not None:
        try:
            os.chmod(temporary, stat.S_IMODE(existing.st_mode))
        except OSError:
            pass
    return _HeldOutput(stream, target, temporary)


class ReadStats:
    """What a reader saw: records, skipped bad lines, duplicate ids, and, when the record of ids filled up
    (``seen_ids``), among how many records duplicates were looked for and how many ids came after."""

    def __init__(self):
        self.records = 0
        self.skipped = 0
        self.duplicates = 0
        self.ids_checked_among = 0  # records read before the record of ids filled up (in each such file)
        self.unrecorded_ids = 0  # ids after that: checked against the recorded ones, not recorded
        self.line = None  # the line of the last record read

    def add(self, other):
        """Count what another reader (of another shard, elsewhere) saw too."""
        self.records += other.records
        self.skipped += other.skipped
        self.duplicates += other.duplicates
        self.ids_checked_among += other.ids_checked_among
        self.unrecorded_ids += other.unrecorded_ids

    def summary(self):
        parts = [plural(self.records, "record")]
        if self.skipped:
            parts.append(f"{plural(self.skipped, 'invalid line')} skipped")
        if self.duplicates:
            parts.append(plural(self.duplicates, "duplicate id"))
        if self.unrecorded_ids:
            from ontolink.core.seen_ids import BUDGET_VARIABLE  # late: loads numpy

            parts.append(f"duplicate ids checked among the first {plural(self.ids_checked_among, 'record')} "
                         f"(set {BUDGET_VARIABLE} to raise the limit)")
        return ", ".join(parts)


def plural(count, singular, plural_form=None):
    """"1 record", "2 records": a count with its noun, for summary lines."""
    return f"{count} {singular if count == 1 else plural_form or singular + 's'}"


def read_records(path="-", validate=None, skip_invalid=False, stats=None, check_duplicate_ids=False, waiting=None):
    """Yield the JSON objects of a JSONL file (``-`` is stdin, ``.gz`` is gunzipped).

    ``validate(record)`` may raise ``ValueError`` with a message naming the
    field; the reader adds file and line. Blank lines, CRLF line ends, a UTF-8
    byte-order mark and a missing final newline are all accepted. ``waiting``: see ``open_input_lines``.
    """
    with open_input_lines(path, waiting) as lines:
        yield from parse_jsonl(lines, display_name(path), validate, skip_invalid, stats, check_duplicate_ids)


PIPE_PATIENCE = 0.25  # seconds a batch read from a pipe may wait for more records before it is handed on


def record_batches(records, size, first_size=None, waiting=None):
    """Lists of up to ``size`` records. When reading fails (a bad line), the
    records read before it are still yielded, then the error propagates.

    ``first_size``: the first list holds this many, each next one twice as many up to ``size``, so that
    output (and a progress bar) starts moving early while long runs keep large batches. ``waiting`` (a
    ``WaitingInput`` of the records' pipe): a list is handed on before it is full when the pipe has nothing
    more for it and its first record came ``PIPE_PATIENCE`` seconds ago (it waits that long for more), so
    that a line typed gets its answer, and a trickle of records is answered as it comes; a fast writer's
    records still make large batches (handed on at every pause, a writer's steady stream made batches of a
    few records, which cost more than they saved)."""
    batch = []
    limit = min(size, first_size or size)
    first_came = 0.0
    try:
        for record in records:
            if not batch:
                first_came = time.monotonic()
            batch.append(record)
            full = len(batch) >= limit
            if full or (waiting is not None
                        and waiting.stalled(max(0.0, PIPE_PATIENCE - (time.monotonic() - first_came)))):
                yield batch
                batch = []
                limit = min(size, limit * 2) if full else limit
                if waiting is not None and waiting.stalled(0):
                    flush_stdout()  # the next read waits: what the batches gave reaches the output's reader first
    except InputError:
        if batch:
            yield batch
        raise
    if batch:
        yield batch


def flush_stdout():
    """stdout flushed (a write error is left to the writer, whose own flush names it), by the main thread, which
    writes it. A reader on another thread (ontolink.engines.ahead) hands its batches on before they are written:
    its flush would come before their records, and race the writer; the main thread flushes before it waits."""
    if threading.current_thread() is not threading.main_thread():
        return
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        raise
    except (OSError, ValueError):
        pass


class RecordBatchReader:
    """``reader(path, stats)``: the records of one JSONL input (``read_records``) in lists of up to
    ``batch_size``; picklable, so that an engine can read its files elsewhere."""

    def __init__(self, batch_size, validate=None, skip_invalid=False, check_duplicate_ids=False, first_size=None):
        self.batch_size = batch_size
        self.first_size = first_size  # see record_batches
        self.options = {"validate": validate, "skip_invalid": skip_invalid,
                        "check_duplicate_ids": check_duplicate_ids}

    def __call__(self, path, stats):
        waiting = WaitingInput()  # a pipe's records are handed on when it goes quiet (record_batches)
        return record_batches(read_records(path, stats=stats, waiting=waiting, **self.options), self.batch_size,
                              self.first_size, waiting)


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
        if isinstance(raw, OverlongLine):
            bad(line_number, raw.message())
            continue
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
    seen_ids = None
    if check_duplicate_ids:
        from ontolink.core.seen_ids import BUDGET_VARIABLE, SeenIds  # late: loads numpy

        seen_ids = SeenIds()
    records_read, spent = 0, False  # spent: the record of ids is full, and that was said
    bad = _problem_handler(name, skip_invalid, stats)
    for line_number, text in _lines_of_text(iter(lines), name, bad):
        text = text.strip()
        if not text:
            continue
        try:
            record = loads(text)
        except json.JSONDecodeError as error:
            # some of the standard library's messages end in "at" ("Invalid control character at")
            bad(line_number, f"invalid JSON: {error.msg.removesuffix(' at')} at column {error.colno}")
            continue
        except ValueError as error:  # nested too deep, a lone surrogate
            bad(line_number, f"invalid JSON: {error}")
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
            first = seen_ids.first_line(record["id"], line_number)
            if first is not None:
                stats.duplicates += 1
                if stats.duplicates == 1:
                    warn(f"{name}:{line_number}: duplicate id {record['id']!r} (first at line {first}); "
                         "processed anyway, further duplicates are only counted")
            elif seen_ids.full:  # new, and not recorded: said once, and in the summary
                if not spent:
                    spent = True
                    stats.ids_checked_among += records_read
                    warn(f"{name}:{line_number}: duplicate ids are checked among the first "
                         f"{plural(records_read, 'record')} only: the {seen_ids.budget:,} bytes for recording ids "
                         f"are spent ({seen_ids.recorded:,} ids); later ids are checked against those, not "
                         f"recorded (set {BUDGET_VARIABLE} to raise the limit)")
                stats.unrecorded_ids += 1
        records_read += 1
        stats.records += 1
        stats.line = line_number  # a writer refusing the record names its line
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
        stream = _stdin_buffer()
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


MAX_JSON_DEPTH = 1024  # orjson's limit; the standard library's parser would exhaust Python's stack


class NonFiniteNumber(float):
    """NaN, Infinity or -Infinity read from a record: kept as a float, and written back as it was read
    (orjson would write null) because fields a command does not know pass through unchanged."""


_LONG_DIGITS = re.compile(r"\d{19}")  # what may be an integer past 64 bits


class OutOfRangeNumber(float):
    """A number past a double's range (``1e400``) read from a record: infinite as a float, and written back
    with the digits it was read with (orjson refuses to read it; the standard library would write
    ``Infinity``, orjson ``null``) because fields a command does not know pass through unchanged."""

    def __new__(cls, text):
        number = super().__new__(cls, text)
        number.text = text
        return number


def _parse_float(text):
    number = float(text)
    return OutOfRangeNumber(text) if number in (math.inf, -math.inf) else number


def _with_literals(value, literals):
    """``value`` with each ``OutOfRangeNumber`` replaced by a marker string numbered by its place in
    ``literals`` (which receives its text), for ``dumps`` to put the digits back."""
    if isinstance(value, OutOfRangeNumber):
        literals.append(value.text)
        return f"\x00ontolink-number-{len(literals) - 1}\x00"
    if isinstance(value, dict):
        return {key: _with_literals(item, literals) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_with_literals(item, literals) for item in value]
    return value


def _has_lone_surrogate(value):
    """Whether a string anywhere in ``value`` (keys too) cannot be encoded as UTF-8 (iteratively: a value may
    nest almost as deep as Python's recursion limit)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def loads(text):
    """One JSON value: orjson (5x faster on linked records), the standard library where orjson refuses
    (NaN, integers past 64 bits, lone surrogates) or to word the error of an invalid line.

    Raises ValueError (``json.JSONDecodeError`` for a syntax error) for text that is not JSON, for nesting
    deeper than ``MAX_JSON_DEPTH`` and for an escaped lone surrogate (``"\\ud800"``: no UTF-8 writer can
    write it back)."""
    if _LONG_DIGITS.search(text) is None:  # orjson reads an integer past 64 bits as a float, losing digits
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    try:
        value = json.loads(text, parse_constant=NonFiniteNumber, parse_float=_parse_float)
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels") from None
    if ("\\ud" in text or "\\uD" in text) and _has_lone_surrogate(value):
        raise ValueError("a lone UTF-16 surrogate (\\ud800-\\udfff) is not a character")
    return value


def dumps(record):
    """One compact JSON line: orjson (7x faster than the standard library on a linked record of 64
    candidates), which writes NaN as null; the standard library for what orjson cannot write (numpy
    scalars, integers past 64 bits, keys that are not strings, NaN and Infinity as they were read)."""
    try:
        return orjson.dumps(record).decode("utf-8")
    except TypeError:
        pass
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    if "Infinity" not in text:
        return text
    literals = []
    try:
        marked = _with_literals(record, literals)
    except RecursionError:
        return text
    if not literals:
        return text
    text = json.dumps(marked, ensure_ascii=False, separators=(",", ":"))
    for number, literal in enumerate(literals):
        text = text.replace(f'"\\u0000ontolink-number-{number}\\u0000"', literal, 1)
    return text


class RecordWriter:
    """Write dicts as JSONL to stdout (``-``) or a file (``.gz`` compressed).

    ``flush()`` after each batch so a downstream command sees records as soon
    as they are ready.
    """

    def __init__(self, path="-"):
        self.path = path
        self._owned = path not in (None, "-")
        self._stream = open_output(path) if self._owned else _stdout()
        self.count = 0

    def write(self, record):
        try:
            self._stream.write(dumps(record) + "\n")
        except BrokenPipeError:
            raise
        except OSError as error:
            raise write_failure(display_name(self.path).replace("<stdin>", "<stdout>"), error) from None
        self.count += 1

    def write_all(self, records, flush_every=64):
        for record in records:
            self.write(record)
            if self.count % flush_every == 0:
                self.flush()
        self.flush()

    def flush(self):
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise write_failure(display_name(self.path).replace("<stdin>", "<stdout>"), error) from None

    def close(self, commit=True):
        """Close the file (``commit`` False: leave the file that was there before, see ``_HeldOutput``)."""
        if not self._owned:
            self.flush()
            return
        try:
            if commit:
                self.flush()
        finally:
            self._stream.close(commit=commit)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        # a bad input line stops the command with the records before it written, as documented (JSONL's
        # records are whole lines: what is kept is valid); a failure to write leaves the old file
        self.close(commit=_commits(exc_type) or (exc_type is not None and issubclass(exc_type, InputError)))
