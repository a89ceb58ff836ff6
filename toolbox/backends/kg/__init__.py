"""KG embedding methods for `ontolink embed-kg`: RDF2Vec (gensim) and any PyKEEN model.

Backends register here as "module:Class" and are imported only when chosen,
so ``ontolink --help`` never imports pykeen or gensim. A method name that is
not registered is looked up among PyKEEN's models (``RotatE``, ``TuckER``,
``TransE``, ``DistMult``, ``ComplEx``, ...; case-insensitive).
"""

import importlib
from dataclasses import dataclass, field

import numpy as np

KG_METHODS = {
    "rdf2vec": "toolbox.backends.kg.rdf2vec:RDF2Vec",
}
PYKEEN_BACKEND = "toolbox.backends.kg.pykeen_kg:PyKEENEmbedder"


def _load(path):
    module_name, class_name = path.split(":")
    return getattr(importlib.import_module(module_name), class_name)


def kg_embedder_class(method):
    """The backend class for ``method``: a registered name, else a PyKEEN model."""
    path = KG_METHODS.get(method.lower())
    return _load(path or PYKEEN_BACKEND)


@dataclass
class KGEmbeddingResult:
    """What a backend returns: row i of ``entity`` is ``TripleSet.entity_ids[i]``, likewise relations.

    Complex-valued vectors are already real here: [real parts | imaginary parts],
    twice the complex dimension; ``describe["complex"]`` says so.
    """

    entity: np.ndarray
    relation: np.ndarray
    curve: list = field(default_factory=list)
    describe: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)  # further named tensors, saved beside the two


class KGEmbedder:
    """Base class: one method, ``fit(triple_set) -> KGEmbeddingResult``; options are keywords."""

    method = None

    def fit(self, triple_set, seed=0, device="auto", progress=None):
        raise NotImplementedError
