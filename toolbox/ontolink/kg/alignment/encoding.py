"""What a triple is to an alignment model (``--triple-encoding``): KG vectors, text, or both.

    kg          φ(s, p, o), the composition of frozen KG embeddings (compose.py)
    verbalized  the frozen text encoder's vector of "subject-name predicate-label object-name"
    hybrid      both, side by side: [verbalised ; φ] (the model combines them: concat or a learned gate)

An encoding turns pair records into integer ``rows`` (what training batches and
hard negatives index) and rows into the raw triple vectors the model reads. Text
vectors come from the same TextEmbedder as the documents (cached by content hash),
so the verbalised block lives in the documents' space: the model's heads are
residual over it and start at the frozen-encoder baseline (model.py).

Hard negatives corrupt the true triple: in KG space for ``kg`` (a fresh draw per
batch); for the two encodings that read text, a corrupted triple needs its own
verbalisation, so ``count`` corruptions per pair are drawn once (seeded), their
texts encoded once (cached), and every epoch reuses them.
"""

import numpy as np

from ontolink.kg.alignment.compose import Composer
from ontolink.kg.alignment.pairs import pair_triple, verbalize
from ontolink.core.errors import InputError
from ontolink.core.options import DEFAULT_SEED
from ontolink.kg.options import AlignFitOptions

TRIPLE_ENCODINGS = ("kg", "verbalized", "hybrid")
HARD_NEGATIVES = ("none", "predicate", "object", "subject", "entities", "all")  # corrupt()'s modes
KG_COLUMNS = 3  # subject, relation, object rows into the KG embeddings


def corrupt(rows, mode, count, n_entities, n_relations, generator):
    """(B, count, 3) corrupted copies of (B, 3) triple rows; a replaced id never equals the original.

    A kind of corruption with one id to draw from (one predicate) would copy the positive: "all" leaves it out,
    and asking for it alone is an ``InputError``."""
    import torch

    batch = rows.shape[0]
    negatives = rows.unsqueeze(1).repeat(1, count, 1)
    columns_of = {"predicate": [(1, n_relations)], "object": [(2, n_entities)], "subject": [(0, n_entities)],
                  "entities": [(0, n_entities), (2, n_entities)]}
    kinds = [kind for kind in columns_of if (mode in ("all", kind)) and all(size >= 2 for _, size in columns_of[kind])]
    if not kinds:
        what, size = ("predicates", n_relations) if mode == "predicate" else ("entities", n_entities)
        raise InputError(f"--hard-negatives {mode} replaces {what}, and there is {size} to draw from: each "
                         "negative would be the true triple (use another kind, or none)")
    modes = (kinds * count)[:count]
    for slot, kind in enumerate(modes):
        for column, size in columns_of[kind]:
            # a uniform draw among the size - 1 other ids
            shift = torch.randint(1, size, (batch,), generator=generator, device=rows.device)
            negatives[:, slot, column] = (rows[:, column] + shift) % size
    return negatives


class KGTriples:
    """Rows (n, 3) of KG indices; vectors φ(s, p, o) from a Composer."""

    kind = "kg"
    uses_kg = True
    text_dim = 0  # no verbalised block

    def __init__(self, composer):
        self.composer = composer
        self.dimension = composer.dimension
        self.device = composer.device

    def describe(self):
        return {"triple_encoding": self.kind, **self.composer.describe()}

    def rows(self, records):
        return self.composer.rows([pair_triple(record) for record in records])

    def __call__(self, rows):
        return self.composer(rows)

    def prepare_negatives(self, rows, records, mode, count, seed):
        """KG corruptions are drawn per batch (``negatives``); nothing to prepare."""

    def negatives(self, index, rows, mode, count, generator):
        return self.composer(corrupt(rows, mode, count, len(self.composer.entity), len(self.composer.relation),
                                     generator))


class _TextTable:
    """Verbalised-triple vectors by row, grown as new verbalisations are encoded."""

    def __init__(self, embedder, device):
        self.embedder = embedder
        self.device = device
        self.row_of = {}
        self.parts = []
        self._tensor = None

    def rows(self, texts):
        texts = list(texts)
        new = [text for text in dict.fromkeys(texts) if text not in self.row_of]
        if new:
            vectors = self.embedder.encode(new)
            for text in new:
                self.row_of[text] = len(self.row_of)
            self.parts.append(vectors)
            self._tensor = None
        return np.asarray([self.row_of[text] for text in texts], dtype=np.int64)

    def tensor(self):
        import torch

        if self._tensor is None:
            self._tensor = torch.as_tensor(np.concatenate(self.parts) if self.parts else
                                           np.zeros((0, self.embedder.dimension or 0), np.float32),
                                           device=self.device)
        return self._tensor


class _Names:
    """Entity names by id, from the pairs seen (an unnamed id verbalises as itself, as verbalize() does)."""

    def __init__(self):
        self.name_of = {}

    def add(self, records):
        for record in records:
            for end in ("subject", "object"):
                if record[end].get("name"):
                    self.name_of.setdefault(record[end]["id"], record[end]["name"])

    def text(self, subject_id, predicate, object_id):
        return verbalize({"subject": {"id": subject_id, "name": self.name_of.get(subject_id)}, "predicate": predicate,
                          "object": {"id": object_id, "name": self.name_of.get(object_id)}})


class VerbalizedTriples:
    """Rows (n, 1) into a table of the frozen text encoder's vectors of verbalised triples.

    Hard-negative corruption replaces ids among the entities and predicates of the
    pairs given to ``prepare_negatives`` (there is no KG to draw from).
    """

    kind = "verbalized"
    uses_kg = False

    def __init__(self, embedder, device="cpu"):
        self.table = _TextTable(embedder, device)
        self.names = _Names()
        self.device = device
        self.text_dim = None
        self.dimension = None
        self._negative_rows = None

    def describe(self):
        return {"triple_encoding": self.kind, "triple_text": "subject-name predicate-label object-name",
                "dimension": self.dimension}

    def _text_rows(self, records):
        self.names.add(records)
        rows = self.table.rows(verbalize(record) for record in records)
        self.text_dim = self.dimension = self.table.embedder.dimension
        return rows

    def rows(self, records):
        return self._text_rows(records).reshape(-1, 1)

    def __call__(self, rows):
        import torch

        return self.table.tensor()[torch.as_tensor(rows, device=self.device)[..., 0]]

    def _corrupted_triples(self, records, mode, count, seed):
        """(n, count) corrupted (subject, predicate, object) id triples of ``records``, drawn with ``seed``."""
        import torch

        entities = sorted({record[end]["id"] for record in records for end in ("subject", "object")})
        predicates = sorted({record["predicate"] for record in records})
        entity_row = {entity: row for row, entity in enumerate(entities)}
        predicate_row = {predicate: row for row, predicate in enumerate(predicates)}
        rows = torch.as_tensor([(entity_row[s], predicate_row[p], entity_row[o])
                                for s, p, o in (pair_triple(record) for record in records)], dtype=torch.int64)
        generator = torch.Generator().manual_seed(seed)
        corrupted = corrupt(rows.reshape(-1, 3), mode, count, len(entities), len(predicates), generator).numpy()
        return [[(entities[s], predicates[p], entities[o]) for s, p, o in triples] for triples in corrupted]

    def prepare_negatives(self, rows, records, mode, count, seed):
        """Draw ``count`` corruptions of every pair once and encode their verbalisations."""
        triples = self._corrupted_triples(records, mode, count, seed)
        texts = [self.names.text(*triple) for per_pair in triples for triple in per_pair]
        self._negative_rows = self.table.rows(texts).reshape(len(records), count, 1)

    def negatives(self, index, rows, mode, count, generator):
        return _prepared_negatives(self, index)


def _prepared_negatives(encoding, index):
    """The raw vectors of the corruptions ``prepare_negatives`` drew for the pairs at ``index``."""
    import torch

    if encoding._negative_rows is None:
        raise RuntimeError("hard negatives of an encoding that reads text: call prepare_negatives() first")
    return encoding(torch.as_tensor(encoding._negative_rows[index], device=encoding.device))


class HybridTriples:
    """Rows (n, 4): the verbalised triple's table row, then the KG rows; vectors [verbalised ; φ(s, p, o)].

    The two blocks are each unit-norm here; the model combines them (concat or gate).
    """

    kind = "hybrid"
    uses_kg = True

    def __init__(self, embedder, composer):
        self.verbalized = VerbalizedTriples(embedder, composer.device)
        self.kg = KGTriples(composer)
        self.composer = composer
        self.device = composer.device
        self.text_dim = None
        self.dimension = None
        self._negative_rows = None

    def describe(self):
        return {"triple_encoding": self.kind, "triple_text": "subject-name predicate-label object-name",
                "text_dim": self.text_dim, "kg": self.kg.describe(), "dimension": self.dimension}

    def rows(self, records):
        text_rows = self.verbalized.rows(records)
        self.text_dim = self.verbalized.dimension
        self.dimension = self.text_dim + self.kg.dimension
        return np.concatenate([text_rows, self.kg.rows(records)], axis=1)

    def __call__(self, rows):
        import torch

        rows = torch.as_tensor(rows, device=self.device)
        return torch.cat([self.verbalized(rows[..., :1]), self.kg(rows[..., 1:])], dim=-1)

    def prepare_negatives(self, rows, records, mode, count, seed):
        """The same corruptions in both blocks: drawn in KG space, then verbalised and encoded once."""
        import torch

        kg = self.composer.kg
        generator = torch.Generator().manual_seed(seed)
        corrupted = corrupt(torch.as_tensor(rows[:, 1:]), mode, count, len(kg.entity_ids), len(kg.relation_ids),
                            generator).numpy()
        names = self.verbalized.names
        texts = [names.text(kg.entity_ids[s], kg.relation_ids[p], kg.entity_ids[o])
                 for per_pair in corrupted for s, p, o in per_pair]
        text_rows = self.verbalized.table.rows(texts).reshape(len(rows), count, 1)
        self._negative_rows = np.concatenate([text_rows, corrupted], axis=2)

    def negatives(self, index, rows, mode, count, generator):
        return _prepared_negatives(self, index)


def as_encoding(encoding):
    """An encoding as is; a bare Composer (the API before encodings) as the ``kg`` encoding."""
    return encoding if hasattr(encoding, "negatives") else KGTriples(encoding)


def triple_encoding(kind, kg=None, embedder=None, compose=AlignFitOptions.compose,
                    normalize=AlignFitOptions.kg_normalize, seed=DEFAULT_SEED, projection=None, device="cpu"):
    """The encoding ``kind`` over KG embeddings ``kg`` and/or the text ``embedder``."""
    if kind not in TRIPLE_ENCODINGS:
        raise InputError(f"unknown triple encoding {kind!r} (known: {', '.join(TRIPLE_ENCODINGS)})")
    if kind != "verbalized" and kg is None:
        raise InputError(f"--triple-encoding {kind} needs KG embeddings (--kg-embeddings)")
    if kind == "verbalized":
        return VerbalizedTriples(embedder, device)
    composer = Composer(kg, compose, normalize=normalize, seed=seed, projection=projection, device=device)
    return KGTriples(composer) if kind == "kg" else HybridTriples(embedder, composer)
