"""What every sentence encoder shares: de-duplication, known-vector reuse, length-bucketed batches.

A subclass supplies ``tokenize`` (texts -> token id lists) and ``forward``
(a padded id batch -> vectors). The loop here decides what is encoded at all:

* texts with the same token ids are one text (an uncased tokenizer makes
  "Seizures" and "seizures" the same input, so the same vector);
* a vector already known for those ids (an indexed name, or the persistent
  embedding cache) is reused, not recomputed;
* the rest run in batches of similar length, so short names carry little
  padding.

Reuse is exact only when an encoder's output for a text does not depend on
the other texts of its batch (``batch_invariant``); the ONNX int8 encoder
quantises activations per token for that reason.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

import numpy as np

from ontolink.core.errors import OntolinkError
from ontolink.core.registry import Registry
from ontolink.core.encoder_inputs import mention_input, entity_input


class KnownVectors(Protocol):
    """Vectors already computed, by token key (an index's names, the embedding cache); ``put_many``
    is optional and receives what was computed."""

    def get_many(self, keys: list[bytes]) -> dict[bytes, np.ndarray]: ...


def token_key(ids: Sequence[int]) -> bytes:
    """A 16-byte key for a token id sequence: what vectors are cached and matched by."""
    return hashlib.blake2b(np.asarray(ids, dtype=np.int32).tobytes(), digest_size=16).digest()


BATCHES_PER_RUNNER = 4  # batches each of an encoder's parallel runners gets of a small piece of work


def length_batches(lengths: Sequence[int], tokens_per_batch: int, max_batch_size: int) -> Iterator[np.ndarray]:
    """Row lists, shortest first, each holding at most ``tokens_per_batch`` padded tokens."""
    order = np.argsort(lengths, kind="stable")
    start = 0
    while start < len(order):
        end = start + 1
        # lengths grow along `order`, so a batch's longest text is its last
        while (end < len(order) and end - start < max_batch_size
               and lengths[order[end]] * (end + 1 - start) <= tokens_per_batch):
            end += 1
        yield order[start:end]
        start = end


class Encoder:
    """Texts to an (n, dimension) float32 array, rows in the order given (L2-normalised unless
    ``normalize`` is off).

    ``__init__(model, device, precision, max_length)`` loads the model; ``mention_text`` /
    ``entity_text`` say what a Mention record and an entity name are encoded as; ``describe()`` is
    what the index manifest records (enough to rebuild the same encoder at link time). A subclass
    implements ``tokenize`` and ``forward`` and inherits the loop below, or overrides ``encode``.
    """

    batch_invariant: bool = False
    tokens_per_batch: int = 4096
    max_batch_size: int = 256
    # batches an encoder runs at once (``map_batches``); the work is cut into at least this many
    parallel_batches: int = 1
    min_tokens_per_batch: int = 256

    # set by subclasses
    model_name: str | None = None
    dimension: int = None  # type: ignore[assignment]  # every subclass's __init__ sets it
    device: str = "cpu"
    precision: str | None = None
    max_length: int = 128
    normalize: bool = True
    retriever: dict[str, Any] | None = None  # the retriever manifest of a fine-tuned model
    # what the last encode() computed and reused (for summaries)
    last_encoded: int = 0
    last_reused: int = 0

    if TYPE_CHECKING:
        # What every registered encoder's constructor takes (load_encoder and ForwardBatches call it so);
        # declared for the checker only: the base class itself is never constructed.
        def __init__(self, model: str | None = ..., device: str = ..., precision: str | None = ...,
                     max_length: int = ...) -> None: ...

    @property
    def runtime(self) -> str | None:
        """The name this encoder is registered under: what `link` rebuilds it by."""
        return ENCODERS.name_of(type(self))

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token id lists (with special tokens, truncated to ``max_length``), one per text."""
        raise NotImplementedError

    def forward(self, id_lists: Sequence[Sequence[int]]) -> np.ndarray:
        """An (n, dimension) float32 array for a batch of token id lists (unnormalised)."""
        raise NotImplementedError

    @property
    def fingerprint(self) -> str:
        """What cached vectors are valid for: the weights, the runtime, the precision, the pooling."""
        raise NotImplementedError

    @property
    def marked_inputs(self) -> bool:
        """Whether texts are marked up (a retriever trained on context) or the bare strings."""
        retriever = self.retriever or {}
        return bool(retriever) and retriever.get("input_mode", "context") == "context"

    def describe(self) -> dict[str, Any]:
        return {"runtime": self.runtime, "model": self.model_name, "precision": self.precision,
                "dimension": self.dimension, "max_length": self.max_length, "normalized": self.normalize,
                "inputs": "marked" if self.marked_inputs else "plain", "batch_invariant": self.batch_invariant}

    def mention_text(self, record: dict[str, Any]) -> str:
        """The text a mention record is encoded as."""
        return mention_input(record) if self.marked_inputs else record["mention"].strip()

    def entity_text(self, name: str, definition: str) -> str:
        """The text an entity name is encoded as (name-based KB: one per name)."""
        return entity_input(name, definition) if self.marked_inputs else name

    def batch_tokens(self, total: int) -> int:
        """Padded tokens per batch for ``total`` tokens of work: small enough that each of the
        ``parallel_batches`` gets ``BATCHES_PER_RUNNER`` batches (a mention batch of `link` is often one
        batch's worth). One batch each left a runner idle while the other finished: batches hold equal padded
        tokens, but longer texts cost more a token, and the batches are cut by length (256 novel mentions at
        a time: 739 mentions/s in one batch each, 930 in four)."""
        if self.parallel_batches == 1:
            return self.tokens_per_batch
        share = -(-total // (self.parallel_batches * BATCHES_PER_RUNNER))
        return max(self.min_tokens_per_batch, min(self.tokens_per_batch, share))

    def map_batches(self, function: Callable[[Any], Any], batches: Iterable[Any]) -> Iterator[Any]:
        """``function`` over batches of token id lists, results in order (an encoder that can run
        several batches at once overrides it)."""
        return map(function, batches)

    def encode(self, texts: Sequence[str], progress: Any = None, known: KnownVectors | None = None,
               engine: Any = None) -> np.ndarray:
        """An (n, d) float32 array in the order of ``texts``.

        ``known``: vectors to reuse, an object with ``get_many(keys) -> {key: vector}``
        and optionally ``put_many({key: vector})`` (it then receives what was computed).
        ``engine``: where the batches to compute run (an ``Engine``; default: here).
        ``progress``: a bar updated per batch, in texts; in tokens when its unit is "token" (its total is then
        set here): names sorted by length make a rate in texts fall as the batches lengthen, one in tokens holds.
        """
        return self.encode_keyed(texts, progress=progress, known=known, engine=engine)[0]

    def encode_keyed(self, texts: Sequence[str], progress: Any = None, known: KnownVectors | None = None,
                     engine: Any = None) -> tuple[np.ndarray, list[bytes]]:
        """``encode``, and the token key of each text: what a name index keeps to reuse its vectors,
        from the one tokenisation the encoding needs."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32), []
        unique = list(dict.fromkeys(texts))
        ids = self.tokenize(unique)
        keys = [token_key(row) for row in ids]
        slot_of_key: dict[bytes, int] = {}
        for key in keys:
            slot_of_key.setdefault(key, len(slot_of_key))
        vectors = np.zeros((len(slot_of_key), self.dimension), dtype=np.float32)
        found = known.get_many(list(slot_of_key)) if known is not None and self.batch_invariant else {}
        for key, vector in found.items():
            vectors[slot_of_key[key]] = vector
        todo: dict[int, list[int]] = {}  # slot -> token ids, one per distinct key not found
        for key, row in zip(keys, ids):
            if key not in found:
                todo.setdefault(slot_of_key[key], row)
        in_tokens = progress is not None and getattr(progress, "unit", None) == "token"
        if in_tokens:
            progress.total = sum(len(row) for row in ids)
            progress.refresh()
        if progress is not None and found:
            progress.update(sum(len(row) for key, row in zip(keys, ids) if key in found) if in_tokens
                            else len(unique) - len(todo))
        slots = list(todo)
        lengths = [len(todo[slot]) for slot in slots]
        slot_batches = [[slots[row] for row in batch]
                         for batch in length_batches(lengths, self.batch_tokens(sum(lengths)), self.max_batch_size)]
        outputs = (engine.map if engine is not None else self.map_batches)(
            ForwardBatches(self), ([todo[slot] for slot in batch] for batch in slot_batches))
        for batch_slots, output in zip(slot_batches, outputs):
            vectors[batch_slots] = output
            if progress is not None:
                progress.update(sum(len(todo[slot]) for slot in batch_slots) if in_tokens else len(batch_slots))
        if todo and known is not None and self.batch_invariant and hasattr(known, "put_many"):
            key_of_slot = {slot: key for key, slot in slot_of_key.items()}
            known.put_many({key_of_slot[slot]: vectors[slot] for slot in slots})
        self.last_encoded, self.last_reused = len(todo), len(found)  # for summaries
        key_of_text = dict(zip(unique, keys))
        return (vectors[[slot_of_key[key_of_text[text]] for text in texts]],
                [key_of_text[text] for text in texts])


class ForwardBatches:
    """Vectors of a batch of token id lists (normalised where the encoder normalises): the function an
    engine runs for ``Encoder.encode``. Pickled (sent to a Ray actor) it keeps what loads the same
    encoder, and loads it there on its first batch, once per worker."""

    def __init__(self, encoder: Encoder) -> None:
        self.encoder: Encoder | None = encoder
        self.runtime = cast(str, encoder.runtime)  # a registered encoder's, so never None
        self.options: dict[str, Any] = {"model": encoder.model_name, "device": encoder.device,
                                        "precision": encoder.precision,
                        "max_length": encoder.max_length}

    def __getstate__(self) -> dict[str, Any]:
        return {"encoder": None, "runtime": self.runtime, "options": self.options}

    def __call__(self, id_lists: Sequence[Sequence[int]]) -> np.ndarray:
        if self.encoder is None:
                self.encoder = ENCODERS.get(self.runtime)(**self.options)
        output = self.encoder.forward(id_lists)
        if self.encoder.normalize:
            output = output / np.maximum(np.linalg.norm(output, axis=1, keepdims=True), 1e-12)
        return output


def pad(id_lists: Sequence[Sequence[int]], pad_id: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(input_ids, attention_mask) int64 arrays, right-padded to the longest list."""
    longest = max(len(ids) for ids in id_lists)
    input_ids = np.full((len(id_lists), longest), pad_id, dtype=np.int64)
    attention_mask = np.zeros((len(id_lists), longest), dtype=np.int64)
    for row, ids in enumerate(id_lists):
        input_ids[row, :len(ids)] = ids
        attention_mask[row, :len(ids)] = 1
    return input_ids, attention_mask


class UnsupportedModel(OntolinkError):
    """The model needs something a runtime does not do (the ONNX path: the torch runtime does it)."""


# the family's registry, beside its base class: every encoder module registers here (``ontolink.encoders`` exports it)
ENCODERS: Registry[Encoder] = Registry("encoder", "encoder", "ontolink.encoders", Encoder)
