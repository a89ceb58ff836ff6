"""Scorers: what one retrieval direction compares, as vectors of documents and triples.

    VerbalizedScorer  the baseline: documents and verbalised triples, both through the frozen text encoder
    AlignedScorer     a trained alignment model: text vectors and encoded triples through its heads

``inputs(records)`` computes what does not depend on the direction (text vectors,
triple rows) once; ``vectors(retrieval, inputs)`` gives the (documents, triples)
vectors that ``retrieval`` (``d2t`` or ``t2d``) ranks by dot product.
"""

import numpy as np

from ontolink.kg.alignment.encoding import as_encoding
from ontolink.kg.alignment.pairs import verbalize


class VerbalizedScorer:
    """Rank by the frozen text encoder alone; a triple is its text "subject predicate object"."""

    kind = "verbalized"

    def __init__(self, embedder):
        self.embedder = embedder

    def inputs(self, records):
        return (self.embedder.encode([record["text"] for record in records]),
                self.embedder.encode([verbalize(record) for record in records]))

    def vectors(self, retrieval, inputs):
        documents, triples = inputs
        return documents, triples

    def describe(self):
        return {"scorer": "verbalized", "encoder": self.embedder.describe(),
                "triple_text": "subject-name predicate-label object-name"}


class AlignedScorer:
    """Rank with a trained alignment model: text vectors and encoded triples (encoding.py) through its heads."""

    kind = "aligned"

    def __init__(self, model, encoding, embedder, device="cpu", batch_size=4096):
        self.model = model
        self.encoding = as_encoding(encoding)
        self.embedder = embedder
        self.device = device
        self.batch_size = batch_size

    def inputs(self, records):
        return (self.embedder.encode([record["text"] for record in records]), self.encoding.rows(records))

    def vectors(self, retrieval, inputs):
        import torch

        texts, rows = inputs
        documents, triples = [], []
        self.model.eval()
        with torch.no_grad():
            for start in range(0, len(texts), self.batch_size):
                document, triple = self.model.spaces(
                    retrieval, torch.as_tensor(texts[start:start + self.batch_size], device=self.device),
                    self.encoding(torch.as_tensor(rows[start:start + self.batch_size], device=self.device)))
                documents.append(document.cpu().numpy())
                triples.append(triple.cpu().numpy())
        dimension = lambda parts: parts[0].shape[1] if parts else 0  # noqa: E731
        return (np.concatenate(documents) if documents else np.zeros((0, dimension(documents)), np.float32),
                np.concatenate(triples) if triples else np.zeros((0, dimension(triples)), np.float32))
