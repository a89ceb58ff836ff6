"""A trained reranker (`ontolink train reranker`): rescores a mention's candidates at link time.

The BLINK-style cross-encoder (architecture "blink", the default) reads "[CLS] left [Ms] m [Me] right
[SEP] name [ENT] definition [SEP]" and scores w·[CLS] (a one-logit sequence-classification head), each
candidate alone. ReS (architecture "res", ontolink.artifacts.res_reranker) scores them together.
``load_reranker`` opens either, by its manifest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ontolink.errors import InputError, OntolinkError
from ontolink.encoder_inputs import SPECIAL_TOKENS, entity_input, mention_input
from ontolink.manifest import read_manifest

if TYPE_CHECKING:
    from pathlib import Path

    from ontolink.artifacts.res_reranker import ResReranker

ARTIFACT = "reranker"
ARCHITECTURES = ("blink", "res")


def load_cross_encoder(path, device, num_labels=1):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as transformers_logging

    from ontolink.backends.encoders.model_files import resolve_model_path

    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()
    path = resolve_model_path(path)
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=num_labels)
    except Exception as error:
        raise OntolinkError(f"cannot load {path!r} as a cross-encoder: {type(error).__name__}: {error}") from None
    if tokenizer.add_special_tokens({"additional_special_tokens": SPECIAL_TOKENS}):
        model.resize_token_embeddings(len(tokenizer), mean_resizing=False)
    return tokenizer, model.to(device)


def cross_encoder_logits(model, tokenizer, mentions, entities, max_length, device):
    features = tokenizer(mentions, entities, truncation="longest_first", max_length=max_length, padding=True,
                         return_tensors="pt").to(device)
    return model(**features).logits[:, 0]


class Reranker:
    """A trained cross-encoder that rescores a mention's candidates."""

    def __init__(self, directory, device="auto", batch_size=128):
        import torch

        from ontolink.device import resolve_device

        self.directory = directory
        self.manifest = read_manifest(directory, ARTIFACT, required_files=["config.json"])
        self.device = resolve_device(device)
        self.max_length = self.manifest["options"]["max_length"]
        self.batch_size = batch_size
        self.tokenizer, self.model = load_cross_encoder(str(directory), self.device)
        self.model.eval()
        if self.device.startswith("cuda"):
            self.model.half()
        self._torch = torch

    def scores(self, mentions, entities):
        with self._torch.inference_mode():
            return batched(lambda start, end: cross_encoder_logits(
                self.model, self.tokenizer, mentions[start:end], entities[start:end], self.max_length,
                self.device).float(), len(mentions), self.batch_size, self._torch).cpu().numpy()

    def check_index(self, loaded_index):
        check_reranker_index(self.manifest, self.directory, loaded_index)

    def rerank(self, records, definition_of):
        """Reorder each record's candidates by reranker score; keep the retriever's as retriever_score."""
        scores = self.scores(*candidate_texts(records, definition_of))
        start = 0
        for record in records:
            end = start + len(record["candidates"])
            yield reordered(record, scores[start:end])
            start = end


def candidate_texts(records, definition_of):
    """(mention inputs, entity inputs): one pair per (record, candidate), records in order."""
    mentions, entities = [], []
    for record in records:
        text = mention_input(record)
        for candidate in record["candidates"]:
            mentions.append(text)
            entities.append(entity_input(candidate["name"], definition_of(candidate["id"])))
    return mentions, entities


def batched(score, count, batch_size, torch):
    """``score(start, end)`` (a tensor per slice) over ``count`` items, ``batch_size`` at a time, concatenated."""
    parts = [score(start, min(start + batch_size, count)) for start in range(0, count, batch_size)]
    return torch.cat(parts) if parts else torch.zeros(0)


def reordered(record, scores):
    """The record with its candidates sorted by ``scores``, the retriever's kept as retriever_score."""
    rescored = [{**c, "score": round(float(score), 6), "retriever_score": c["score"]}
                for c, score in zip(record["candidates"], scores)]
    rescored.sort(key=lambda candidate: -candidate["score"])  # stable: retriever order breaks ties
    return {**record, "candidates": rescored}


def check_reranker_index(manifest, directory, loaded_index):
    """Refuse an index of another ontology than the one the reranker was trained for."""
    if manifest["ontology"]["sha256"] != loaded_index.manifest["ontology"]["sha256"]:
        raise InputError(f"was trained for ontology {manifest['ontology']['label']}, the index is for "
                         f"{loaded_index.manifest['ontology']['label']}", directory)


def load_reranker(directory: str | Path, device: str = "auto") -> Reranker | ResReranker:
    """A trained reranker of either architecture, as its manifest says (no "architecture": a BLINK one)."""
    from pathlib import Path

    directory = Path(directory)
    manifest = read_manifest(directory, ARTIFACT)
    architecture = manifest.get("architecture", "blink")
    if architecture == "blink":
        return Reranker(directory, device=device)
    if architecture == "res":
        from ontolink.artifacts.res_reranker import ResReranker

        return ResReranker(directory, manifest, device=device)
    raise InputError(f"is a reranker of architecture {architecture!r}, which this version cannot read "
                     f"(it reads {', '.join(ARCHITECTURES)})", directory)
