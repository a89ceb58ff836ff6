"""lexical: character 3-gram TF-IDF cosine of the mention (or its long form) to the candidate's closest name, its
gap to the best, and whether a name equals the mention (normalised)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ontolink.ontology import normalize
from ontolink.ranking.groups import FEATURE_GROUPS, FeatureGroup
from ontolink.ranking.queries import rows_by_text
from ontolink.ranking.sparse import sparse_pair_dots
from ontolink.ranking.tables import ranker_tables

if TYPE_CHECKING:
    from ontolink.indexes.artifact import LoadedIndex
    from ontolink.ranking.groups.base import CandidateBatch


@FEATURE_GROUPS.register("lexical")
class CharacterTrigrams(FeatureGroup):
    columns = ("lexical", "lexical_gap", "exact")
    default = True
    position = 10

    def prepare(self, index: LoadedIndex, options: dict[str, Any]) -> None:
        tables = ranker_tables(index)  # built by `index`; scikit-learn's vectorizer cost more than linking
        self._index = index
        self._trigrams = tables.trigrams
        self._rows_of_text = rows_by_text(index)
        self._name_matrix = tables.name_trigrams

    def compute(self, batch: CandidateBatch) -> list[list[np.ndarray] | None]:
        return [[lexical, lexical - lexical.max(), exact] if len(lexical) else None
                for lexical, exact in self._similarities(batch)]

    def _similarities(self, batch: CandidateBatch) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per record: (best TF-IDF cosine of any query form to any of the candidate's names, exact match)."""
        query_texts: list[str] = []
        # per (form, candidate names) block: the names' rows and slots, the block's length and slot offset; the
        # pair arrays are made once for the batch (two array operations per record were most of this group's time)
        pair_name: list[np.ndarray] = []
        pair_slot: list[np.ndarray] = []
        block_lengths: list[int] = []
        block_offsets: list[int] = []
        slot_offset = [0]
        exact = []
        every = batch.candidate_names
        for position, (record, found) in enumerate(zip(batch.records, batch.candidates)):
            long_form = batch.long_forms[position]
            forms = [record["mention"]] + ([long_form] if long_form else [])
            skip = batch.held_out(position)
            matching = {int(self._index.entity_of_name[row]) for form in forms
                        for row in self._rows_of_text.get(normalize(form), ()) if row not in skip}
            exact.append(np.array([entity in matching for entity in found.entities.tolist()], dtype=np.float32)
                         if matching else np.zeros(len(found.entities), dtype=np.float32))
            rows, slots = every[position]
            for _ in forms:
                pair_name.append(rows)
                pair_slot.append(slots)
                block_lengths.append(len(rows))
                block_offsets.append(slot_offset[-1])
            query_texts += forms
            slot_offset.append(slot_offset[-1] + len(found.entities))
        best = np.zeros(slot_offset[-1], dtype=np.float32)
        if pair_name:
            queries = self._trigrams.transform(query_texts)
            # each form is one query row, in order: block i pairs query row i with its record's candidate names
            pair_query = np.repeat(np.arange(len(block_lengths)), block_lengths)
            similarity = sparse_pair_dots(queries, pair_query, self._name_matrix, np.concatenate(pair_name))
            slots_of_pairs = np.concatenate(pair_slot) + np.repeat(np.array(block_offsets, dtype=np.int64),
                                                                   block_lengths)
            np.maximum.at(best, slots_of_pairs, similarity)
        return [(best[start:end], exact[position])
                for position, (start, end) in enumerate(zip(slot_offset, slot_offset[1:]))]
