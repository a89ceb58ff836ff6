"""What every feature group of the candidate ranker is: a few columns of numbers per retrieved candidate.

A group is one module in this package whose class subclasses ``FeatureGroup`` and registers itself in
``FEATURE_GROUPS``; ``CandidateFeatures`` (ranking/features.py) retrieves the candidates, hands every group
the same ``CandidateBatch`` and lays their columns side by side, in the ranker's order of groups.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ontolink.indexes.artifact import LoadedIndex


@dataclass(frozen=True)
class Candidates:
    """One record's candidates, best first by the retriever: entity rows, retriever scores, the name row each
    was found by, and 1.0 where the long form of the mention found it (0.0 otherwise)."""

    entities: np.ndarray
    scores: np.ndarray
    name_rows: np.ndarray
    by_long_form: np.ndarray


class CandidateBatch:
    """What a group's ``compute`` reads: the records, their candidates, the long form of each mention (or
    None) and the name rows held out for each (training queries; None at link time).

    ``every``: the candidates of all the records end to end (a ``Candidates`` of the whole batch: record 0's,
    then record 1's, ...), with ``offsets`` (record i's are ``offsets[i]:offsets[i + 1]``): a group's
    ``flat_columns`` computes on it at once, ``record_max`` and ``record_first`` giving each candidate its
    record's maximum or first value of a column, ``slot`` each candidate's place among its record's.
    """

    def __init__(self, records: Sequence[dict[str, Any]], candidates: Sequence[Candidates],
                 long_forms: Sequence[str | None], exclude: Sequence[Sequence[int]] | None,
                 gather_names: Callable[[np.ndarray, set[int]], tuple[np.ndarray, np.ndarray]]) -> None:
        self.records = records
        self.candidates = candidates
        self.long_forms = long_forms
        self.exclude = exclude
        self._gather_names = gather_names
        counts = np.array([len(found.entities) for found in candidates], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(counts)])
        self.every = Candidates(*(np.concatenate([getattr(found, field) for found in candidates]) if len(candidates)
                                  else np.zeros(0) for field in ("entities", "scores", "name_rows", "by_long_form")))
        self._record_of = np.repeat(np.arange(len(candidates)), counts)
        self._filled = np.flatnonzero(counts)  # records with a candidate: reduceat needs non-empty runs

    def held_out(self, position: int) -> set[int]:
        return set(self.exclude[position]) if self.exclude else set()

    @cached_property
    def slot(self) -> np.ndarray:
        """Each candidate's place among its record's (0: the retriever's best)."""
        return np.arange(len(self._record_of)) - self.offsets[self._record_of]

    def record_max(self, values: np.ndarray) -> np.ndarray:
        """Per candidate: the largest of ``values`` (one per candidate of the batch) over its record's."""
        maxima = np.zeros(len(self.candidates), dtype=values.dtype)
        if len(self._filled):
            maxima[self._filled] = np.maximum.reduceat(values, self.offsets[self._filled])
        return maxima[self._record_of]

    def record_first(self, values: np.ndarray) -> np.ndarray:
        """Per candidate: ``values`` at its record's first candidate."""
        return values[self.offsets[self._record_of]]

    def per_record(self, columns: Sequence[np.ndarray]) -> list[list[np.ndarray] | None]:
        """``columns`` of the whole batch as ``compute`` gives them: per record its slices (None without a
        candidate)."""
        return [[column[start:end] for column in columns] if end > start else None
                for start, end in zip(self.offsets.tolist(), self.offsets[1:].tolist())]

    @cached_property
    def flat_candidate_names(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows of every name of every candidate of the batch, held-out names left out; the candidate of each
        row, as its position in ``every``), gathered at once for every group that compares the mention with all
        of a candidate's names."""
        rows, candidate = self._gather_names(self.every.entities.astype(np.int64, copy=False), set())
        if self.exclude and any(len(held) for held in self.exclude) and len(rows):
            # (record, name row) pairs as one integer each: a record's held-out names are left out of its own rows
            width = int(max(rows.max(), max(max(held, default=0) for held in self.exclude))) + 1
            held_out = np.array([position * width + row for position, held in enumerate(self.exclude) for row in held],
                                dtype=np.int64)
            keep = ~np.isin(self._record_of[candidate] * width + rows, held_out)
            rows, candidate = rows[keep], candidate[keep]
        return rows, candidate

    @cached_property
    def name_offsets(self) -> np.ndarray:
        """Where each record's names start in ``flat_candidate_names`` (record i's are ``name_offsets[i]:
        name_offsets[i + 1]``): its rows come candidate by candidate."""
        return np.searchsorted(self.flat_candidate_names[1], self.offsets)

    @cached_property
    def candidate_names(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per record: (rows of every name of every candidate, held-out names left out; the candidate slot of
        each row): ``flat_candidate_names`` cut by record."""
        rows, candidate = self.flat_candidate_names
        bounds = self.name_offsets.tolist()
        return [(rows[start:end], candidate[start:end] - offset)
                for start, end, offset in zip(bounds, bounds[1:], self.offsets.tolist())]


class FeatureGroup:
    """A family of ranker features. ``columns`` name its values; ``compute`` gives them for a batch.

    Class attributes say how the ranker treats it: ``default`` (in `train ranker`'s default --features),
    ``required`` (every ranker has it), ``runs_encoder`` (runs a transformer over each mention: a gated
    ranker computes it only where its gate is unsure), ``reads_context`` (reads more of a record than its
    query, mention and long form, so repeated mentions cannot share one computation), ``searches_long_forms``
    (retrieval also searches the long form of a short form defined in the mention's document), and
    ``position`` (its place in listings and among the default groups: a ranker's columns follow its groups).
    """

    name: str | None = None  # set by FEATURE_GROUPS.register
    columns: tuple[str, ...] = ()
    default = False
    required = False
    runs_encoder = False
    reads_context = False
    searches_long_forms = False
    position = 100

    def prepare(self, index: LoadedIndex, options: dict[str, Any]) -> None:
        """Set up on ``index`` (a loaded index) before any batch; ``options`` holds CandidateFeatures'
        keyword options (``prior``: entity counts, ``second_encoder``: a spec, ...) and what earlier rankers
        recorded (``recorded``). Raises InputError when the index lacks what the group reads."""

    def flat_columns(self, batch: CandidateBatch) -> list[np.ndarray] | None:
        """The columns of every candidate of ``batch`` at once, each one value per candidate of ``batch.every``
        (a few array operations a batch instead of a few a record: at thousands of new mentions a second these
        were most of the ranker's time). None, the default: this group computes record by record
        (``compute``)."""
        return None

    def compute(self, batch: CandidateBatch) -> list[list[np.ndarray] | None]:
        """Per record of ``batch`` (a ``CandidateBatch``): a list of one array per column, one value per
        candidate (None for a record without candidates). By default ``flat_columns`` cut by record, or
        ``candidate_columns`` of each record."""
        flat = self.flat_columns(batch)
        if flat is not None:
            return batch.per_record(flat)
        return [self.candidate_columns(found) if len(found.entities) else None for found in batch.candidates]

    def candidate_columns(self, found: Candidates) -> list[np.ndarray]:
        """The columns of one record's ``Candidates`` (for a group that needs nothing else of the batch)."""
        raise NotImplementedError

    def recorded(self) -> dict[str, Any]:
        """What a ranker fitted with this group writes into its manifest's "features" (given back to
        ``prepare`` as options when the ranker is loaded)."""
        return {}
