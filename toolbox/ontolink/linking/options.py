"""The options of `ontolink link`, one typed object with each default given here once (the command line shows
these defaults and passes the object to ``ontolink.linking.run.link_files``), and how many candidates a mention
gets. Cheap to import: `--help` reads it without loading what linking runs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ontolink.core.options import AUTO_DEVICE, STDIO
from ontolink.core.artifact_files import number
from ontolink.ranking import AUTO_PRIOR

if TYPE_CHECKING:
    from ontolink.ontology import OntologySource

DEFAULT_TOP_K = 10  # candidates per mention: R@1 and R@5 are the same at any depth, the output a sixth of 64's


def trained_top_k(ranker: Any, reranker: Any, default: int = DEFAULT_TOP_K) -> int:
    """--top-k's default: 10 candidates (R@1 and R@5 are the same at any depth, the output a sixth of 64's: a
    ranker orders at least this depth whatever --top-k, ``ranker_depth``), and for a ranker or reranker the depth
    it was trained to order."""
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


@dataclass(frozen=True)
class LinkOptions:
    """Everything `ontolink link` is asked (``link_files`` runs it)."""

    index_dir: str
    phrases: tuple[str, ...] = ()  # linked instead of input_path, as records with ids "1", "2", ...
    input_path: str = STDIO  # a file, a folder or a glob of shards; "-" is stdin
    skip_invalid: bool = False
    output_path: str = STDIO
    output_format: str | None = None  # jsonl or tsv; None: tsv for a .tsv output_path, else jsonl
    fields_text: str | None = None  # --fields FIELD,...
    candidate_fields_text: str | None = None  # --candidate-fields FIELD,...
    no_context: bool = False
    output_dir: str | None = None  # one output shard per input shard
    top_k: int | None = None  # None: DEFAULT_TOP_K, or the depth a ranker or reranker was trained on
    batch_size: int | None = None  # None: the linking step's own (smaller with a reranker)
    ontology: OntologySource | None = None  # checked by content hash against the index's
    entities_path: str | None = None  # a file of ids: candidates only among these entities
    where: tuple[str, ...] = ()  # FIELD=VALUE,...: candidates only among the entities with these values
    reranker_dir: str | None = None
    ranker_dir: str | None = None  # None: the index's default ranker (ontolink.ranking.default), unless no_ranker
    no_ranker: bool = False  # the index's order: what `link` wrote before it had a default ranker
    prior: str = AUTO_PRIOR
    with_features: bool = False
    nil_threshold: str | None = None  # a number or "auto"
    annotate_ids: bool = True
    device: str = AUTO_DEVICE
    start_engine: Callable[..., Any] | None = None  # cli.options.engine_options; None: this process


def ranker_depth(ranker: Any, top_k: int) -> int:
    """How many candidates ``ranker`` orders for --top-k ``top_k`` (the first ``top_k`` are written): at least the
    depth it was trained at. Ordering only the K it was given, its best at --top-k 1 was the retriever's (GSC+
    R@1 0.746 against 0.755 at 10)."""
    return max(top_k, trained_top_k(ranker, None))
