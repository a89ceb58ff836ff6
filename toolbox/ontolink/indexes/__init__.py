"""Name indexes: one per ``--method``, registered in ``NAME_INDEXES``. Each maps query texts to the
best-scoring name rows."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ontolink.core.registry import Registry


class NameIndex:
    """Base class: ``build`` from texts, ``save``/``load`` a directory, ``search`` texts.

    ``uses_encoder`` says whether ``build`` takes a sentence encoder (``--encoder``/``--model``);
    ``tokens`` whether names are indexed token by token (a multi-vector index, built from a token model).
    """

    method: str | None = None
    files: tuple[str, ...] = ()
    uses_encoder: bool = False
    tokens: bool = False

    if TYPE_CHECKING:
        # What every registered index implements; its own keywords differ (an encoder, TF-IDF's min_df,
        # a multi-vector index's texts), so the checker takes any after the first.
        @classmethod
        def build(cls, texts: Sequence[str], *args: Any, **options: Any) -> NameIndex: ...

        @classmethod
        def load(cls, *args: Any, **options: Any) -> NameIndex: ...  # (directory, manifest, ...)

        def save(self, directory: Path) -> None: ...

        def __len__(self) -> int: ...

    def search(self, texts: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Return (scores, rows): two (len(texts), k) arrays, best first; rows -1 pad."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        return {"method": self.method}


NAME_INDEXES: Registry[NameIndex] = Registry("index method", "index", "ontolink.indexes", NameIndex)
