"""context: cosine of the mention's sentence to the candidate's matched name under the index's own encoder, and
its gap to the best."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import re

import numpy as np

from ontolink.core.errors import InputError
from ontolink.ranking.groups import FEATURE_GROUPS, FeatureGroup

if TYPE_CHECKING:
    from ontolink.indexes.artifact import LoadedIndex
    from ontolink.ranking.groups.base import CandidateBatch

_SENTENCE_END = re.compile(r"[.!?]\s+(?=[A-Z0-9(\[])")
_CONTEXT_CHARACTERS = 300  # a sentence longer than this is cut around the mention


def mention_sentence(record: dict[str, Any]) -> str | None:
    """The sentence of the document that holds the mention (cut to a window when very long), or None."""
    left, right = record.get("context_left") or "", record.get("context_right") or ""
    if not (left.strip() or right.strip()):
        return None
    starts = [match.end() for match in _SENTENCE_END.finditer(left)]
    left = left[starts[-1]:] if starts else left
    end = _SENTENCE_END.search(right)
    right = right[:end.start() + 1] if end else right
    return (left[-_CONTEXT_CHARACTERS:] + record["mention"] + right[:_CONTEXT_CHARACTERS]).strip()


@FEATURE_GROUPS.register("context")
class SentenceContext(FeatureGroup):
    columns = ("context", "context_gap")
    runs_encoder = reads_context = True
    position = 40

    def prepare(self, index: LoadedIndex, options: dict[str, Any]) -> None:
        self._index = index
        self._encoder: Any = getattr(index.name_index, "encoder", None)
        if self._encoder is None or not hasattr(index.name_index, "vectors"):
            raise InputError("the context feature needs a dense index (it compares sentence and name vectors)",
                             index.directory)

    def compute(self, batch: CandidateBatch) -> list[list[np.ndarray] | None]:
        return [[context, context - context.max()] if len(context) else None for context in self._cosines(batch)]

    def _cosines(self, batch: CandidateBatch) -> list[np.ndarray]:
        """Per record: cosine of its sentence's vector to each candidate's matched-name vector (0 without context)."""
        sentences = [mention_sentence(record) for record in batch.records]
        distinct = list(dict.fromkeys(sentence for sentence in sentences if sentence))
        vectors = dict(zip(distinct, self._encoder.encode(distinct))) if distinct else {}
        result = []
        for sentence, found in zip(sentences, batch.candidates):
            if sentence is None or not len(found.entities):
                result.append(np.zeros(len(found.entities), dtype=np.float32))
                continue
            result.append(self._index.name_index.vectors(found.name_rows) @ vectors[sentence])
        return result
