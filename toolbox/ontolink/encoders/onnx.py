"""ONNX Runtime sentence encoder: the default on CPU.

The model is exported from its sentence-transformers directory once and kept
in the user cache (``onnx/<fingerprint>/``); later runs load neither torch nor
the PyTorch weights. At int8 the export is quantised per token (see
``onnx_export``), so a text's vector does not depend on its batch.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ontolink.encoders import ENCODERS
from ontolink.encoders.base import Encoder, UnsupportedModel, pad
from ontolink.encoders.model_files import DEFAULT_ENCODER, directory_fingerprint, hub_hint, resolve_model_path
from ontolink.core.errors import OntolinkError
from ontolink.encoders.onnx_sessions import SessionPool
from ontolink.core.cache import cache_dir
from ontolink.core.manifest import peek_manifest
from ontolink.encoders.onnx_export import EXPORT_VERSION, exported_model

PRECISIONS = ("int8", "fp32")
def model_directory(name: str) -> Path:
    """A local directory for a packaged name, a path, or a hub name (downloaded once by huggingface_hub)."""
    path = Path(resolve_model_path(name))
    if path.is_dir():
        return path
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name))
    except Exception as error:
        raise OntolinkError(f"cannot load encoder {name!r}: {type(error).__name__}{hub_hint()}") from None


def pooling_of(directory: str | Path) -> tuple[str, int | None]:
    """(pooling, max_seq_length) of a sentence-transformers directory; mean pooling for a plain model."""
    folder = Path(directory)
    modules_file = folder / "modules.json"
    if not modules_file.exists():
        return "mean", None
    modules = json.loads(modules_file.read_text(encoding="utf-8"))
    kinds = [module.get("type", "").rsplit(".", 1)[-1] for module in modules]
    if kinds[:2] != ["Transformer", "Pooling"] or any(kind != "Normalize" for kind in kinds[2:]):
        raise UnsupportedModel(f"modules {kinds} (the ONNX runtime handles Transformer, Pooling, Normalize)")
    config = json.loads((folder / modules[1]["path"] / "config.json").read_text(encoding="utf-8"))
    mode = config.get("pooling_mode") or next(
        (key[len("pooling_mode_"):] for key, value in config.items() if key.startswith("pooling_mode_") and value),
        "mean_tokens")
    pooling = {"mean": "mean", "mean_tokens": "mean", "cls": "cls", "cls_token": "cls"}.get(mode)
    if pooling is None:
        raise UnsupportedModel(f"pooling {mode!r} (the ONNX runtime does mean and CLS pooling)")
    settings = folder / "sentence_bert_config.json"
    max_seq_length = json.loads(settings.read_text(encoding="utf-8")).get("max_seq_length") \
        if settings.exists() else None
    return pooling, max_seq_length


def default_prompt(directory: str | Path) -> str:
    """The text a sentence-transformers directory puts before every input (its ``default_prompt_name``;
    e5: "query: "), or "" for none: what sentence-transformers' own ``encode`` does with it."""
    path = Path(directory, "config_sentence_transformers.json")
    if not path.exists():
        return ""
    settings = json.loads(path.read_text(encoding="utf-8"))
    return (settings.get("prompts") or {}).get(settings.get("default_prompt_name") or "", "")


@ENCODERS.register("onnx")
class OnnxSentenceEncoder(Encoder):
    batch_invariant = True
    # small batches keep a layer's activations in cache, for every session side by side (they share the L3):
    # with two, HPO names encode 16-19% faster at 512-1,024 tokens a batch than at 2,048; `link` of 12,848 new
    # mentions ran 4-5% faster at 512 than at 1,024 (the encoder's own best; indexing HPO took the same time)
    tokens_per_batch = 512

    def __init__(self, model: str | None = None, device: str = "cpu", precision: str | None = "int8",
                 max_length: int = 128, threads: int | None = None) -> None:
        if not device.startswith("cpu"):
            raise UnsupportedModel(f"device {device} (the ONNX runtime here is CPU-only)")
        if precision not in PRECISIONS:
            raise UnsupportedModel(f"precision {precision} (ONNX: {', '.join(PRECISIONS)})")

        model = model or DEFAULT_ENCODER
        directory = model_directory(model)
        trained = peek_manifest(directory)
        # a retriever trained on bare strings is a plain sentence-transformers model; one trained on context is not
        if trained is not None and not (trained.get("artifact") == "retriever" and trained.get("input_mode") == "bare"):
            raise UnsupportedModel("an ontolink model directory (marked inputs, span pooling)")
        self.model_name = model
        self.device = "cpu"
        self.precision = precision
        self.pooling, longest = pooling_of(directory)
        self.max_length = min(max_length, longest or max_length)
        self._tokenizer = _load_tokenizer(directory, self.max_length)
        self.prompt = default_prompt(directory)
        self._fingerprint = hashlib.sha256(
            f"{directory_fingerprint(directory)} onnx{EXPORT_VERSION} {precision} {self.pooling} "
            f"{self.max_length}{f' prompt {self.prompt!r}' if self.prompt else ''}".encode()).hexdigest()
        started = time.perf_counter()
        self._path, exported = exported_model(directory, cache_dir("onnx", self._fingerprint[:24]), precision)
        # what a first run pays once and later runs skip: `index` says so in its summary
        self.export_seconds = time.perf_counter() - started if exported else None
        # one single-threaded session per core, whole batches side by side (ontolink.encoders.onnx_sessions)
        self._sessions = SessionPool(self._path, threads)
        self.parallel_batches = self._sessions.parallel
        self._input_names = self._sessions.input_names
        self.dimension = int(self.forward([[0]]).shape[1])

    def map_batches(self, function: Callable[[Any], Any], batches: Iterable[Any]) -> Iterator[Any]:
        """``function`` over id batches, results in order, up to ``parallel_batches`` at once."""
        return self._sessions.map(function, batches)

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    def describe(self) -> dict[str, Any]:
        # the export's version: an index built by another one keeps working, but its stored name
        # vectors no longer stand in for encoding (they were made by a slightly different graph)
        return super().describe() | {"export": EXPORT_VERSION}

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        return [encoding.ids for encoding in self._tokenizer.encode_batch([self.prompt + text for text in texts])]

    def forward(self, id_lists: Sequence[Sequence[int]]) -> np.ndarray:
        # padded positions are masked out of attention and pooling: their id (0) changes no vector
        input_ids, attention_mask = pad(id_lists)
        feeds = {"input_ids": input_ids, "attention_mask": attention_mask,
                 "token_type_ids": np.zeros_like(input_ids)}
        tokens = self._sessions.run({name: feeds[name] for name in self._input_names})[0]
        if self.pooling == "cls":
            return tokens[:, 0].astype(np.float32)
        weights = attention_mask[..., None].astype(np.float32)
        return (tokens * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)


def _load_tokenizer(directory: str | Path, max_length: int) -> Any:
    """A fast tokenizer truncating at ``max_length``, unpadded (batches are padded by length here)."""
    from tokenizers import Tokenizer

    path = Path(directory, "tokenizer.json")
    if not path.exists():
        raise UnsupportedModel("no tokenizer.json (a fast tokenizer is needed)")
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.enable_truncation(max_length)
    tokenizer.no_padding()
    return tokenizer
