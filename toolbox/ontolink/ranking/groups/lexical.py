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

    def flat_columns(self, batch: CandidateBatch) -> list[np.ndarray]:
        lexical, exact = self._similarities(batch)
        return [lexical, lexical - batch.record_max(lexical), exact]

    def _similarities(self, batch: CandidateBatch) -> tuple[np.ndarray, np.ndarray]:
        """Per candidate of ``batch.every``: (best TF-IDF cosine of any query form to any of its names, exact
        match), each (form, name) pair's cosine computed once for the whole batch."""
        exact = np.zeros(len(batch.every.entities), dtype=np.float32)
        query_texts: list[str] = []
        owners: list[int] = []  # the record of each query form
        for position, record in enumerate(batch.records):
            long_form = batch.long_forms[position]
            forms = [record["mention"]] + ([long_form] if long_form else [])
            skip = batch.held_out(position)
            matching = {int(self._index.entity_of_name[row]) for form in forms
                        for row in self._rows_of_text.get(normalize(form), ()) if row not in skip}
            if matching:
                start, end = batch.offsets[position], batch.offsets[position + 1]
                exact[start:end] = np.isin(batch.every.entities[start:end], list(matching))
            query_texts += forms
            owners += [position] * len(forms)
        best = np.zeros(len(batch.every.entities), dtype=np.float32)
        name_rows, candidate_of_name = batch.flat_candidate_names
        if query_texts and len(name_rows):
            # each form pairs with every name of its record's candidates (``batch.name_offsets``' run of the record)
            name_starts = batch.name_offsets
            owner = np.array(owners, dtype=np.int64)
            lengths = name_starts[owner + 1] - name_starts[owner]
            pair_query = np.repeat(np.arange(len(owner)), lengths)
            pairs = np.arange(lengths.sum()) + np.repeat(name_starts[owner] - (np.cumsum(lengths) - lengths), lengths)
            similarity = sparse_pair_dots(self._trigrams.transform(query_texts), pair_query, self._name_matrix,
                                          name_rows[pairs])
            np.maximum.at(best, candidate_of_name[pairs], similarity)
        return best, exact
