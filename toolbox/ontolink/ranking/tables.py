"""What the ranker's feature groups read of an index alone, built once by `ontolink index` and kept in the index
directory (``ranker_tables.safetensors`` and ``ranker_trigrams.json``), so that `link` does not rebuild it on every
start: the character 3-gram TF-IDF of every name (lexical) and the entity prior `auto` resolves to (prior).

Made on every `link`, these cost more than linking itself: importing scikit-learn and fitting its vectorizer on
HPO's 40,508 names, and reading phenotype.hpoa for the prior (about 3 CPU-s together, 1.5x the plain link of the
6,284-mention corpus). ``CharTrigrams`` is scikit-learn's ``TfidfVectorizer(analyzer="char_wb", ngram_range=(3,
3))`` in numpy (tests/test_default_ranker.py compares them), so an index's tables and a ranker fitted before
them give the same features. An index written before the tables has them computed on first use, with a note.
"""

from __future__ import annotations

import re

import numpy as np

from ontolink.core.errors import InputError
from ontolink.core.artifact_files import check_csr, load_tensors, read_json
from ontolink.core.io import warn
from ontolink.ranking.priors import load_prior

TABLES_FILE = "ranker_tables.safetensors"
TRIGRAMS_FILE = "ranker_trigrams.json"
FILES = (TABLES_FILE, TRIGRAMS_FILE)
VERSION = 1
_WHITE_SPACES = re.compile(r"\s\s+")


class CharTrigrams:
    """Character 3-grams within words (each word padded by a space), tf * smoothed idf, rows L2-normalised:
    scikit-learn's char_wb TF-IDF, lowercased, without scikit-learn."""

    def __init__(self, vocabulary, idf):
        self.vocabulary = vocabulary  # 3-gram -> column
        self.idf = np.asarray(idf, dtype=np.float32)

    @staticmethod
    def grams(text):
        text = _WHITE_SPACES.sub(" ", text.lower())
        found = []
        for word in text.split():
            word = f" {word} "
            found += [word[start:start + 3] for start in range(max(1, len(word) - 2))]
        return found

    @classmethod
    def fit(cls, texts):
        """The vocabulary (sorted 3-grams, as scikit-learn orders its columns) and idf of ``texts``."""
        document_frequency = {}
        for text in texts:
            for gram in set(cls.grams(text)):
                document_frequency[gram] = document_frequency.get(gram, 0) + 1
        ordered = sorted(document_frequency)
        counts = np.array([document_frequency[gram] for gram in ordered], dtype=np.float64)
        idf = np.log((1 + len(texts)) / (1 + counts)) + 1
        return cls({gram: column for column, gram in enumerate(ordered)}, idf.astype(np.float32))

    def transform(self, texts):
        """A CSR matrix (texts x 3-grams), each row L2-normalised; 3-grams outside the vocabulary are dropped."""
        import scipy.sparse

        indices, data, indptr = [], [], [0]
        vocabulary = self.vocabulary
        for text in texts:
            counts = {}
            for gram in self.grams(text):
                column = vocabulary.get(gram)
                if column is not None:
                    counts[column] = counts.get(column, 0) + 1
            columns = sorted(counts)
            indices += columns
            data += [counts[column] for column in columns]
            indptr.append(len(indices))
        indices = np.asarray(indices, dtype=np.int32)
        values = np.asarray(data, dtype=np.float32) * self.idf[indices]
        indptr = np.asarray(indptr, dtype=np.int64)
        row_of = np.repeat(np.arange(len(texts)), np.diff(indptr))
        norms = np.sqrt(np.bincount(row_of, weights=values * values, minlength=len(texts)))
        values /= norms[row_of].astype(np.float32)  # a row with any value has a positive norm (idf >= 1)
        return scipy.sparse.csr_matrix((values, indices, indptr), shape=(len(texts), len(self.idf)))


class RankerTables:
    """An index's ranker tables: ``trigrams`` (``CharTrigrams``) and ``name_trigrams`` (its CSR rows of every
    name), ``prior`` (the counts `--prior auto` reads, per entity row, or None) and ``prior_source``."""

    def __init__(self, trigrams, name_trigrams, prior=None, prior_source="none"):
        self.trigrams = trigrams
        self.name_trigrams = name_trigrams
        self.prior = prior
        self.prior_source = prior_source

    @classmethod
    def compute(cls, names, entity_ids, label):
        """The tables of an index of ``names`` over ``entity_ids`` of the ontology ``label`` ('hpo': the prior is
        its packaged annotation counts)."""
        trigrams = CharTrigrams.fit(names)
        prior, source = None, "none"
        if label == "hpo":
            counts = load_prior("hpo")
            prior, source = np.array([counts.get(entity_id, 0) for entity_id in entity_ids], dtype=np.float32), "hpo"
        return cls(trigrams, trigrams.transform(names), prior, source)

    def describe(self):
        return {"version": VERSION, "trigrams": len(self.trigrams.vocabulary), "prior": self.prior_source}

    def save(self, directory):
        import json

        from safetensors.numpy import save_file

        ordered = sorted(self.trigrams.vocabulary, key=self.trigrams.vocabulary.get)
        with open(directory / TRIGRAMS_FILE, "w", encoding="utf-8") as handle:
            json.dump(ordered, handle, ensure_ascii=False)
        matrix = self.name_trigrams
        arrays = {"idf": self.trigrams.idf, "data": matrix.data.astype(np.float32),
                  "indices": matrix.indices.astype(np.int64), "indptr": matrix.indptr.astype(np.int64),
                  "shape": np.asarray(matrix.shape, dtype=np.int64)}
        if self.prior is not None:
            arrays["prior"] = self.prior.astype(np.float32)
        save_file(arrays, str(directory / TABLES_FILE))

    @classmethod
    def load(cls, directory, described, names, entities):
        """The tables saved in ``directory`` (``described``: the index manifest's "ranker_tables"), checked
        against the index's ``names`` and ``entities`` counts."""
        import scipy.sparse

        vocabulary = read_json(directory / TRIGRAMS_FILE)
        if not isinstance(vocabulary, list) or not all(isinstance(gram, str) for gram in vocabulary):
            raise InputError("must be a list of 3-grams; rebuild the index", directory / TRIGRAMS_FILE)
        path = directory / TABLES_FILE
        arrays = load_tensors(path, {"idf": ("f", 1), "data": ("f", 1), "indices": ("iu", 1), "indptr": ("iu", 1),
                                     "shape": ("iu", 1)})
        shape = tuple(int(size) for size in arrays["shape"])
        check_csr(arrays["data"], arrays["indices"], arrays["indptr"], shape, path)
        if shape != (names, len(vocabulary)) or len(arrays["idf"]) != len(vocabulary):
            raise InputError(f"holds {shape} 3-gram weights for {names} names and {len(vocabulary)} 3-grams; "
                             "rebuild the index", path)
        prior = arrays.get("prior")
        source = described.get("prior", "none") if isinstance(described, dict) else "none"
        if (prior is None) != (source == "none") or (prior is not None and len(prior) != entities):
            raise InputError("its prior does not match the index manifest; rebuild the index", path)
        trigrams = CharTrigrams({gram: column for column, gram in enumerate(vocabulary)}, arrays["idf"])
        matrix = scipy.sparse.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]), shape=shape)
        return cls(trigrams, matrix, prior, source)


def ranker_tables(loaded_index):
    """The ranker tables of ``loaded_index``: read from its directory on first use, or, for an index written
    before them, computed (said once on stderr), and kept on the index object."""
    tables = getattr(loaded_index, "_ranker_tables", None)
    if tables is None:
        described = loaded_index.manifest.get("ranker_tables")
        if described is not None and all((loaded_index.directory / name).is_file() for name in FILES):
            tables = RankerTables.load(loaded_index.directory, described, len(loaded_index.names),
                                       len(loaded_index.entity_ids))
        else:
            warn(f"index {loaded_index.directory} predates the ranker's tables: computing them (rebuild it with "
                 "`ontolink index` to store them)")
            tables = RankerTables.compute(loaded_index.names, loaded_index.entity_ids,
                                          loaded_index.manifest.get("ontology", {}).get("label"))
        loaded_index._ranker_tables = tables
    return tables
