"""Sentence encoders: one module each, registered in ``ENCODERS`` (``--encoder``).

An encoder turns texts into one float32 vector each. The dense name index and
`link` only use this interface, so a new encoder (another runtime, another
library) is one module here whose class subclasses ``Encoder`` and registers.
"""

from toolbox.registry import Registry


class Encoder:
    """Texts to an (n, dimension) float32 array, rows in the order given.

    ``__init__(model, device, precision, max_length)`` loads the model;
    ``mention_text`` / ``entity_text`` say what a Mention record and an entity
    name are encoded as; ``describe()`` is what the index manifest records
    (enough to rebuild the same encoder at link time).
    """

    dimension = None

    def encode(self, texts, progress=None):
        raise NotImplementedError

    def mention_text(self, record):
        return record["mention"].strip()

    def entity_text(self, name, definition):
        return name

    def describe(self):
        raise NotImplementedError


ENCODERS = Registry("encoder", "encoder", "toolbox.backends.encoders", Encoder)
DEFAULT_ENCODER_BACKEND = "sentence-transformers"
