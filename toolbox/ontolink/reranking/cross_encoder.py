"""A trained reranker (`ontolink train reranker`): rescores a mention's candidates at link time.

The BLINK-style cross-encoder (architecture "blink", the default) reads "[CLS] left [Ms] m [Me] right
[SEP] name [ENT] definition [SEP]" and scores w·[CLS] (a one-logit sequence-classification head), each
candidate alone. ReS (architecture "res", ontolink.reranking.read_and_select) scores them together.
``load_reranker`` opens either, by its manifest.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ontolink.core.artifact_files import REBUILD, field, module_shapes, number, read_json, regular_files
from ontolink.core.errors import InputError, OntolinkError
from ontolink.core.encoder_inputs import SPECIAL_TOKENS, entity_input, mention_input
from ontolink.core.manifest import read_manifest

if TYPE_CHECKING:
    from ontolink.reranking.read_and_select import ResReranker

ARTIFACT = "reranker"
ARCHITECTURES = ("blink", "res")
MODEL_WEIGHTS = "model.safetensors"  # what save_pretrained writes; a pickled pytorch_model.bin is never read


def check_cross_encoder_files(directory, num_labels=1):
    """A trained cross-encoder's folder, checked before transformers reads it: regular files only (a config.json
    linked to /dev/zero would be read forever), config.json an object transformers can build a model from, and
    model.safetensors holding every weight of that model in the shape the config declares (transformers would
    leave a missing one random, and allocate whatever sizes the config declares)."""
    from transformers import AutoConfig, AutoModelForSequenceClassification
    from transformers.utils import logging as transformers_logging

    from ontolink.core.artifact_files import check_weights

    transformers_logging.set_verbosity_error()
    directory = Path(directory)
    regular_files(directory)
    config_path = directory / "config.json"
    if not isinstance(read_json(config_path), dict):
        raise InputError("is not a JSON object" + REBUILD, config_path)
    try:
        config = AutoConfig.from_pretrained(str(directory), num_labels=num_labels)
        model = None

        def build():
            nonlocal model
            model = AutoModelForSequenceClassification.from_config(config)
            return model

        shapes = module_shapes(build)
    except Exception as error:  # noqa: BLE001  transformers' errors for a config it cannot build have no one type
        raise InputError(f"does not describe a model this version can build ({type(error).__name__}: "
                         f"{str(error).splitlines()[0][:200] if str(error) else ''})" + REBUILD, config_path) from None
    parameters = {name for name, _ in model.named_parameters()}
    # buffers and tied copies of a parameter may be left out of the file; every parameter must be there
    check_weights(directory / MODEL_WEIGHTS, shapes, optional=set(shapes) - parameters, extra=None)


def checked_ontology(manifest, directory):
    """The manifest's ontology block: a label and a SHA-256 (what ``check_reranker_index`` compares)."""
    path = Path(directory) / "manifest.json"
    field(manifest, path, "ontology", "sha256", kind=str)
    field(manifest, path, "ontology", "label", kind=str)
    return manifest["ontology"]


def load_cross_encoder(path, device, num_labels=1, artifact=False):
    """A tokenizer and a sequence-classification model from ``path``; ``artifact``: a folder ontolink wrote,
    read from safetensors only, after ``check_cross_encoder_files``."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as transformers_logging

    from ontolink.encoders.model_files import resolve_model_path

    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()
    if artifact:
        check_cross_encoder_files(path, num_labels)
    else:
        path = resolve_model_path(path)
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = AutoModelForSequenceClassification.from_pretrained(
            path, num_labels=num_labels, **({"use_safetensors": True} if artifact else {}))
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

        from ontolink.core.device import resolve_device

        self.directory = directory
        self.manifest = read_manifest(directory, ARTIFACT, required_files=["config.json", MODEL_WEIGHTS])
        self.device = resolve_device(device)
        self.max_length = number(self.manifest, Path(directory) / "manifest.json", "options", "max_length", low=1)
        checked_ontology(self.manifest, directory)
        self.batch_size = batch_size
        self.tokenizer, self.model = load_cross_encoder(str(directory), self.device, artifact=True)
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
    directory = Path(directory)
    manifest = read_manifest(directory, ARTIFACT)
    architecture = manifest.get("architecture", "blink")
    if architecture == "blink":
        return Reranker(directory, device=device)
    if architecture == "res":
        from ontolink.reranking.read_and_select import ResReranker

        return ResReranker(directory, manifest, device=device)
    raise InputError(f"is a reranker of architecture {architecture!r}, which this version cannot read "
                     f"(it reads {', '.join(ARCHITECTURES)})", directory)
