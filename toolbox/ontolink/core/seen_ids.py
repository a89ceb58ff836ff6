"""The ids a reader has seen, for reporting duplicates, in a bounded number of bytes.

Each id is kept as an 8-byte BLAKE2b hash (``hashlib``: the same in every run and on every machine, unlike
Python's salted ``hash()``) with the line it was first seen on: new ids go to a small dict, which is merged
into two sorted numpy arrays (hashes, lines) whenever it fills. A bit filter over the merged hashes (16 bits an
id) answers "never seen" for most new ids without a binary search. When the budget is spent no
further id is recorded, but every id is still checked against those recorded.
"""

import math
from hashlib import blake2b

import numpy as np

from ontolink.core.byte_budget import byte_budget

DEFAULT_BUDGET_BYTES = 64 << 20
BUDGET_VARIABLE = "ONTOLINK_DUPLICATE_IDS_BYTES"

# A recorded id costs 16 bytes in the sorted arrays (hash and line, int64 each), counted twice because a
# merge copies both arrays before the old ones are freed, and at most 8 in the filter (16 bits an id, up
# to twice that once rounded to a power of two, and the old filter while a larger one is made).
ARRAY_ENTRY_BYTES = 2 * 16 + 8
FILTER_BITS_PER_ID = 16
# An id waiting in the dict: its table slots, the int key and the int line (measured at 16,384 entries).
PENDING_ENTRY_BYTES = 150
PENDING_MAX = 1 << 14
_NOT_A_STRING = b"\xff"  # never in UTF-8: an id that is not a string never hashes the bytes of one


def budget_bytes() -> int:
    """The budget of the record of ids: 64 MiB, or ``ONTOLINK_DUPLICATE_IDS_BYTES`` (bytes, K/M/G suffix
    allowed; 0 records none, so no duplicate is found)."""
    return byte_budget(BUDGET_VARIABLE, DEFAULT_BUDGET_BYTES)


def id_key(value: object) -> int:
    """The 8-byte hash of an id, as a signed integer. Ids are equal as Python compares them, as a dict of
    them was: a string is its text (``"1"`` is not ``1``), a number its value (``1`` is ``1.0``; ``true``
    is ``1``), anything else (null, an array, an object) its JSON with sorted keys."""
    if isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
    else:
        data = _NOT_A_STRING + _canonical_text(value).encode("utf-8", "surrogatepass")
    return int.from_bytes(blake2b(data, digest_size=8).digest(), "little", signed=True)


def _canonical_text(value):
    import json

    if isinstance(value, (bool, int)):
        return str(int(value))
    if isinstance(value, float):
        return str(int(value)) if math.isfinite(value) and value.is_integer() else repr(float(value))
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)


class SeenIds:
    """Ids with the line each was first seen on, in at most ``budget`` bytes (``budget_bytes()``)."""

    def __init__(self, budget: int | None = None):
        self.budget = budget_bytes() if budget is None else budget
        # the dict takes at most a quarter of the budget; the rest is the arrays' and the filter's
        self._pending_max = min(PENDING_MAX, self.budget // 4 // PENDING_ENTRY_BYTES)
        self.capacity = max(0, (self.budget - self._pending_max * PENDING_ENTRY_BYTES) // ARRAY_ENTRY_BYTES)
        self._pending: dict[int, int] = {}
        self._hashes = np.empty(0, np.int64)  # sorted
        self._lines = np.empty(0, np.int64)
        self._filter = bytearray(1)  # bit (hash & bits - 1) set for each merged hash
        self._filter_mask = 0  # bytes - 1
        self.recorded = 0  # ids recorded (pending or merged)
        self.full = False  # an id came that there was no room for

    def first_line(self, value: object, line_number: int) -> int | None:
        """The line ``value`` was first seen on, or None when it is new: then it is recorded on
        ``line_number`` if there is room (``full`` says when there was not)."""
        if type(value) is str:  # id_key, inline: this runs once a record
            try:
                data = value.encode()
            except UnicodeEncodeError:
                data = value.encode("utf-8", "surrogatepass")
            key = int.from_bytes(blake2b(data, digest_size=8).digest(), "little", signed=True)
        else:
            key = id_key(value)
        first = self._pending.get(key)
        if first is not None:
            return first
        if self._filter[(key >> 3) & self._filter_mask] >> (key & 7) & 1:
            at = int(self._hashes.searchsorted(key))
            if at < len(self._hashes) and int(self._hashes[at]) == key:
                return int(self._lines[at])
        if self.recorded >= self.capacity:
            self.full = True
            return None
        self._pending[key] = line_number
        self.recorded += 1
        if len(self._pending) >= self._pending_max:
            self._merge()
        return None

    def _merge(self):
        """Move the pending ids into the sorted arrays and the filter (made larger first when it is past
        its bits an id)."""
        count = len(self._pending)
        keys = np.fromiter(self._pending.keys(), np.int64, count)
        lines = np.fromiter(self._pending.values(), np.int64, count)
        self._pending.clear()
        order = np.argsort(keys)
        keys, lines = keys[order], lines[order]
        at = np.searchsorted(self._hashes, keys)
        self._hashes = np.insert(self._hashes, at, keys)
        self._lines = np.insert(self._lines, at, lines)
        if len(self._filter) * 8 < FILTER_BITS_PER_ID * len(self._hashes):
            size = 1 << math.ceil(math.log2(FILTER_BITS_PER_ID * len(self._hashes) / 8))
            self._filter, self._filter_mask = bytearray(size), size - 1
            keys = self._hashes  # every hash into the new filter
        bits = np.frombuffer(self._filter, np.uint8)  # a view: the bytearray is written
        np.bitwise_or.at(bits, (keys >> 3) & self._filter_mask, (1 << (keys & 7)).astype(np.uint8))
