"""Name indexes: one per ``--method``, registered in ``NAME_INDEXES``. Each maps query texts to the
best-scoring name rows."""

from collections.abc import Sequence
from typing import Any

import numpy as np

from ontolink.core.registry import Registry


class NameIndex:
    """Base class: ``build`` from texts, ``save``/``load`` a directory, ``search`` texts.

    ``uses_encoder`` says whether ``build`` takes a sentence encoder (``--encoder``/``--model``);
    ``tokens`` whether names are indexed token by token (a multi-vector index, built from a token model).
    """

    method = None
    files = ()
    uses_encoder = False
    tokens = False

    def search(self, texts: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Return (scores, rows): two (len(texts), k) arrays, best first; rows -1 pad."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        return {"method": self.method}


NAME_INDEXES = Registry("index method", "index", "ontolink.indexes", NameIndex)
