"""The Read-and-Select reranker (architecture "res", `train reranker --architecture res`): reads each
(mention, candidate) and selects across a mention's candidates; its parts (the reading, the selecting
transformer) are in ontolink.reranking.read_and_select."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ontolink.core.artifact_files import REBUILD, field, number
from ontolink.core.errors import InputError
from ontolink.reranking.base import RERANKERS, Reranker, batched, candidate_texts, reordered
from ontolink.reranking.cross_encoder import load_cross_encoder
from ontolink.reranking.read_and_select import (
    READER_FOLDER,
    READINGS,
    VERSION,
    FrozenReading,
    checked_selecting,
    cross_reading_vectors,
    frozen_features,
    load_selector,
    with_retriever_scores,
)
from ontolink.core.options import AUTO_DEVICE


@RERANKERS.register("res")
class ResReranker(Reranker):
    """A trained ReS reranker: reads each (mention, candidate), selects across a mention's candidates."""

    def __init__(self, directory: Path, manifest: dict[str, Any], device: str = AUTO_DEVICE, batch_size: int = 128):
        import torch  # the [cpu] install links without torch until a reranker is asked for

        super().__init__(directory, manifest, device=device, batch_size=batch_size)
        manifest_path = Path(directory) / "manifest.json"
        reading = manifest.get("reading") or {}
        self.reading = reading.get("kind") if isinstance(reading, dict) else None
        if manifest.get("version", 1) != VERSION:
            raise InputError(f"is a ReS reranker of version {manifest.get('version', 1)} (this version reads "
                             f"{VERSION}: its selecting stage sees candidate ranks); retrain it", directory)
        if self.reading not in READINGS or (self.reading == "frozen" and "encoder" not in reading):
            raise InputError(f"the manifest's reading block is damaged or unknown ({reading!r}; this version reads "
                             f"{', '.join(READINGS)})", directory)
        shape = checked_selecting(manifest, directory)
        if self.reading == "frozen":
            for name, kind in (("model", str), ("precision", str), ("runtime", str), ("max_length", int)):
                field(manifest, manifest_path, "reading", "encoder", name, kind=kind)
            self.reader = FrozenReading.described(reading["encoder"], self.device)
            reading_width = self.reader.dimension
        else:
            if not (directory / READER_FOLDER / "config.json").exists():
                raise InputError(f"reranker is truncated: {READER_FOLDER}/config.json is missing; retrain it",
                                 directory)
            self.max_length = number(manifest, manifest_path, "options", "max_length", low=1)
            self.tokenizer, self.reader = load_cross_encoder(str(directory / READER_FOLDER), self.device,
                                                             artifact=True)
            self.reader.eval()
            if self.device.startswith("cuda"):
                self.reader.half()  # the reading vectors go on to the selector in float32
            reading_width = self.reader.config.hidden_size + 1  # the pooled mention and the logit
        if shape["input"] != reading_width + 1:  # and the retriever's score
            raise InputError(f"'selecting.input' is {shape['input']}, but the {self.reading} reading gives "
                             f"{reading_width + 1} numbers per candidate" + REBUILD, manifest_path)
        self.selector = load_selector(directory, shape, self.device).eval()
        self._torch = torch

    def reading_groups(self, records, definition_of):
        """One (K_i, D) tensor of reading vectors per record (the retriever's score last)."""
        torch = self._torch
        if self.reading == "frozen":
            mentions, names = self.reader.vectors(records, definition_of)
            groups = [frozen_features(torch.from_numpy(m)[None], torch.from_numpy(n)[None])[0].to(self.device)
                      for m, n in zip(mentions, names)]
        else:
            texts, entities = candidate_texts(records, definition_of)
            vectors = batched(lambda start, end: cross_reading_vectors(
                self.reader, self.tokenizer, texts[start:end], entities[start:end], self.max_length,
                self.device).float(), len(texts), self.batch_size, torch)
            groups = list(torch.split(vectors, [len(record["candidates"]) for record in records]))
        return [with_retriever_scores(group, [c["score"] for c in record["candidates"]])
                for group, record in zip(groups, records)]

    def candidate_scores(self, records, definition_of, attend=True):
        """Per record, a float array of its candidates' scores; their order is their retrieval rank. The
        selector runs one record at a time: a record's scores never depend on the batch it came in (a batched
        matrix product may round otherwise)."""
        with self._torch.inference_mode():
            kept = [record for record in records if record["candidates"]]
            groups = iter(self.reading_groups(kept, definition_of) if kept else [])
            return [self.selector(next(groups)[None], attend=attend)[0].float().cpu().numpy()
                    if record["candidates"] else np.zeros(0, np.float32) for record in records]

    def rerank(self, records: Iterable[dict[str, Any]],
               definition_of: Callable[[str], str]) -> Iterator[dict[str, Any]]:
        """Reorder each record's candidates by ReS score; keep the retriever's as retriever_score."""
        records = list(records)
        for record, scores in zip(records, self.candidate_scores(records, definition_of)):
            yield reordered(record, scores)

