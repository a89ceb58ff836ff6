"""The options of `ontolink link` that the library decides: how many candidates a mention gets. Cheap to import."""

from __future__ import annotations

from pathlib import Path
from typing import Any

DEFAULT_TOP_K = 10  # candidates per mention: R@1 and R@5 are the same at any depth, the output a sixth of 64's


def trained_top_k(ranker: Any, reranker: Any, default: int = DEFAULT_TOP_K) -> int:
    """--top-k's default: 10 candidates (R@1 and R@5 are the same at any depth, the output a sixth of 64's),
    and for a ranker or reranker the depth it was trained to order."""
    from ontolink.core.artifact_files import number

    # a ranker's or reranker's manifest comes from anyone: its depth must be one (a string was a TypeError deep
    # in the linker); one without it is of 64
    for artifact, block in ((ranker, "training"), (reranker, "options")):
        if artifact is None:
            continue
        manifest = getattr(artifact, "manifest", None) or {}
        if not isinstance(manifest.get(block), dict) or "top_k" not in manifest[block]:
            return 64
        return number(manifest, Path(artifact.directory) / "manifest.json", block, "top_k", low=1)
    return default
