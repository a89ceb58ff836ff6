"""A trained cross-encoder reranker (`ontolink train reranker`): rescores a mention's candidates at link time.

Input "[CLS] left [Ms] m [Me] right [SEP] name [ENT] definition [SEP]", score = w·[CLS] (a one-logit
sequence-classification head).
"""

import numpy as np

from toolbox.errors import InputError, OntolinkError
from toolbox.encoder_inputs import SPECIAL_TOKENS, entity_input, mention_input
from toolbox.manifest import read_manifest

ARTIFACT = "reranker"


def load_cross_encoder(path, device, num_labels=1):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as transformers_logging

    from toolbox.backends.encoders.sentence import resolve_model_path

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

        from toolbox.device import resolve_device

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
        values = []
        with self._torch.inference_mode():
            for start in range(0, len(mentions), self.batch_size):
                values.append(cross_encoder_logits(self.model, self.tokenizer, mentions[start:start + self.batch_size],
                                      entities[start:start + self.batch_size], self.max_length,
                                      self.device).float().cpu().numpy())
        return np.concatenate(values) if values else np.zeros(0, dtype=np.float32)

    def check_index(self, loaded_index):
        """Refuse an index of another ontology than the one the reranker was trained for."""
        if self.manifest["ontology"]["sha256"] != loaded_index.manifest["ontology"]["sha256"]:
            raise InputError(f"was trained for ontology {self.manifest['ontology']['label']}, the index is for "
                             f"{loaded_index.manifest['ontology']['label']}", self.directory)

    def rerank(self, records, definition_of):
        """Reorder each record's candidates by reranker score; keep the retriever's as retriever_score."""
        mentions, entities = [], []
        for record in records:
            text = mention_input(record)
            for candidate in record["candidates"]:
                mentions.append(text)
                entities.append(entity_input(candidate["name"], definition_of(candidate["id"])))
        scores = iter(self.scores(mentions, entities))
        for record in records:
            rescored = [{"id": c["id"], "name": c["name"], "score": round(float(next(scores)), 6),
                         "retriever_score": c["score"]} for c in record["candidates"]]
            rescored.sort(key=lambda candidate: -candidate["score"])  # stable: retriever order breaks ties
            yield {**record, "candidates": rescored}
