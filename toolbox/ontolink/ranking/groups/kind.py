"""kind: the kind of name that matched: preferred name, EXACT synonym, RELATED synonym, other synonym."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ontolink.core.errors import InputError
from ontolink.ranking.groups import FEATURE_GROUPS, FeatureGroup

if TYPE_CHECKING:
    from ontolink.indexes.artifact import LoadedIndex
    from ontolink.ranking.groups.base import CandidateBatch

NAME_KINDS = ("name", "EXACT", "RELATED")


@FEATURE_GROUPS.register("kind")
class MatchedNameKind(FeatureGroup):
    columns = ("kind_name", "kind_exact", "kind_related", "kind_other")
    default = True
    position = 60

    def prepare(self, index: LoadedIndex, options: dict[str, Any]) -> None:
        if index.entity_depths is None or index.name_kinds is None:
            raise InputError("index predates candidate features (no depths or name kinds); rebuild it with "
                             "`ontolink index`", index.directory)
        # per name row: its kind's place in NAME_KINDS, len(NAME_KINDS) for any other
        code_of = {kind: code for code, kind in enumerate(NAME_KINDS)}
        self._kind_codes = np.array([code_of.get(kind, len(NAME_KINDS)) for kind in index.name_kinds], dtype=np.int8)
        self._one_hot = np.eye(len(NAME_KINDS) + 1, dtype=np.float32)

    def flat_columns(self, batch: CandidateBatch) -> list[np.ndarray]:
        # each candidate's kind as a one-hot row: two gathers instead of a comparison and a copy a column
        rows = self._one_hot[self._kind_codes[batch.every.name_rows]]
        return [rows[:, column] for column in range(len(NAME_KINDS) + 1)]
