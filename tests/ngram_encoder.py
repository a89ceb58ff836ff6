"""A tiny deterministic encoder for tests that only need vectors: hashed character 3-grams.

Registered as encoder "hashed-3grams" when tests/conftest.py imports this module, so a unit test
builds a dense index in milliseconds without loading all-MiniLM-L6-v2. Similar strings get similar
vectors (shared 3-grams), which is all index and link plumbing needs.
"""

import zlib

import numpy as np

from ontolink.encoders import ENCODERS, Encoder


@ENCODERS.register("hashed-3grams")
class HashedTrigramEncoder(Encoder):
    listed = False  # for tests only: not one of `index --runtime`'s choices (nor in the man page)

    def __init__(self, model="hashed-3grams", device="auto", precision="auto", max_length=128, dimension=256):
        self.model_name = model
        self.device = "cpu"
        self.max_length = max_length
        self.dimension = dimension

    def encode(self, texts, progress=None, known=None):
        texts = list(texts)
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            padded = f" {text.lower()[:self.max_length]} "
            for start in range(len(padded) - 2):
                vectors[row, zlib.crc32(padded[start:start + 3].encode()) % self.dimension] += 1.0
            if progress is not None:
                progress.update(1)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)

    def describe(self):
        return {"model": self.model_name, "precision": "fp32", "dimension": self.dimension,
                "max_length": self.max_length, "normalized": True, "inputs": "plain"}
