"""What every reranker is: a model trained by `ontolink train reranker` that rescores a mention's retrieved
candidates at link time, one class per architecture, registered in ``RERANKERS`` under the name its manifest's
"architecture" gives ("blink": the BLINK-style cross-encoder, each candidate alone; "res": Read-and-Select, the
candidates together). ``load_reranker`` opens a reranker directory by its manifest."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ontolink.core.artifact_files import field
from ontolink.core.encoder_inputs import entity_input, mention_input
from ontolink.core.errors import InputError
from ontolink.core.manifest import read_manifest
from ontolink.core.registry import Registry
from ontolink.core.device import resolve_device
from ontolink.core.options import AUTO_DEVICE

ARTIFACT = "reranker"
DEFAULT_ARCHITECTURE = "blink"  # a manifest without "architecture" was written before ReS existed


class Reranker:
    """A trained reranker read back from ``directory`` (its checked ``manifest`` given), run on ``device``."""

    required_files: tuple[str, ...] = ()  # beside manifest.json, what the directory must hold

    def __init__(self, directory: Path, manifest: dict[str, Any], device: str = AUTO_DEVICE, batch_size: int = 128):
        self.directory = Path(directory)
        self.manifest = manifest
        self.device = resolve_device(device)
        self.batch_size = batch_size
        checked_ontology(manifest, directory)

    def check_index(self, loaded_index: Any) -> None:
        """Refuse an index of another ontology than the one the reranker was trained for."""
        check_reranker_index(self.manifest, self.directory, loaded_index)

    def rerank(self, records: Iterable[dict[str, Any]],
               definition_of: Callable[[str], str]) -> Iterator[dict[str, Any]]:
        """Each record with its candidates reordered by this reranker's score, the retriever's kept as
        retriever_score."""
        raise NotImplementedError


RERANKERS: Registry[Reranker] = Registry("reranker architecture", "reranker", "ontolink.reranking.architectures",
                                        Reranker)


def load_reranker(directory: str | Path, device: str = AUTO_DEVICE) -> Reranker:
    """A trained reranker of any registered architecture, as its manifest says (no "architecture": a BLINK one)."""
    directory = Path(directory)
    manifest = read_manifest(directory, ARTIFACT)
    architecture = manifest.get("architecture", DEFAULT_ARCHITECTURE)
    if not isinstance(architecture, str) or architecture not in RERANKERS:
        raise InputError(f"is a reranker of architecture {architecture!r}, which this version cannot read "
                         f"(it reads {', '.join(RERANKERS.names())})", directory)
    reranker_class = RERANKERS.get(architecture)
    for name in reranker_class.required_files:
        if not (directory / name).exists():
            raise InputError(f"{ARTIFACT} is truncated: {name} is missing; rebuild it", directory)
    return reranker_class(directory, manifest, device=device)


def checked_ontology(manifest: dict[str, Any], directory: str | Path) -> dict[str, Any]:
    """The manifest's ontology block: a label and a SHA-256 (what ``check_reranker_index`` compares)."""
    path = Path(directory) / "manifest.json"
    field(manifest, path, "ontology", "sha256", kind=str)
    field(manifest, path, "ontology", "label", kind=str)
    return manifest["ontology"]


def candidate_texts(records: Sequence[dict[str, Any]],
                    definition_of: Callable[[str], str]) -> tuple[list[str], list[str]]:
    """(mention inputs, entity inputs): one pair per (record, candidate), records in order."""
    mentions, entities = [], []
    for record in records:
        text = mention_input(record)
        for candidate in record["candidates"]:
            mentions.append(text)
            entities.append(entity_input(candidate["name"], definition_of(candidate["id"])))
    return mentions, entities


def batched(score: Callable[[int, int], Any], count: int, batch_size: int, torch: Any) -> Any:
    """``score(start, end)`` (a tensor per slice) over ``count`` items, ``batch_size`` at a time, concatenated."""
    parts = [score(start, min(start + batch_size, count)) for start in range(0, count, batch_size)]
    return torch.cat(parts) if parts else torch.zeros(0)


def reordered(record: dict[str, Any], scores: Iterable[float]) -> dict[str, Any]:
    """The record with its candidates sorted by ``scores``, the retriever's kept as retriever_score."""
    rescored = [{**c, "score": round(float(score), 6), "retriever_score": c["score"]}
                for c, score in zip(record["candidates"], scores)]
    rescored.sort(key=lambda candidate: -candidate["score"])  # stable: retriever order breaks ties
    return {**record, "candidates": rescored}


def check_reranker_index(manifest: dict[str, Any], directory: str | Path, loaded_index: Any) -> None:
    """Refuse an index of another ontology than the one the reranker was trained for."""
    if manifest["ontology"]["sha256"] != loaded_index.manifest["ontology"]["sha256"]:
        raise InputError(f"was trained for ontology {manifest['ontology']['label']}, the index is for "
                         f"{loaded_index.manifest['ontology']['label']}", directory)
