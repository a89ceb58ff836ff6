"""Batches read and prepared one step ahead, on a second thread, while this thread runs the step's function.

The in-process engine runs a step's batches one after another. When the step's function can do part of a
batch's work ahead (``prepare``: `link` encodes the batch's new mention texts), that part of batch n+1 runs
here on a second thread while batch n is linked and written: the encoder's sessions release the GIL, so the
Python work of one batch (features, candidate records, JSON) fills the cores the encoder leaves between
batches. The reading moves to that thread too: a pipe that goes quiet holds up only the thread that waits on
it, so the batches already read are still answered at once.

``prepare`` must give the function what it would have computed itself (the encoder is batch-invariant where
`link` prepares): the output is the same, byte for byte, with or without the second thread.
"""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ontolink.core.io import flush_stdout

# batches the second thread holds ready (besides the one it is preparing): one keeps the cores busy, more
# only hold memory
READY_BATCHES = 1
_POLL_SECONDS = 0.1  # how often a waiting hand-over checks whether the consumer has stopped


def prepared_ahead(function: Callable[[Any], Any], prepare: Callable[[Any], Any],
                   batches: Iterable[Any]) -> Iterator[Any]:
    """``function(prepare(batch))`` for each batch, in order, each ``prepare`` (and the reading of
    ``batches``) on a second thread, up to ``READY_BATCHES`` batches ahead of ``function``.

    An error in reading or preparing is raised here after the results of every batch before it (a bad input
    line: what was read before it is still linked and written). Closing this generator early (``| head``)
    stops the second thread at its next hand-over; a thread waiting on its input is a daemon and ends with
    the process."""
    handed: queue.Queue = queue.Queue(maxsize=READY_BATCHES)
    stopped = threading.Event()

    def hand_over(item: tuple[str, Any]) -> bool:
        while not stopped.is_set():
            try:
                handed.put(item, timeout=_POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    def read_and_prepare() -> None:
        # Held for as long as this thread lives, which for a daemon blocked on a read is past the interpreter's
        # shutdown: when the process exits (Ctrl-C, SIGTERM, `| head`) while this thread waits inside
        # sys.stdin.buffer's read (which holds the buffer's lock), finalisation would close sys.stdin, wait a
        # second for that lock, and abort the process ("could not acquire lock ... possibly due to daemon
        # threads"). A wrapper still referenced is never closed.
        held_streams = (sys.stdin, sys.__stdin__)  # noqa: F841
        try:
            for batch in batches:
                if stopped.is_set() or not hand_over(("batch", prepare(batch))):
                    return
        except BaseException as error:  # noqa: BLE001 - raised again in the consumer's thread, in order
            hand_over(("error", error))
            return
        hand_over(("end", None))

    worker = threading.Thread(target=read_and_prepare, name="ontolink-ahead", daemon=True)
    worker.start()
    try:
        while True:
            try:
                kind, item = handed.get_nowait()
            except queue.Empty:
                # nothing ready (a quiet pipe, or a batch still encoding): what the batches before gave reaches the
                # output's reader before this waits, as the reader flushes before a read that waits when it is
                # this thread (ontolink.core.io.record_batches)
                flush_stdout()
                kind, item = handed.get()
            if kind == "end":
                return
            if kind == "error":
                raise item
            yield function(item)
    finally:
        stopped.set()
