"""Training queries for a ranker, with no gold labels: each is (Mention record, answer entity row, name rows
held out of the index for it).

- synonym queries: an ontology synonym searched with itself held out; its entity is the answer. These are
  the hard, non-exact queries (a mention in other words than any listed name) that exact-match pairs lack.
- pair queries: `make-pairs` output (a corpus mention with its context, whose text equals a name of one
  entity); a seeded share of them is searched with the matched name held out, so that context, prior and
  abbreviations are learned on mentions the retriever cannot simply match, and the rest as they are, so
  that an exact match keeps its worth.
"""

import hashlib
import random

import numpy as np

from ontolink.core.errors import InputError
from ontolink.ontology import normalize
from ontolink.core.options import DEFAULT_SEED
from ontolink.ranking.options import TrainRankerOptions


def rows_by_text(loaded_index):
    """Normalised name text -> the index rows of the names with that text."""
    rows = {}
    for row, name in enumerate(loaded_index.names):
        rows.setdefault(normalize(name), []).append(row)
    return rows


def _owners(loaded_index, rows):
    return {int(loaded_index.entity_of_name[row]) for row in rows}


def synonym_queries(loaded_index, count, seed=DEFAULT_SEED):
    """Up to ``count`` (record, entity row, held-out rows) from names that are not an entity's preferred name."""
    if loaded_index.name_kinds is None:
        raise InputError("index predates name kinds; rebuild it with `ontolink index`", loaded_index.directory)
    rows_of_text = rows_by_text(loaded_index)
    names_per_entity = np.bincount(loaded_index.entity_of_name)
    eligible = []
    for row, (name, kind) in enumerate(zip(loaded_index.names, loaded_index.name_kinds)):
        held_out = rows_of_text[normalize(name)]
        entity = int(loaded_index.entity_of_name[row])
        # the entity must keep a name in the index, and the text must name that entity alone
        if kind != "name" and names_per_entity[entity] > len(held_out) and _owners(loaded_index, held_out) == {entity}:
            eligible.append(row)
    chosen = sorted(random.Random(seed).sample(eligible, min(count, len(eligible))))
    return [({"id": f"synonym:{row}", "mention": loaded_index.names[row]}, int(loaded_index.entity_of_name[row]),
             tuple(rows_of_text[normalize(loaded_index.names[row])])) for row in chosen]


def _held_out(record_id, fraction, seed):
    """A stable per-record coin: the same pairs are held out whatever their order or batch."""
    digest = hashlib.blake2b(f"{seed}:{record_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2 ** 64 < fraction


def pair_queries(pairs, loaded_index, hold_out_fraction=TrainRankerOptions.hold_out, seed=DEFAULT_SEED):
    """(record, entity row, held-out rows) from Pair records; pairs of entities not in the index are skipped."""
    row_of_entity = {entity_id: row for row, entity_id in enumerate(loaded_index.entity_ids)}
    rows_of_text = rows_by_text(loaded_index)
    queries = []
    for pair in pairs:
        entity = row_of_entity.get(pair["entity_id"])
        if entity is None:
            continue
        held_out = ()
        if _held_out(pair["id"], hold_out_fraction, seed):
            held_out = tuple(rows_of_text.get(normalize(pair["mention"]), ()))
        record = {key: value for key, value in pair.items() if key not in ("entity_id", "source", "alias")}
        queries.append((record, entity, held_out))
    return queries
