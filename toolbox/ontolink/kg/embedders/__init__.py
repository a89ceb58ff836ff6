"""KG embedding methods for `ontolink embed-kg`: RDF2Vec (gensim) and any PyKEEN model.

Backends register in ``KG_EMBEDDERS``; their modules import pykeen or gensim
only when training, so ``ontolink --help`` never does. A method name that is
not registered is looked up among PyKEEN's models (``RotatE``, ``TuckER``,
``TransE``, ``DistMult``, ``ComplEx``, ...; case-insensitive) by the ``pykeen``
backend, which lists PyKEEN's models when the name is none of them.
"""

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ontolink.core.registry import Registry
from ontolink.formats.triples import TripleSet
from ontolink.core.options import AUTO_DEVICE, DEFAULT_SEED


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

    method: str | None = None

    if TYPE_CHECKING:
        # A backend's constructor takes its own options (the PyKEEN backend the model's name first).
        def __init__(self, *args: Any, **options: Any) -> None: ...

    def fit(self, triple_set: TripleSet, seed: int = DEFAULT_SEED, device: str = AUTO_DEVICE,
            progress: Any = None) -> KGEmbeddingResult:
        raise NotImplementedError


KG_EMBEDDERS: Registry[KGEmbedder] = Registry("KG embedder", "kg", "ontolink.kg.embedders", KGEmbedder)
MODEL_ZOO = "pykeen"  # the backend that takes any other method name as one of its models


def kg_embedder_class(method: str) -> type[KGEmbedder]:
    """The backend class for ``method``: a registered name, else the PyKEEN backend (a PyKEEN model)."""
    return KG_EMBEDDERS.get(method.lower() if method.lower() in KG_EMBEDDERS else MODEL_ZOO)
