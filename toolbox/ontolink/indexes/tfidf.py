"""Lexical baseline: character 3-gram TF-IDF with exact cosine nearest neighbours (scispaCy-style).

Stored without pickle: the n-gram vocabulary as JSON, idf and the CSR matrix
of the names in safetensors.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ontolink.indexes import NAME_INDEXES, NameIndex
from ontolink.indexes.best_k import best_of_blocks
from ontolink.core.errors import InputError
from ontolink.core.artifact_files import check_csr, load_tensors, read_json
from ontolink.indexes.options import IndexOptions


def char_trigram_vectorizer(vocabulary: dict[str, int] | None = None, min_df: int = IndexOptions.min_df) -> Any:
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 3), min_df=min_df, dtype=np.float32,
                           vocabulary=vocabulary, lowercase=True)


@NAME_INDEXES.register("tfidf")
class TfidfNameIndex(NameIndex):
    method = "tfidf"
    files = ("vocabulary.json", "tfidf.safetensors")

    def __init__(self, vectorizer: Any, matrix: Any, min_df: int) -> None:
        self.vectorizer = vectorizer
        self.matrix_t = matrix.T.tocsr()  # (V, N): query @ matrix_t is one sparse product
        self._matrix = matrix
        self.min_df = min_df

    @classmethod
    def build(cls, texts: Sequence[str], min_df: int = IndexOptions.min_df, progress: Any = None,
              **_ignored: Any) -> TfidfNameIndex:
        vectorizer = char_trigram_vectorizer(min_df=min_df)
        try:
            matrix = vectorizer.fit_transform(texts)
        except ValueError as error:  # e.g. every n-gram below min_df
            raise InputError(f"cannot build a TF-IDF index: {error}") from None
        if progress is not None:
            progress.update(len(texts))
        return cls(vectorizer, matrix.tocsr(), min_df)

    def save(self, directory: Path) -> None:
        from safetensors.numpy import save_file

        vocabulary = sorted(self.vectorizer.vocabulary_, key=self.vectorizer.vocabulary_.get)
        with open(directory / "vocabulary.json", "w", encoding="utf-8") as handle:
            json.dump(vocabulary, handle, ensure_ascii=False)
        save_file(
            {
                "idf": self.vectorizer.idf_.astype(np.float32),
                "data": self._matrix.data.astype(np.float32),
                "indices": self._matrix.indices.astype(np.int64),
                "indptr": self._matrix.indptr.astype(np.int64),
                "shape": np.asarray(self._matrix.shape, dtype=np.int64),
            },
            str(directory / "tfidf.safetensors"),
        )

    @classmethod
    def load(cls, directory: Path, manifest: dict[str, Any], encoder: Any = None) -> TfidfNameIndex:
        from scipy.sparse import csr_matrix

        vocabulary = read_json(directory / "vocabulary.json")
        if not isinstance(vocabulary, list) or not all(isinstance(gram, str) for gram in vocabulary):
            raise InputError("must be a list of n-grams; rebuild the index", directory / "vocabulary.json")
        path = directory / "tfidf.safetensors"
        arrays = load_tensors(path, {"idf": ("f", 1), "data": ("f", 1), "indices": ("iu", 1), "indptr": ("iu", 1),
                                     "shape": ("iu", 1)})
        shape = tuple(int(size) for size in arrays["shape"])
        check_csr(arrays["data"], arrays["indices"], arrays["indptr"], shape, path)
        if shape[1] != len(vocabulary) or len(arrays["idf"]) != len(vocabulary):
            raise InputError(f"holds {shape[1]} columns and {len(arrays['idf'])} idf weights for the "
                             f"{len(vocabulary)} n-grams of vocabulary.json; rebuild the index", path)
        vectorizer = char_trigram_vectorizer(vocabulary={gram: column for column, gram in enumerate(vocabulary)})
        if len(vectorizer.vocabulary) != len(vocabulary):
            raise InputError("lists an n-gram twice; rebuild the index", directory / "vocabulary.json")
        vectorizer.idf_ = arrays["idf"]
        matrix = csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]), shape=shape)
        return cls(vectorizer, matrix, manifest["index"].get("min_df", 1))

    def __len__(self) -> int:
        return self._matrix.shape[0]

    def search(self, texts: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        queries = self.vectorizer.transform(texts)
        return best_of_blocks(lambda start, stop: (queries[start:stop] @ self.matrix_t).toarray(),
                              len(texts), min(k, self.matrix_t.shape[1]))

    def describe(self) -> dict[str, Any]:
        return {"method": self.method, "analyzer": "char_wb", "ngram_range": [3, 3], "min_df": self.min_df}
