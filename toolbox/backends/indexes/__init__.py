"""Name indexes: one per ``--method``. Each maps query texts to the best-scoring name rows.

Backends register here as "module:Class" and are imported only when chosen,
so ``ontolink --help`` never imports torch or faiss.
"""

import importlib

INDEX_METHODS = {
    "dense": "toolbox.backends.indexes.dense:DenseNameIndex",
    "tfidf": "toolbox.backends.indexes.tfidf:TfidfNameIndex",
}


def index_class(method):
    module_name, class_name = INDEX_METHODS[method].split(":")
    return getattr(importlib.import_module(module_name), class_name)


class NameIndex:
    """Base class: ``build`` from texts, ``save``/``load`` a directory, ``search`` texts."""

    method = None
    files = ()

    def search(self, texts, k):
        """Return (scores, rows): two (len(texts), k) arrays, best first; rows -1 pad."""
        raise NotImplementedError

    def describe(self):
        return {"method": self.method}
