"""The in-process engine: batches one after another in this process."""

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ontolink.engines import ENGINES, Engine


@ENGINES.register("local")
class LocalEngine(Engine):
    in_process = True

    def map(self, function: Callable[[Any], Any], batches: Iterable[Any]) -> Iterator[Any]:
        for batch in batches:
            yield function(batch)
