"""The in-process engine: batches one after another in this process (the batches of the inputs it reads, for a
function that prepares batches, prepared one step ahead on a second thread: ontolink.engines.ahead)."""

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ontolink.engines import ENGINES, Engine
from ontolink.engines.ahead import prepared_ahead


@ENGINES.register("local")
class LocalEngine(Engine):
    in_process = True

    def map(self, function: Callable[[Any], Any], batches: Iterable[Any]) -> Iterator[Any]:
        for batch in batches:
            yield function(batch)

    def map_inputs(self, function: Callable[[Any], Any], paths: Sequence[str],
                   read: Callable[[str, Any], Iterator[Any]], stats: Any) -> Iterator[tuple[int, Any]]:
        # a function that can do part of a batch's work ahead (``prepare``) has it done on a second thread, with
        # the reading, while the batch before is processed here (ontolink.engines.ahead). Only inputs that
        # ``read`` reads (files, stdin): ``map`` keeps any other iterable on the caller's thread (a Python
        # caller's generator may hold objects of its own thread, such as a sqlite3 cursor)
        prepare = getattr(function, "prepare", None)
        if prepare is None:
            yield from super().map_inputs(function, paths, read, stats)
            return
        for position, path in enumerate(paths):
            for result in prepared_ahead(function, prepare, read(path, stats)):
                yield position, result
