"""NIL: mentions that name nothing in the ontology (`link --nil-threshold`).

A mention is NIL when its best candidate scores below a threshold; its
candidates are kept. ``auto`` calibrates the threshold on the index alone, with
no gold labels, from two kinds of synthetic queries:

- linkable: ontology names queried as they are, each scored against every
  OTHER name (its own string left out), which is how a mention that names an
  entity in words the ontology does not list scores;
- unlinkable: word salad, each word of a name replaced by a random word of the
  ontology's vocabulary, which reads like the domain but names nothing; the
  hardest unrelated text one can make without a second corpus (shuffled
  characters score far lower and would set the threshold too low).

The threshold maximises Youden's J (share of linkable above it minus share of
unlinkable above it), capped so that it keeps at least ``KEEP_LINKABLE`` of the
linkable queries: a NIL mark on a linkable mention costs R@1, and corpora are
mostly linkable. Being computed from the index and a seed, it is the same for
every input and keeps `link` streaming.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ontolink.core.errors import InputError
from ontolink.core.io import warn

if TYPE_CHECKING:
    from ontolink.indexes.artifact import LoadedIndex

_WORDS = re.compile(r"\w+")
CALIBRATION_QUERIES = 400
KEEP_LINKABLE = 0.95


def _folded(text):
    return " ".join(_WORDS.findall(text.lower()))


def calibrate_nil_threshold(loaded_index: LoadedIndex, queries: int = CALIBRATION_QUERIES,
                            seed: int = 0) -> tuple[float, dict[str, Any]]:
    """(threshold, details) for ``loaded_index``, from synthetic linkable and unlinkable queries."""
    rng = random.Random(seed)
    names = loaded_index.names
    rows = rng.sample(range(len(names)), min(queries, len(names)))
    asked = [names[row] for row in rows]
    scores, found = loaded_index.name_index.search([loaded_index.query_text({"mention": text}) for text in asked], 8)
    linkable: list[float] = []
    for text, score_row, name_row in zip(asked, scores, found):
        others = [score for score, row in zip(score_row, name_row) if row >= 0 and _folded(names[row]) != _folded(text)]
        if others:
            linkable.append(others[0])
    vocabulary = sorted({word for name in names for word in re.findall(r"[^\W\d_]{3,}", name)})
    salad = [" ".join(rng.choice(vocabulary) for _ in _WORDS.findall(text)) or rng.choice(vocabulary)
             for text in asked]
    unlinkable, _ = loaded_index.name_index.search([loaded_index.query_text({"mention": text}) for text in salad], 1)
    if len(linkable) < 10:
        raise InputError("--nil-threshold auto: the index has too few distinct names to calibrate on; "
                         "give a number", loaded_index.directory)
    linkable_scores, unlinkable_scores = np.asarray(linkable, dtype=float), np.asarray(unlinkable[:, 0], dtype=float)
    candidates = np.unique(np.concatenate([linkable_scores, unlinkable_scores]))
    youden = [(np.mean(linkable_scores >= t) - np.mean(unlinkable_scores >= t), -t) for t in candidates]
    best = max(range(len(candidates)), key=lambda index: youden[index])
    threshold = min(float(candidates[best]), float(np.quantile(linkable_scores, 1 - KEEP_LINKABLE)))
    return round(threshold, 6), {"linkable_median": float(np.median(linkable_scores)),
                                 "unlinkable_median": float(np.median(unlinkable_scores)),
                                 "linkable_kept": float(np.mean(linkable_scores >= threshold)),
                                 "unlinkable_kept": float(np.mean(unlinkable_scores >= threshold))}


def mark_nil(records: Iterable[dict[str, Any]], threshold: float | None,
             retriever: bool = False) -> Iterator[dict[str, Any]]:
    """Yield each Linked mention with ``"nil"``: true when its best score is below ``threshold``
    (``retriever``: the best "retriever_score" of candidates a ranker ordered, its "score" being a probability)."""
    for record in records:
        candidates = record.get("candidates") or []
        if retriever and candidates:
            best = max(candidate.get("retriever_score", candidate["score"]) for candidate in candidates)
        else:
            best = candidates[0]["score"] if candidates else None
        record["nil"] = not candidates or best < threshold
        yield record


def resolve_nil_threshold(text: str | None, loaded_index: LoadedIndex, reranked: bool = False) -> float | None:
    """``--nil-threshold``: None, a number, or 'auto' (calibrated here, said on stderr)."""
    if text is None:
        return None
    if text != "auto":
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"takes a number or 'auto', not {text!r}") from None
    if reranked:
        raise ValueError("'auto' is calibrated on the index's scores, not a reranker's: give a number")

    threshold, details = calibrate_nil_threshold(loaded_index)
    warn(f"NIL threshold {threshold:.3f} (auto: keeps {details['linkable_kept']:.0%} of reworded names, "
         f"{details['unlinkable_kept']:.0%} of word salad)")
    return threshold


def nil_metrics(outcomes: Sequence[Any]) -> dict[str, Any]:
    """NIL detection from (gold_nil, predicted_nil, linked_right) triples: precision, recall and F1 of
    predicting NIL, and R@1 of the linkable mentions once NIL marks count (a NIL mark is a miss)."""
    outcomes = list(outcomes)
    gold_nil = sum(1 for gold, _, _ in outcomes if gold)
    predicted = sum(1 for _, nil, _ in outcomes if nil)
    right = sum(1 for gold, nil, _ in outcomes if gold and nil)
    linkable = [(nil, hit) for gold, nil, hit in outcomes if not gold]
    precision = right / predicted if predicted else 0.0
    recall = right / gold_nil if gold_nil else 0.0
    return {"nil_gold": gold_nil, "nil_predicted": predicted, "P": precision, "R": recall,
            "F1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
            "R@1_linkable": float(np.mean([hit and not nil for nil, hit in linkable])) if linkable else float("nan"),
            "linkable": len(linkable)}
