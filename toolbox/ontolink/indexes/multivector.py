"""Multi-vector (token) index: every name's word-piece vectors in FAISS, searched by late interaction.

Search (docs/multivector.md): each mention token retrieves its ``token_k`` nearest
name tokens; the names owning them are the candidates; each candidate is
rescored exactly by sum-of-max over its stored tokens (decoded from PQ codes
when the index is compressed).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ontolink.indexes import NAME_INDEXES, NameIndex
from ontolink.indexes.dense import (
    faiss_module,
    faiss_on_device,
    make_faiss_index,
    read_faiss,
)
from ontolink.indexes.late_interaction import sum_of_max
from ontolink.core.errors import InputError
from ontolink.core.artifact_files import field, load_tensors, number
from ontolink.core.options import DEFAULT_SEED
from ontolink.indexes.options import IndexOptions

if TYPE_CHECKING:
    from ontolink.indexes.token_encoder import TokenEncoder

TOKENS_FILE = "tokens.faiss"
OFFSETS_FILE = "token_offsets.safetensors"
MAX_EXPANSION_MASKS = 8
RESCORE_MIN = 512  # names rescored exactly per mention, at least
GPU_MAX_K = 2048  # faiss-gpu's largest k
# mentions whose tokens are searched at once: token_k results per mention token are held for them all
# (256 mentions of ~8 word pieces at token_k 2,048: about 50 MB)
MENTIONS_PER_SEARCH = 256


@NAME_INDEXES.register("multivector")
class MultiVectorNameIndex(NameIndex):
    method = "multivector"
    tokens = True
    files = (TOKENS_FILE, OFFSETS_FILE)

    def __init__(self, encoder: TokenEncoder, faiss_index: Any, faiss_options: dict[str, Any],
                 offsets: Sequence[int] | np.ndarray, texts: Sequence[str], token_k: int = IndexOptions.token_k,
                 query_expansion: bool = False, matrix: np.ndarray | None = None) -> None:
        self.encoder = encoder
        self.faiss_options = dict(faiss_options)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.texts = texts
        self.token_k = token_k
        self.query_expansion = query_expansion
        self.document_of_token = np.repeat(np.arange(len(self.offsets) - 1), np.diff(self.offsets))
        self._cpu_index = faiss_index
        self._index, self._gpu_resources = faiss_on_device(faiss_index, encoder.device, faiss_options["type"])
        # flat / sq8: every token vector in memory (given by `build` for flat, decoded once otherwise),
        # so exact rescoring gathers rows (sq8 keeps its saving on disk); ivfpq: candidates' codes
        # decoded on demand, through a direct map made at the first search (never written to disk)
        if matrix is None and faiss_options["type"] in ("flat", "sq8"):
            matrix = faiss_index.reconstruct_n(0, faiss_index.ntotal)
        self._matrix = matrix
        self._direct_map = False
        self.empty_spans = 0

    @classmethod
    def build(cls, texts: Sequence[str], encoder: TokenEncoder, faiss_type: str = IndexOptions.faiss_type,
              seed: int = DEFAULT_SEED, progress: Any = None, token_k: int = IndexOptions.token_k,
              query_expansion: bool = False, **faiss_options: Any) -> MultiVectorNameIndex:
        if faiss_type not in ("flat", "sq8", "ivfpq"):
            raise InputError(f"a multi-vector index is flat, sq8 or ivfpq, not {faiss_type}")
        matrix, offsets = encoder.encode_names(texts, progress=progress)
        index, options = make_faiss_index(matrix, faiss_type, seed=seed, **faiss_options)
        # IVF lists store a 64-bit id beside each code
        options["bytes_per_token"] = options["bytes_per_vector"] + 8 if faiss_type == "ivfpq" \
            else options.get("bytes_per_vector", 4 * matrix.shape[1])
        return cls(encoder, index, options, offsets, texts, token_k=token_k, query_expansion=query_expansion,
                   matrix=matrix if faiss_type == "flat" else None)

    def save(self, directory: Path) -> None:
        from safetensors.numpy import save_file

        faiss_module().write_index(self._cpu_index, str(directory / TOKENS_FILE))
        save_file({"offsets": self.offsets}, str(directory / OFFSETS_FILE))

    @classmethod
    def load(cls, directory: Path, manifest: dict[str, Any], encoder: TokenEncoder,
             texts: Sequence[str]) -> MultiVectorNameIndex:
        described = manifest["index"]
        field(manifest, directory / "manifest.json", "index", "faiss", "type", kind=str)
        token_k = number(manifest, directory / "manifest.json", "index", "token_k", low=1)
        offsets = load_tensors(directory / OFFSETS_FILE, {"offsets": ("iu", 1)})["offsets"]
        # compared as int64, as they are used: a uint64 difference that falls back wraps to a large positive one
        fits = not len(offsets) or int(offsets.max()) <= np.iinfo(np.int64).max
        offsets = offsets.astype(np.int64) if fits else offsets
        if not fits or len(offsets) != len(texts) + 1 or offsets[0] != 0 or np.any(np.diff(offsets) < 0):
            raise InputError(f"does not hold the token offsets of {len(texts)} names; rebuild the index",
                             directory / OFFSETS_FILE)
        # the token vectors are as many as the offsets say, of the model's dimension
        index = read_faiss(directory / TOKENS_FILE, described["faiss"], encoder.dimension, int(offsets[-1]))
        return cls(encoder, index, described["faiss"], offsets, texts, token_k=token_k,
                   query_expansion=described.get("query_expansion", False))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def token_count(self) -> int:
        return int(self.offsets[-1])

    def token_vectors(self, token_rows: np.ndarray) -> np.ndarray:
        if self._matrix is not None:
            return self._matrix[token_rows]
        if not self._direct_map:
            self._cpu_index.set_direct_map_type(faiss_module().DirectMap.Array)
            self._direct_map = True
        return self._cpu_index.reconstruct_batch(np.ascontiguousarray(token_rows, dtype=np.int64))

    def search(self, keys: Sequence[Any], k: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, rows) of the best ``k`` names for each mention key, best first; rows −1 pad."""
        found = [self._search_mentions(keys[start:start + MENTIONS_PER_SEARCH], k)
                 for start in range(0, len(keys), MENTIONS_PER_SEARCH) or [0]]
        return np.concatenate([scores for scores, _ in found]), np.concatenate([rows for _, rows in found])

    def _search_mentions(self, keys: Sequence[Any], k: int) -> tuple[np.ndarray, np.ndarray]:
        queries, empty = self.encoder.encode_mentions(keys)
        self.empty_spans += empty
        scores, rows = self._late_interaction(queries, k)
        if self.query_expansion:
            masks = [self.expansion_size(key, row[0]) for key, row in zip(keys, rows)]
            expanded = [position for position, count in enumerate(masks) if count]
            if expanded:
                queries, _ = self.encoder.encode_mentions([keys[p] for p in expanded], [masks[p] for p in expanded])
                scores[expanded], rows[expanded] = self._late_interaction(queries, k)
        return scores, rows

    def expansion_size(self, key: Any, top_row: int) -> int:
        """[MASK] count: word pieces of the most similar name not already in the mention (query expansion)."""
        if top_row < 0:
            return 0
        return min(MAX_EXPANSION_MASKS, sum(self.encoder.missing_pieces(key[1], self.texts[top_row])))

    def _late_interaction(self, queries: Sequence[np.ndarray], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Candidates ranked first by XTR's estimate from the retrieved tokens alone (a query token that
        retrieved none of a name's tokens is imputed its k-th similarity), then the best
        max(2k, RESCORE_MIN) rescored exactly by sum-of-max over their stored tokens."""
        k = min(k, len(self))
        scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
        rows = np.full((len(queries), k), -1, dtype=np.int64)
        stacked = np.concatenate(queries).astype(np.float32)
        k_tokens = min(self.token_k, self.token_count, GPU_MAX_K if self._gpu_resources else self.token_k)
        similarities, token_rows = self._index.search(stacked, k_tokens)
        start = 0
        for q, query in enumerate(queries):
            end = start + len(query)
            candidates = self._estimate(similarities[start:end], token_rows[start:end], max(2 * k, RESCORE_MIN))
            start = end
            exact = sum_of_max(query, self.token_vectors, self.offsets, candidates)
            best = np.argsort(-exact, kind="stable")[:k]
            scores[q, :len(best)] = exact[best]
            rows[q, :len(best)] = candidates[best]
        return scores, rows

    def _estimate(self, similarities: np.ndarray, token_rows: np.ndarray, depth: int) -> np.ndarray:
        """The ``depth`` names with the best XTR estimate, for one query's (n, token_k) search results."""
        n = len(similarities)
        valid = token_rows >= 0
        imputed = np.where(valid, similarities, np.inf).min(axis=1)  # each query token's k-th similarity
        documents = self.document_of_token[np.where(valid, token_rows, 0)]
        query_token = np.broadcast_to(np.arange(n)[:, None], documents.shape)
        documents, query_token, gain = documents[valid], query_token[valid], (similarities - imputed[:, None])[valid]
        # results are sorted best first per query token, so a (token, name) pair's first hit is its max
        _, first = np.unique(documents * n + query_token, return_index=True)
        candidates, position = np.unique(documents[first], return_inverse=True)
        estimate = np.bincount(position, weights=gain[first], minlength=len(candidates))
        if len(candidates) > depth:
            keep = np.argpartition(-estimate, depth - 1)[:depth]
            candidates = candidates[keep]
        return candidates

    def describe(self) -> dict[str, Any]:
        return {"method": self.method, "faiss": self.faiss_options, "token_k": self.token_k,
                "tokens": self.token_count, "query_expansion": self.query_expansion,
                "encoder": self.encoder.describe()}
