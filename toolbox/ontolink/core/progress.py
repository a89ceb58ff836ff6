"""Progress on stderr. On a terminal a bar (tqdm); otherwise (a log file, CI, ``nohup``) a plain line every
``ONTOLINK_PROGRESS_INTERVAL`` seconds (10 by default, 0 for none) with the count, the rate and, when the total
is known, the share done and the time left, so a long run in a log does not look hung. ``set_quiet(True)``
(the commands' ``--quiet``) silences both; the one-line summaries the commands print are not progress."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from typing import IO, Any, TypeVar

from ontolink.core.errors import InputError

INTERVAL_VARIABLE = "ONTOLINK_PROGRESS_INTERVAL"
DEFAULT_INTERVAL = 10.0  # seconds between plain lines: a few lines a minute in a log, enough to see it move

_quiet = False
Item = TypeVar("Item")
# When this module was first imported (cli.main imports it at its top): process_seconds' measure for a process
# that ran something else before it exec'ed Python
_IMPORTED = time.monotonic()
LATE_EXEC = 2.0  # seconds from the process's start to this import beyond which another program ran first


def set_quiet(quiet: bool) -> None:
    """No progress at all (bar or lines) while ``quiet``: ``--quiet`` sets it for the command it is given to."""
    global _quiet
    _quiet = bool(quiet)


def progress_interval() -> float:
    """Seconds between plain progress lines: ``ONTOLINK_PROGRESS_INTERVAL`` (0: none), else 10."""
    text = os.environ.get(INTERVAL_VARIABLE, "").strip()
    if not text:
        return DEFAULT_INTERVAL
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):  # NaN and negatives fail the first test
        raise InputError(f"{INTERVAL_VARIABLE}={text!r}: expected seconds between progress lines, a number >= 0 "
                         "(0: no progress lines)")
    return value


def progress_bar(total: int | None = None, desc: str | None = None, unit: str = "it") -> Any:
    """A progress counter on stderr for ``with``: ``update(n)``, ``total`` (settable; ``refresh()`` after),
    ``n`` and ``unit``, as tqdm's. A bar on a terminal, plain lines at an interval elsewhere, nothing under
    ``set_quiet(True)``."""
    stream = sys.stderr
    if not _quiet and not _is_terminal(stream):
        interval = progress_interval()
        if interval > 0:
            return PlainProgress(total=total, desc=desc, unit=unit, interval=interval, stream=stream)
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=stream, disable=_quiet or not _is_terminal(stream),
                dynamic_ncols=True, leave=False)


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no stream, or a closed one
        return False


class PlainProgress:
    """Progress as plain lines for logs: a thread writes where the count stands every ``interval`` seconds,
    so a line comes on time even while one step (a batch, an epoch) takes longer than the interval; nothing
    when the work ends sooner. ``update`` only adds to a counter, so it costs the work nothing."""

    def __init__(self, total: int | None, desc: str | None, unit: str, interval: float, stream: IO[str]) -> None:
        self.total, self.desc, self.unit, self.n = total, desc, unit, 0
        self._interval, self._stream = interval, stream
        self._start = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> PlainProgress:
        self._thread = threading.Thread(target=self._report, name="ontolink-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def update(self, n: int = 1) -> None:
        self.n += n

    def refresh(self) -> None:
        """tqdm's redraw after a change of ``total``: the next line shows it."""

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
            self._thread = None

    def _report(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._stream.write(self.line(time.monotonic() - self._start) + "\n")
                self._stream.flush()
            except (OSError, ValueError):  # stderr closed or gone: the work goes on without progress
                return

    def line(self, elapsed: float) -> str:
        """``ontolink: index (dense): 12288/45120 tokens (27%), 1229 tokens/s, 0:10 elapsed, ETA 0:27`` (counts
        written as the summary lines write them)."""
        done, total, unit = self.n, self.total, _plural(self.unit)
        parts = [f"{done}/{total} {unit} ({100 * done / total:.0f}%)" if total else f"{done} {unit}"]
        rate = done / elapsed if elapsed > 0 else 0.0
        parts.append(f"{rate:.{0 if rate >= 10 else 1}f} {unit}/s")
        parts.append(f"{_clock(elapsed)} elapsed")
        if total and rate > 0 and done < total:
            parts.append(f"ETA {_clock((total - done) / rate)}")
        return f"ontolink: {self.desc or 'progress'}: " + ", ".join(parts)


def _plural(unit: str) -> str:
    """query -> queries, batch -> batches, name -> names (the units the commands count in)."""
    if unit.endswith("y") and unit[-2:-1] not in ("a", "e", "o", "u"):
        return unit[:-1] + "ies"
    return unit + ("es" if unit.endswith(("s", "x", "tch", "sh")) else "s")


def _clock(seconds: float) -> str:
    """0:07, 12:30, 1:02:03."""
    minutes, second = divmod(int(seconds + 0.5), 60)
    hours, minute = divmod(minutes, 60)
    return f"{hours}:{minute:02d}:{second:02d}" if hours else f"{minute}:{second:02d}"


def counting(items: Iterable[Item], desc: str, unit: str = "record", total: int | None = None) -> Iterator[Item]:
    """``items`` unchanged, counted on ``progress_bar`` (count and rate, share done when ``total`` is known)."""
    with progress_bar(total=total, desc=desc, unit=unit) as progress:
        for item in items:
            yield item
            progress.update()


def process_seconds() -> float | None:
    """Wall seconds since this process started (Linux: its start in /proc, so interpreter start-up and
    imports count), or None where that is not known: what a step reports as its start-up.

    /proc gives the fork, not the exec: a shell runs the last command of ``sh -c 'a && ontolink ...'`` (a
    Makefile line, ``bash -c``) in its own process, which began before ``a``. When this module's import
    came more than ``LATE_EXEC`` seconds after that start, the time since the import is what counts."""
    since_import = time.monotonic() - _IMPORTED
    try:
        with open("/proc/self/stat", encoding="ascii") as handle:
            # the fields after the command name, which is in parentheses and may hold spaces
            fields = handle.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime", encoding="ascii") as handle:
            uptime = float(handle.read().split()[0])
        since_start = max(0.0, uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None
    return since_import if since_start - since_import > LATE_EXEC else since_start
