"""Hold SIGINT and SIGTERM while an output file is being written to, so that a Ctrl-C or a `kill` never lands
between two halves of one write.

Python runs a signal handler between any two bytecodes: a KeyboardInterrupt raised inside ``gzip``'s write,
after the data is compressed and before its CRC and length are updated, leaves a member that no reader
accepts, and SIGTERM's default action ends the process with no gzip trailer at all. While an owned output
is open, both signals are therefore caught; one that arrives inside a write is delivered when the write
returns, as ``KeyboardInterrupt`` (SIGINT) or ``SystemExit(143)`` (SIGTERM). Either unwinds through the
writer's ``close``, which finishes the file: everything written before the signal stays readable.
"""

import signal
import threading

TERMINATED = 128 + signal.SIGTERM
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _Guard:
    def __init__(self):
        self.users = 0  # open outputs holding the handlers
        self.depth = 0  # writes in progress
        self.pending = []
        self.previous = {}

    def handle(self, signum, frame):
        if self.depth:
            self.pending.append(signum)
            return
        self.deliver(signum, frame)

    def deliver(self, signum, frame=None):
        previous = self.previous.get(signum, signal.SIG_DFL)
        if callable(previous) and previous is not self.handle:
            previous(signum, frame)  # Python's default_int_handler raises KeyboardInterrupt
        elif previous == signal.SIG_IGN:
            return
        elif signum == signal.SIGINT:
            raise KeyboardInterrupt
        else:
            raise SystemExit(TERMINATED)

    def deliver_pending(self):
        if self.pending and not self.depth:
            signum = self.pending[0]
            self.pending.clear()
            self.deliver(signum)


_GUARD = _Guard()


def _main_thread():
    return threading.current_thread() is threading.main_thread()


def hold():
    """An output starts: catch SIGINT and SIGTERM until every held output is released."""
    if not _main_thread():
        return False
    if _GUARD.users == 0:
        for signum in _SIGNALS:
            _GUARD.previous[signum] = signal.getsignal(signum)
            signal.signal(signum, _GUARD.handle)
    _GUARD.users += 1
    return True


def release():
    """An output is closed: the last one puts the previous handlers back, then delivers a held signal."""
    _GUARD.users -= 1
    if _GUARD.users == 0:
        for signum in _SIGNALS:
            signal.signal(signum, _GUARD.previous.get(signum, signal.SIG_DFL))
    _GUARD.deliver_pending()


class _Uninterrupted:
    """``with uninterrupted:`` a write that SIGINT and SIGTERM wait for (when an output holds the handlers);
    a class, not a generator, because it wraps every record written."""

    def __enter__(self):
        _GUARD.depth += 1

    def __exit__(self, kind, value, traceback):
        _GUARD.depth -= 1
        if kind is None:
            _GUARD.deliver_pending()


uninterrupted = _Uninterrupted()
