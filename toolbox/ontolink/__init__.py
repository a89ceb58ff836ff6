"""ontolink: link scientific text to ontologies and knowledge graphs.

The command line is ``ontolink``; from Python (docs/python.md)::

    import ontolink

    index = ontolink.load_index("idx/hpo")          # built by `ontolink index` or ontolink.build_index
    index.link(["seizures"], top_k=5)               # the records `ontolink link` writes

The functions below live in ``ontolink.api`` and are imported on first use, so ``import ontolink`` (and
``ontolink --help``) load nothing else.
"""

from ontolink.version import __version__

__all__ = ["__version__", "Index", "annotate", "build_index", "evaluate", "load_index", "load_ontology", "train_ranker"]


def __getattr__(name):
    if name in __all__:  # the API, imported on first use
        from ontolink import api  # late: the API (and what it loads) only when first used

        return getattr(api, name)
    raise AttributeError(f"module 'ontolink' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *__all__])
