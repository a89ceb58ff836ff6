"""The options of the commands run by core alone (`cache clear`), one typed object per command with each default
given here once: the command line shows these defaults and passes the object to the library function. Cheap to
import: `--help` reads it without loading what the commands run."""

from __future__ import annotations

from dataclasses import dataclass

# The defaults that options of many commands share, given once: the options objects and the shared click
# options (ontolink.cli.options) both read them.
STDIO = "-"  # a file option's default: stdin for an input, stdout for an output
AUTO_DEVICE = "auto"  # --device: CUDA when torch sees it, else the CPU
DEFAULT_SEED = 0


@dataclass(frozen=True)
class CacheClearOptions:
    """Everything `ontolink cache clear` is asked, each default given here once."""

    kinds: tuple[str, ...] = ()  # the kinds to clear (ontolink.core.cache.CACHE_KINDS, or "other")
    everything: bool = False  # every kind the cache holds (--all); give it or kinds, not both
