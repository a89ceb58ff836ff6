"""The in-process engine: batches one after another in this process, the next one's search overlapping this one's
finishing where the function has those two stages."""

from collections.abc import Callable, Iterable, Iterator
import threading
from concurrent.futures import Future
from typing import Any

from ontolink.core.device import usable_threads
from ontolink.engines import ENGINES, Engine


@ENGINES.register("local")
class LocalEngine(Engine):
    in_process = True

    def map(self, function: Callable[[Any], Any], batches: Iterable[Any]) -> Iterator[Any]:
        # a function whose call is then(batch, first(batch)) offers the two as stages()
        stages = function.stages() if hasattr(function, "stages") else None
        if stages is None or usable_threads() < 2:
            for batch in batches:
                yield function(batch)
            return
        first, then = stages
        yield from pipelined(first, then, batches)


def pipelined(first: Callable[[Any], Any], then: Callable[[Any, Any], Any], batches: Iterable[Any]) -> Iterator[Any]:
    """``then(batch, first(batch))`` for each batch, in order, with the next batch read and its ``first`` run on a
    second thread meanwhile. For a ``first`` whose work releases the GIL (ONNX Runtime and numpy: encoding and the
    name scan) and a ``then`` that is Python (candidate records, ranker features, JSON): the cores an encoder
    leaves idle while Python runs encode the next batch.

    The next batch is read on that thread too, so a result is yielded as soon as it is ready even when the next
    input has not come yet (a pipe fed line by line). A batch that cannot be read (a bad line) raises after the
    results of every batch before it. The thread is a daemon, and nothing waits for it when the caller stops
    (`| head`, Ctrl-C): it may be blocked reading an input that never comes."""
    iterator = iter(batches)

    def read_and_search() -> tuple[Any, Any] | None:
        batch = next(iterator, _END)
        return None if batch is _END else (batch, first(batch))

    pending = _on_a_thread(read_and_search)
    while True:
        ready = pending.result()
        if ready is None:
            return
        pending = _on_a_thread(read_and_search)
        yield then(*ready)


_END = object()


def _on_a_thread(function: Callable[[], Any]) -> Future:
    """The future of ``function()`` run on a daemon thread of its own (one per batch: batches are large)."""
    future: Future = Future()

    def run() -> None:
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(function())
            except BaseException as error:  # noqa: B036  (handed to the caller, raised there)
                future.set_exception(error)

    threading.Thread(target=run, name=READING_AHEAD, daemon=True).start()
    return future


READING_AHEAD = "search-ahead"  # the threads' name


def reading_ahead() -> bool:
    """Whether a thread of ``pipelined`` is still reading or searching a batch nobody will take."""
    return any(thread.name == READING_AHEAD and thread.is_alive() for thread in threading.enumerate())
