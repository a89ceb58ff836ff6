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
    None) and the name rows held out for each (training queries; None at link time)."""

    def __init__(self, records: Sequence[dict[str, Any]], candidates: Sequence[Candidates],
                 long_forms: Sequence[str | None], exclude: Sequence[Sequence[int]] | None,
                 gather_names: Callable[[np.ndarray, set[int]], tuple[np.ndarray, np.ndarray]]) -> None:
        self.records = records
        self.candidates = candidates
        self.long_forms = long_forms
        self.exclude = exclude
        self._gather_names = gather_names

    def held_out(self, position: int) -> set[int]:
        return set(self.exclude[position]) if self.exclude else set()

    @cached_property
    def candidate_names(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per record: (rows of every name of every candidate, held-out names left out; the candidate slot of
        each row). Gathered once for every group that compares the mention with all of a candidate's names."""
        return [self._gather_names(found.entities, self.held_out(position))
                for position, found in enumerate(self.candidates)]


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

    def compute(self, batch: CandidateBatch) -> list[list[np.ndarray] | None]:
        """Per record of ``batch`` (a ``CandidateBatch``): a list of one array per column, one value per
        candidate (None for a record without candidates). By default ``candidate_columns`` of each record."""
        return [self.candidate_columns(found) if len(found.entities) else None for found in batch.candidates]

    def candidate_columns(self, found: Candidates) -> list[np.ndarray]:
        """The columns of one record's ``Candidates`` (for a group that needs nothing else of the batch)."""
        raise NotImplementedError

    def recorded(self) -> dict[str, Any]:
        """What a ranker fitted with this group writes into its manifest's "features" (given back to
        ``prepare`` as options when the ranker is loaded)."""
        return {}
