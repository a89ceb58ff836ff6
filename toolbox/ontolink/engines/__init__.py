"""Execution engines: how a step's batches are processed, registered in ``ENGINES``.

A step cuts its input into batches and hands the engine a function of one
batch; the engine yields the function's results in input order (so the output
is the same whatever the engine), streaming: a result is yielded as soon as
it and all before it are ready. An engine that runs batches in other processes
pickles the function once per worker, so a step's function pickles as what it
needs to load (an index directory, a model name), not as loaded arrays.
"""

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ontolink.core.registry import Registry
from ontolink.core.options import AUTO_DEVICE


class Engine:
    """``map(function, batches)``: yield ``function(batch)`` for each batch of an iterable, in order.

    ``workers`` is how many processes run batches at once, ``address`` the cluster to join and
    ``device`` where workers compute (``auto`` gives each one a GPU where the cluster has them).
    """

    in_process: bool = False  # True: batches run here, one after another

    def __init__(self, workers: int = 1, address: str | None = None, device: str = "auto") -> None:
        self.workers = workers
        self.address = address
        self.device = device

    def map(self, function: Callable[[Any], Any], batches: Iterable[Any]) -> Iterator[Any]:
        raise NotImplementedError

    def map_inputs(self, function: Callable[[Any], Any], paths: Sequence[str],
                   read: Callable[[str, Any], Iterator[Any]], stats: Any) -> Iterator[tuple[int, Any]]:
        """``(position, function(batch))`` for the batches that ``read(path, stats)`` yields of each of
        ``paths`` (files, ``-`` for stdin) in turn, ``position`` the path's index in ``paths``. ``read``
        raises at a bad line after yielding the batches before it; the results of those come first.
        An engine may read the files elsewhere (on Ray, in Ray Data tasks) and add its counts to ``stats``."""
        for position, path in enumerate(paths):
            for result in self.map(function, read(path, stats)):
                yield position, result

    def close(self) -> None:
        """Release workers (none for an in-process engine)."""

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


ENGINES: Registry[Engine] = Registry("engine", "engine", "ontolink.engines", Engine)
DEFAULT_ENGINE = "local"


def open_engine(name: str = DEFAULT_ENGINE, workers: int = 1, address: str | None = None,
                device: str = AUTO_DEVICE) -> Engine:
    """The engine registered as ``name``, started (a Ray engine joins or starts its cluster here)."""
    return ENGINES.get(name)(workers=workers, address=address, device=device)
