"""The BLINK-style cross-encoder reranker (architecture "blink", the default of `train reranker`): reads
"[CLS] left [Ms] m [Me] right [SEP] name [ENT] definition [SEP]" and scores w·[CLS] (a one-logit
sequence-classification head), each candidate alone."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ontolink.core.artifact_files import number
from ontolink.reranking.base import RERANKERS, Reranker, batched, candidate_texts, reordered
from ontolink.reranking.cross_encoder import MODEL_WEIGHTS, cross_encoder_logits, load_cross_encoder
from ontolink.core.options import AUTO_DEVICE


@RERANKERS.register("blink")
class CrossEncoderReranker(Reranker):
    """A trained cross-encoder that rescores a mention's candidates, one (mention, candidate) pair at a time."""

    required_files = ("config.json", MODEL_WEIGHTS)

    def __init__(self, directory: Path, manifest: dict[str, Any], device: str = AUTO_DEVICE, batch_size: int = 128):
        import torch  # the [cpu] install links without torch until a reranker is asked for

        super().__init__(directory, manifest, device=device, batch_size=batch_size)
        self.max_length = number(manifest, self.directory / "manifest.json", "options", "max_length", low=1)
        self.tokenizer, self.model = load_cross_encoder(str(directory), self.device, artifact=True)
        self.model.eval()
        if self.device.startswith("cuda"):
            self.model.half()
        self._torch = torch

    def scores(self, mentions: Sequence[str], entities: Sequence[str]) -> np.ndarray:
        with self._torch.inference_mode():
            return batched(lambda start, end: cross_encoder_logits(
                self.model, self.tokenizer, mentions[start:end], entities[start:end], self.max_length,
                self.device).float(), len(mentions), self.batch_size, self._torch).cpu().numpy()

    def rerank(self, records: Iterable[dict[str, Any]],
               definition_of: Callable[[str], str]) -> Iterator[dict[str, Any]]:
        records = list(records)
        scores = self.scores(*candidate_texts(records, definition_of))
        start = 0
        for record in records:
            end = start + len(record["candidates"])
            yield reordered(record, scores[start:end])
            start = end
