"""Execution engines: how a step's batches are processed, registered in ``ENGINES``.

A step cuts its input into batches and hands the engine a function of one
batch; the engine yields the function's results in input order (so the output
is the same whatever the engine), streaming: a result is yielded as soon as
it and all before it are ready.
"""

from toolbox.registry import Registry


class Engine:
    """``map(function, batches)``: yield ``function(batch)`` for each batch of an iterable, in order."""

    def map(self, function, batches):
        raise NotImplementedError

    def close(self):
        """Release workers (none for an in-process engine)."""


ENGINES = Registry("engine", "engine", "toolbox.backends.engines", Engine)
DEFAULT_ENGINE = "local"
