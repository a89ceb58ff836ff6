"""A frozen text encoder whose vectors are cached by content hash.

A grid of alignment runs (directions × compositions × heads × KG models ×
folds) then encodes each text once: the first run pays, the others read
``<cache>/text-embeddings/<encoder key>/*.safetensors``. The encoder key is a
hash of (model, precision, max length), so a different encoder never reads
another's vectors. The encoder is loaded only when some text is missing.
"""

import hashlib
import os
import uuid

import numpy as np

from ontolink.encoders.model_files import DEFAULT_ENCODER
from ontolink.core.manifest import json_sha256
from ontolink.kg.options import AlignEncoderOptions
from ontolink.core.cache import cache_dir, write_atomically
from ontolink.encoders import load_encoder as load_runtime
from ontolink.core.options import AUTO_DEVICE

DEFAULT_MAX_LENGTH = AlignEncoderOptions.max_length


def load_encoder(model, device, precision, max_length):
    """The frozen encoder: ONNX Runtime on CPU, PyTorch on CUDA (plain HF models get mean pooling)."""
    return load_runtime(model, device=device, precision=precision, max_length=max_length)


def text_key(text):
    return hashlib.sha256(text.encode("utf-8")).digest()


class TextEmbedder:
    """``encode(texts)`` → (n, d) float32, rows L2-normalised, cached by sha256 of each text."""

    def __init__(self, model=None, device=AUTO_DEVICE, precision=AlignEncoderOptions.precision,
                 max_length=DEFAULT_MAX_LENGTH, cache=True):
        self.model = model or DEFAULT_ENCODER
        self.device = device
        self.precision = precision
        self.max_length = max_length
        self.use_cache = cache
        self._encoder = None
        self._vectors = {}
        self.encoded = 0  # texts this process had to encode (the rest came from the cache)
        self.dimension = None
        if cache:
            self.cache_path = cache_dir("text-embeddings", self.key()[:20])
            self._load_cache()

    def key(self):
        description = {"model": self.model, "precision": self.precision, "max_length": self.max_length}
        return json_sha256(description)

    def describe(self):
        if self._encoder is not None:
            described = dict(self._encoder.describe())
        else:
            described = {"model": self.model, "precision": self.precision, "dimension": self.dimension,
                         "max_length": self.max_length, "normalized": True}
        described["pooling"] = "the model's own (mean pooling for MiniLM and for plain transformers models)"
        return described

    def _load_cache(self):
        from safetensors.numpy import load_file

        for name in sorted(os.listdir(self.cache_path)):
            if not name.endswith(".safetensors"):
                continue
            try:
                shard = load_file(str(self.cache_path / name))
            except Exception:  # a damaged shard is only a cache miss
                continue
            keys, vectors = shard.get("keys"), shard.get("vectors")
            if keys is None or vectors is None or len(keys) != len(vectors):
                continue
            self.dimension = vectors.shape[1]
            for key, vector in zip(keys, vectors):
                self._vectors[key.tobytes()] = vector

    def _save_shard(self, keys, vectors):
        from safetensors.numpy import save_file

        shard = {"keys": np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), 32),
                 "vectors": np.ascontiguousarray(vectors, dtype=np.float32)}
        write_atomically(self.cache_path / f"{uuid.uuid4().hex}.safetensors",
                         lambda temporary: save_file(shard, str(temporary)))

    def encoder(self):
        if self._encoder is None:
            self._encoder = load_encoder(self.model, self.device, self.precision, self.max_length)
            self.dimension = self._encoder.dimension
        return self._encoder

    def encode(self, texts, progress=None):
        texts = list(texts)
        keys = [text_key(text) for text in texts]
        missing = {}
        for key, text in zip(keys, texts):
            if key not in self._vectors:
                missing.setdefault(key, text)
        if missing:
            vectors = self.encoder().encode(list(missing.values()), progress=progress)
            vectors = np.asarray(vectors, dtype=np.float32)
            for key, vector in zip(missing, vectors):
                self._vectors[key] = vector
            self.encoded += len(missing)
            self.dimension = vectors.shape[1]
            if self.use_cache:
                self._save_shard(list(missing), vectors)
        if not texts:
            return np.zeros((0, self.dimension or 0), dtype=np.float32)
        return np.stack([self._vectors[key] for key in keys]).astype(np.float32, copy=False)
