"""Building large tables with Python's cyclic garbage collector paused.

An ontology's parsed terms or a matcher's keyed names are hundreds of thousands of small lists,
dicts and tuples. The collector runs each time enough of them have been made, and its older
generations walk every object made so far: loading HPO's terms and annotate's name tables spent
more time in those walks than in parsing. The tables hold no reference cycles to collect while
they are built, so the collector is paused for that time and runs as before afterwards.
"""

import gc
from contextlib import contextmanager


# Whether this process runs one command and exits (the `ontolink` program, not a library caller or a test
# runner): only then is what a command loads frozen (see ``collection_paused``).
_one_command = False


def one_command_process() -> None:
    """Called by the `ontolink` program before its command runs: what the command loads lives until the process
    exits, so ``collection_paused(freeze=True)`` may take it out of the collector's walks for good."""
    global _one_command
    _one_command = True


@contextmanager
def collection_paused(freeze: bool = False):
    """Pause the cyclic garbage collector inside the block (as it was before, after it; nestable).

    ``freeze``: in the `ontolink` program (``one_command_process``), also move every object made so far
    out of the collector's sight for good (``gc.freeze``): what a command loads once and keeps until it
    exits. Else (a library caller, a test runner invoking commands in its own process, where frozen objects
    would never be collected) the objects made in the block are walked once by each generation after it.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze and _one_command:
            gc.freeze()
        if was_enabled:
            gc.enable()
