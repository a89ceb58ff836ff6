"""Triple composition φ(s, p, o) over frozen KG embeddings (docs/alignment.md).

    concat    [s; p; o]          (2·d_e + d_r)
    hadamard  s ⊙ p ⊙ o          (d_e)
    l1        |s + p − o|        (d_e)
    l2        (s + p − o)²       (d_e)

Entity and relation vectors are L2-normalised first (``normalize``), so no
part of a concatenation outweighs another because of its embedding's scale,
and every composed vector is L2-normalised (retrieval is by cosine). The
element-wise compositions need relations in the entity dimension; when the
KG model has another (TuckER: 65 vs 200), a fixed random Gaussian projection
(seeded, saved with the model) maps relations to it.
"""

import numpy as np

from ontolink.core.errors import InputError
from ontolink.core.options import DEFAULT_SEED
from ontolink.kg.options import AlignFitOptions

COMPOSITIONS = ("concat", "hadamard", "l1", "l2")


def _unit_rows(matrix):
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.maximum(norms, 1e-12)


def relation_projection(relation_dim, entity_dim, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((relation_dim, entity_dim)) / np.sqrt(relation_dim)).astype(np.float32)


class Composer:
    """Maps (n, 3) rows of (subject, relation, object) indices to (n, D) composed, unit vectors (torch)."""

    def __init__(self, kg, compose=AlignFitOptions.compose, normalize=AlignFitOptions.kg_normalize, seed=DEFAULT_SEED,
                 projection=None, device="cpu"):
        import torch

        if compose not in COMPOSITIONS:
            raise InputError(f"unknown composition {compose!r} (known: {', '.join(COMPOSITIONS)})")
        self.kg = kg
        self.compose = compose
        self.normalize = normalize
        entity, relation = np.asarray(kg.entity, dtype=np.float32), np.asarray(kg.relation, dtype=np.float32)
        if normalize:
            entity, relation = _unit_rows(entity), _unit_rows(relation)
        self.projection = None
        if compose != "concat" and relation.shape[1] != entity.shape[1]:
            self.projection = projection if projection is not None else relation_projection(
                relation.shape[1], entity.shape[1], seed)
            relation = relation @ self.projection
            if normalize:
                relation = _unit_rows(relation)
        self.device = device
        self.entity = torch.as_tensor(entity, device=device)
        self.relation = torch.as_tensor(relation, device=device)
        entity_dim, relation_dim = entity.shape[1], relation.shape[1]
        self.dimension = 2 * entity_dim + relation_dim if compose == "concat" else entity_dim

    def describe(self):
        return {"compose": self.compose, "normalize_components": self.normalize, "dimension": self.dimension,
                "relation_projection": None if self.projection is None else
                f"fixed Gaussian {self.projection.shape[0]}→{self.projection.shape[1]} (saved with the model)"}

    def rows(self, triples):
        """(n, 3) int64 indices of Triples into the KG embeddings (every id must have a vector)."""
        return np.asarray([(self.kg.entity_row[s], self.kg.relation_row[p], self.kg.entity_row[o])
                           for s, p, o in triples], dtype=np.int64).reshape(-1, 3)

    def __call__(self, rows):
        """rows: (..., 3) long tensor → (..., D) float tensor, unit-norm along the last axis."""
        import torch

        rows = torch.as_tensor(rows, device=self.device)
        s = self.entity[rows[..., 0]]
        p = self.relation[rows[..., 1]]
        o = self.entity[rows[..., 2]]
        if self.compose == "concat":
            vector = torch.cat([s, p, o], dim=-1)
        elif self.compose == "hadamard":
            vector = s * p * o
        elif self.compose == "l1":
            vector = (s + p - o).abs()
        else:
            vector = (s + p - o) ** 2
        return torch.nn.functional.normalize(vector, dim=-1)
