"""The in-process engine: batches one after another in this process, the next one's search overlapping this one's
finishing where the function has those two stages."""

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
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
    """``then(batch, first(batch))`` for each batch, in order, with ``first`` of the next batch running on a second
    thread meanwhile. For a ``first`` whose work releases the GIL (ONNX Runtime and numpy: encoding and the name
    scan) and a ``then`` that is Python (candidate records, ranker features, JSON): the cores an encoder leaves
    idle while Python runs encode the next batch. One batch is read ahead. A batch that cannot be read (a bad
    line) raises after the results of every batch before it."""
    iterator = iter(batches)
    with ThreadPoolExecutor(1, thread_name_prefix="search-ahead") as ahead:
        try:
            current = next(iterator)
        except StopIteration:
            return
        pending = ahead.submit(first, current)
        while True:
            try:
                following = next(iterator)
            except StopIteration:
                yield then(current, pending.result())
                return
            except BaseException:
                yield then(current, pending.result())
                raise
            found = pending.result()
            pending = ahead.submit(first, following)
            yield then(current, found)
            current = following
