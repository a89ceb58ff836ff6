"""Features of every retrieved candidate of a mention, for a ranker to combine.

``CandidateFeatures`` retrieves each mention's candidates (and, when a group asks, those of the long form of a
short form defined in the mention's document, merged in), gathers the names of every candidate once, and lays
the columns of the ranker's feature groups side by side. The groups themselves are modules of
``ontolink.ranking.groups``, one each (``group_names()`` lists them).
"""

from typing import NamedTuple

import numpy as np

from ontolink.ranking import FITTING_DEPTH
from ontolink.ranking.groups import FEATURE_GROUPS, check_groups, feature_columns
from ontolink.ranking.groups.base import CandidateBatch, Candidates
from ontolink.linking.linker import Linker
from ontolink.ranking.abbreviations import AbbreviationExpander


class FeaturedCandidates(NamedTuple):
    """A record's candidates as ``CandidateFeatures`` gives them: entity rows best first by the retriever, its
    scores, their features (K, F), the name row each was found by (what a ranked candidate says it matched), and
    1.0 where the long form of the mention found it (0.0 otherwise)."""

    entities: np.ndarray
    scores: np.ndarray
    features: np.ndarray
    name_rows: np.ndarray
    by_long_form: np.ndarray


class CandidateFeatures:
    """Retrieves a mention's top-K entities from ``loaded_index`` and computes the ``groups`` of features.

    ``options`` go to every group's ``prepare`` (``prior``: entity counts, ``second_encoder``: a spec, ...).
    """

    def __init__(self, loaded_index, groups, top_k=FITTING_DEPTH, **options):
        self.index = loaded_index
        self.groups = check_groups(groups)
        self.columns = feature_columns(self.groups)
        self.top_k = top_k
        self.linker = Linker(loaded_index, top_k=top_k)
        entity_of_name = loaded_index.entity_of_name
        # the name rows of each entity, as slices of one sorted array
        self._names_by_entity = np.argsort(entity_of_name, kind="stable")
        self._first_name = np.searchsorted(entity_of_name[self._names_by_entity],
                                           np.arange(len(loaded_index.entity_ids) + 1))
        self._groups = {}
        for name in self.groups:
            group = self._groups[name] = FEATURE_GROUPS.get(name)()
            group.prepare(loaded_index, options)
        self._expander = None
        if any(group.searches_long_forms for group in self._groups.values()):
            self._expander = AbbreviationExpander()

    def recorded(self):
        """What a ranker of these features records beside its groups and columns (each group's ``recorded``)."""
        return {key: value for name in self.groups for key, value in self._groups[name].recorded().items()}

    def __call__(self, records, exclude=None, groups=None):
        """For each record its ``FeaturedCandidates``: entity rows best first by the retriever, retriever scores,
        features (K, F), matched name rows, found by the long form.

        ``groups``: compute only these of the feature groups (in this object's order; the columns are then
        ``feature_columns`` of them): a gated ranker's cheap first pass.
        """
        groups = self.groups if groups is None else [group for group in self.groups if group in groups]
        expanded = [self._expander.long_form(record) if self._expander else None for record in records]
        if exclude or any(self._groups[group].reads_context for group in groups):
            return self._features(records, expanded, exclude, groups)
        # what the features read of a record is its query, mention and long form: records alike in those (a
        # mention repeated in a corpus) share one computation, and one result object
        first_of = {}
        firsts = [first_of.setdefault((self.index.query_text(record), record["mention"], long_form), position)
                  for position, (record, long_form) in enumerate(zip(records, expanded))]
        distinct = list(first_of.values())
        computed = dict(zip(distinct, self._features([records[position] for position in distinct],
                                                     [expanded[position] for position in distinct], None, groups)))
        return [computed[position] for position in firsts]

    def _features(self, records, expanded, exclude, groups):
        queries, owners, excluded = [], [], []
        for position, record in enumerate(records):
            queries.append(self.index.query_text(record))
            owners.append(position)
            excluded.append(exclude[position] if exclude else ())
            if expanded[position]:
                queries.append(self.index.query_text({**record, "mention": expanded[position]}))
                owners.append(position)
                excluded.append(excluded[-1])
        # a mention text repeats a lot in a corpus: searched once (training queries hold names out: never memoised)
        found = self.linker.search_rows(queries, exclude=excluded) if exclude else self.linker.rows(queries)
        searches = [[] for _ in records]
        for owner, result in zip(owners, found):
            searches[owner].append(result)
        batch = CandidateBatch(records, [self._merged(results) for results in searches], expanded, exclude,
                               self._name_rows)
        # every candidate's features of the batch as one matrix, a record's its rows (C order, as the ranker's
        # product reads them)
        columns = [column for group in groups for column in self._flat_columns(self._groups[group], batch)]
        matrix = (np.stack(columns, axis=1) if len(batch.every.entities)
                  else np.zeros((0, len(columns)))).astype(np.float32)
        return [FeaturedCandidates(found.entities, found.scores, matrix[start:end], found.name_rows,
                                   found.by_long_form)
                for found, start, end in zip(batch.candidates, batch.offsets.tolist(), batch.offsets[1:].tolist())]

    @staticmethod
    def _flat_columns(group, batch):
        """``group``'s columns over ``batch.every``: its ``flat_columns``, or its records' joined."""
        flat = group.flat_columns(batch)
        if flat is not None:
            return flat
        computed = [columns for columns in group.compute(batch) if columns is not None]
        return [np.concatenate([columns[number] for columns in computed]) if computed else np.zeros(0)
                for number in range(len(group.columns))]

    def _merged(self, results):
        """The ``Candidates`` of a record's searches: the mention's, then its long form's, if any. Each entity
        keeps its better score; best first, ties in search order."""
        entities, scores, name_rows = results[0]
        if len(results) == 1 and not (np.diff(scores) > 0).any():  # most records: the search's own order
            count = min(len(entities), self.top_k)
            # views of the search's arrays (the memo's), never written to: the batch copies them end to end
            return Candidates(entities[:count].astype(np.int64, copy=False),
                              scores[:count].astype(np.float32, copy=False),
                              name_rows[:count].astype(np.int64, copy=False), np.zeros(count, dtype=np.float32))
        best = {}  # entity row -> (score, name row, found by the long form)
        for by_long_form, (entities, scores, name_rows) in enumerate(results):
            for entity, score, name_row in zip(entities.tolist(), scores.tolist(), name_rows.tolist()):
                if entity not in best or score > best[entity][0]:
                    best[entity] = (score, name_row, by_long_form)
        order = sorted(best.items(), key=lambda item: -item[1][0])[:self.top_k]  # stable: ties keep search order
        return Candidates(np.array([entity for entity, _ in order], dtype=np.int64),
                          np.array([value[0] for _, value in order], dtype=np.float32),
                          np.array([value[1] for _, value in order], dtype=np.int64),
                          np.array([value[2] for _, value in order], dtype=np.float32))

    def _name_rows(self, entities, skip):
        """(name rows of ``entities``, slot of each row's entity), ``skip`` rows left out."""
        starts, ends = self._first_name[entities], self._first_name[entities + 1]
        counts = ends - starts
        offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        rows = self._names_by_entity[np.repeat(starts, counts) + offsets]
        slots = np.repeat(np.arange(len(entities)), counts)
        if skip:
            keep = ~np.isin(rows, list(skip))
            rows, slots = rows[keep], slots[keep]
        return rows, slots
