"""RDF2Vec: random walks over the graph, then Word2Vec skip-gram (gensim) over the walks.

A walk is ``e0 r1 e1 r2 e2 ...`` of up to ``depth`` hops; entities and relations
are both tokens, so both get vectors from the same walks. With ``reverse``
(the default) a walk may also go against an edge, through the separate token
``r⁻¹``, so entities that only appear as tails (diseases here) start walks
too; the relation vector stored for ``r`` is the forward token's. Walks are
deduplicated per start entity (as pyRDF2Vec's random walker does).

Reproducible: walks come from numpy's seeded generator, and Word2Vec with one
worker and a fixed hash function gives the same vectors for the same seed
(``workers > 1`` is faster but not bit-reproducible).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
import time
import zlib

import numpy as np

from ontolink.kg.embedders import KG_EMBEDDERS, KGEmbedder, KGEmbeddingResult
from ontolink.core.errors import InputError
from ontolink.core.options import AUTO_DEVICE, DEFAULT_SEED

if TYPE_CHECKING:
    from ontolink.formats.triples import TripleSet

DEFAULTS = dict(dim=200, depth=4, walks=200, epochs=25, window=5, negative=5, min_count=1, sample=1e-3,
                reverse=True, workers=1, alpha=0.025)


def _stable_hash(text: str) -> int:
    """gensim seeds each vector with hashfxn(word + seed); Python's hash() changes per process."""
    return zlib.crc32(text.encode("utf-8"))


def random_walks(triple_set: TripleSet, depth: int, walks_per_entity: int, reverse: bool, seed: int) -> np.ndarray:
    """An (n_walks, 1 + 2·depth) int array of token ids, -1 where a walk ended early.

    Token ids: entities 0..E-1, relations E..E+R-1, inverse relations E+R..E+2R-1.
    """
    n_entities, n_relations = len(triple_set.entity_ids), len(triple_set.relation_ids)
    heads, relations, tails = triple_set.mapped.T
    source: Any = [heads]  # arrays to join, then joined
    token: Any = [relations + n_entities]
    target: Any = [tails]
    if reverse:
        source.append(tails)
        token.append(relations + n_entities + n_relations)
        target.append(heads)
    source, token, target = np.concatenate(source), np.concatenate(token), np.concatenate(target)
    order = np.argsort(source, kind="stable")
    token, target = token[order], target[order]
    degree = np.bincount(source, minlength=n_entities)
    start_of = np.concatenate([[0], np.cumsum(degree)])[:-1]

    rng = np.random.default_rng(seed)
    current = np.repeat(np.arange(n_entities), walks_per_entity)
    walks = np.full((len(current), 1 + 2 * depth), -1, dtype=np.int64)
    walks[:, 0] = current
    alive = degree[current] > 0
    for hop in range(depth):
        rows = np.flatnonzero(alive)
        if not len(rows):
            break
        at = current[rows]
        edge = start_of[at] + (rng.random(len(rows)) * degree[at]).astype(np.int64)
        walks[rows, 1 + 2 * hop] = token[edge]
        walks[rows, 2 + 2 * hop] = target[edge]
        current[rows] = target[edge]
        alive[rows] = degree[target[edge]] > 0
    walks = np.unique(walks, axis=0)  # duplicates go (this sorts the walks by start entity) ...
    return walks[rng.permutation(len(walks))]  # ... so shuffle: Word2Vec's learning rate decays along the file


@KG_EMBEDDERS.register("rdf2vec")
class RDF2Vec(KGEmbedder):
    method = "rdf2vec"

    def __init__(self, dim: int | None = None, depth: int | None = None, walks: int | None = None,
                 epochs: int | None = None, window: int | None = None, negative: int | None = None,
                 min_count: int | None = None, sample: float | None = None, reverse: bool | None = None,
                 workers: int | None = None, alpha: float | None = None, **unknown: Any) -> None:
        if unknown:
            raise InputError(f"rdf2vec has no option(s) {', '.join(sorted(unknown))}")
        given = dict(dim=dim, depth=depth, walks=walks, epochs=epochs, window=window, negative=negative,
                     min_count=min_count, sample=sample, reverse=reverse, workers=workers, alpha=alpha)
        self.options: dict[str, Any] = {key: DEFAULTS[key] if value is None else value for key, value in given.items()}

    def fit(self, triple_set: TripleSet, seed: int = DEFAULT_SEED, device: str = AUTO_DEVICE, progress: Any = None
            ) -> KGEmbeddingResult:
        from gensim.models import Word2Vec
        from gensim.models.callbacks import CallbackAny2Vec

        options = self.options
        n_entities, n_relations = len(triple_set.entity_ids), len(triple_set.relation_ids)
        started = time.perf_counter()
        walks = random_walks(triple_set, options["depth"], options["walks"], options["reverse"], seed)
        walk_seconds = time.perf_counter() - started
        lengths = (walks >= 0).sum(axis=1)

        curve: list[dict[str, Any]] = []

        class EpochLoss(CallbackAny2Vec):
            """gensim's loss is cumulative over the run; record each epoch's share."""

            def __init__(self) -> None:
                self.previous, self.epoch, self.last = 0.0, 0, time.perf_counter()

            def on_epoch_end(self, model: Any) -> None:
                total = model.get_latest_training_loss()
                self.epoch += 1
                now = time.perf_counter()
                curve.append({"epoch": self.epoch, "loss": float(total - self.previous),
                              "seconds": round(now - self.last, 3)})
                self.previous, self.last = total, now
                if progress is not None:
                    progress.update(1)

        with tempfile.TemporaryDirectory(prefix="ontolink-walks-") as scratch:
            corpus = os.path.join(scratch, "walks.txt")
            with open(corpus, "w", encoding="ascii") as handle:
                for walk, length in zip(walks, lengths):
                    handle.write(" ".join(map(str, walk[:length].tolist())) + "\n")
            model = Word2Vec(corpus_file=corpus, vector_size=options["dim"], window=options["window"],
                             min_count=options["min_count"], sg=1, negative=options["negative"],
                             sample=options["sample"], alpha=options["alpha"], epochs=options["epochs"],
                             seed=seed, workers=options["workers"], hashfxn=_stable_hash, compute_loss=True,
                             callbacks=[EpochLoss()])

        def vectors(tokens: Sequence[int]) -> tuple[np.ndarray, int]:
            out = np.zeros((len(tokens), options["dim"]), dtype=np.float32)
            missing = 0
            for row, token in enumerate(tokens):
                key = str(token)
                if key in model.wv.key_to_index:
                    out[row] = model.wv[key]
                else:
                    missing += 1
            return out, missing

        entity, missing_entities = vectors(range(n_entities))
        relation, missing_relations = vectors(range(n_entities, n_entities + n_relations))
        extra: dict[str, np.ndarray] = {}
        if options["reverse"]:
            extra["relation_inverse"], _ = vectors(range(n_entities + n_relations, n_entities + 2 * n_relations))
        describe = {
            "method": "rdf2vec",
            "options": dict(options, skip_gram=True),
            "walks": int(len(walks)),
            "walk_tokens": int(lengths.sum()),
            "walk_seconds": round(walk_seconds, 3),
            "entities_without_vector": missing_entities,
            "relations_without_vector": missing_relations,
            "complex": False,
            "reproducible": options["workers"] == 1,
        }
        return KGEmbeddingResult(entity=entity, relation=relation, curve=curve, describe=describe, extra=extra)
