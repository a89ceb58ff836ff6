"""`ontolink eval`: Recall@K and MRR of Linked-mention files, overall and by overlap category."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ontolink.core.errors import InputError
from ontolink.evaluation.rank_metrics import NOT_FOUND, first_rank, mean_reciprocal_rank, recall_at

if TYPE_CHECKING:
    from ontolink.ontology import Ontology

DEFAULT_KS = (1, 5, 32, 64)
CATEGORIES = ("HO", "LO", "NO")
_TOKEN = re.compile(r"[a-z0-9]+")


def overlap_category(mention, name):
    """Overlap of mention and gold name: HO = substring of the name (or equal up to a plural s), LO = a shared token,
    else NO (docs/evaluation.md)."""
    mention, name = " ".join(mention.lower().split()), " ".join(name.lower().split())
    if mention in name or mention == name + "s" or name == mention + "s":
        return "HO"
    if set(_TOKEN.findall(mention)) & set(_TOKEN.findall(name)):
        return "LO"
    return "NO"


def _best_category(mention, gold_names):
    categories = [overlap_category(mention, name) for name in gold_names]
    for category in CATEGORIES:  # the closest overlap any gold allows
        if category in categories:
            return category
    return None


def hit_ids(gold, ontology):
    """Ids that count as correct: the gold ids, what they resolve to, and those entities' alt ids."""
    ids = set(gold)
    if ontology is not None:
        for gold_id in gold:
            for live_id in ontology.resolve(gold_id):
                ids.add(live_id)
                ids.update(ontology[live_id].alt_ids)
    return ids


def namespace(entity_id):
    """The namespace of an id: "HP" of "HP:0001250", "" of a bare "D003693"."""
    return entity_id.split(":", 1)[0] if ":" in entity_id else ""


def with_id_prefix(ids, prefixes, kind=""):
    """Gold ids with the --id-prefix of the mention's type (or of every type) put before the bare ones."""
    prefix = prefixes.get(kind, prefixes.get("", "")) if prefixes else ""
    return [prefix + entity_id if prefix and ":" not in entity_id else entity_id for entity_id in ids]


def check_namespaces(gold_namespaces, predicted_namespaces, name):
    """A silent zero is the worst answer an evaluation can give: refuse when no gold id shares a namespace
    with any predicted id (bare MeSH ids against an index of MESH:... ids, say), naming the fix."""
    if not gold_namespaces or not predicted_namespaces or gold_namespaces & predicted_namespaces:
        return

    def shown(namespaces):
        return ", ".join(f"{space}:" if space else "bare ids" for space in sorted(namespaces)[:5])

    hint = ""
    if "" in gold_namespaces and len(predicted_namespaces - {""}) == 1:
        hint = f"; pass --id-prefix {next(iter(predicted_namespaces))}: to prefix the bare gold ids"
    raise InputError(f"no gold id shares a namespace with any prediction (gold: {shown(gold_namespaces)}; "
                     f"predicted: {shown(predicted_namespaces)}), every mention would score 0{hint}", name)


def _words_within(words, width):
    """As many of ``words`` (in order) as fit in ``width`` characters with their spaces."""
    kept, used = [], 0
    for word in words:
        used += len(word) + 1
        if used > width + 1:
            break
        kept.append(word)
    return kept


def snippet(record, width=60):
    """The mention in a little of its context, in whole words: "left words [mention] right words"."""
    left = _words_within(str(record.get("context_left") or "").split()[::-1], width)[::-1]
    right = _words_within(str(record.get("context_right") or "").split(), width)
    return " ".join(left + [f"[{record.get('mention', '')}]"] + right)


@dataclass
class LinkedScores:
    """What eval keeps of one file of Linked mentions: per linkable mention the rank of the first right
    candidate, its HO/LO/NO category, (top-1 score, top-1 right, marked NIL); one entry per NIL
    outcome; and one dict per top-1 miss (for the error classes and --errors)."""

    ranks: list = field(default_factory=list)
    categories: list = field(default_factory=list)
    top_scores: list = field(default_factory=list)
    nil_outcomes: list = field(default_factory=list)
    misses: list = field(default_factory=list)
    gold_namespaces: set = field(default_factory=set)
    predicted_namespaces: set = field(default_factory=set)
    longest: int = 0  # the most candidates a mention has


def score_mentions(records: Iterable[dict[str, Any]], ontology: Ontology | None = None,
                   gold_by_id: dict[str, Any] | None = None, name: str = "<stdin>",
                   id_prefixes: dict[str, str] | None = None, keep_misses: bool = False) -> LinkedScores:
    """LinkedScores of one file. A mention whose gold is ``[]`` is unlinkable (NIL): it is left out of
    the ranks and counted among the NIL outcomes as (gold_nil, predicted_nil, top_1_right)."""
    scores = LinkedScores()
    for record in records:
        gold = record.get("gold")
        if gold_by_id is not None:
            gold = gold_by_id.get(record["id"], gold)
        candidates = record["candidates"]
        scores.longest = max(scores.longest, len(candidates))
        scores.predicted_namespaces.update(namespace(candidate["id"]) for candidate in candidates)
        if gold == []:
            scores.nil_outcomes.append((True, bool(record.get("nil")), False))
            continue
        if not gold:
            raise InputError(f"mention {record['id']!r} has no gold ids; pass --gold FILE with labeled mentions",
                             name)
        gold = with_id_prefix(gold, id_prefixes, record.get("type", ""))
        scores.gold_namespaces.update(namespace(gold_id) for gold_id in gold)
        correct = hit_ids(gold, ontology)
        rank = first_rank((candidate["id"] for candidate in candidates), correct)
        scores.ranks.append(rank)
        scores.nil_outcomes.append((False, bool(record.get("nil")), rank == 1))
        top = candidates[0] if candidates else {}
        scores.top_scores.append((top.get("score"), rank == 1, bool(record.get("nil"))))
        if ontology is not None:
            gold_names = [ontology[live].name for gold_id in gold for live in ontology.resolve(gold_id)]
            scores.categories.append(_best_category(record["mention"], gold_names) if gold_names else None)
        if keep_misses and rank != 1:
            scores.misses.append({"id": record["id"], "mention": record["mention"], "context": snippet(record),
                                  "gold": list(gold), "gold_name": None, "predicted": top.get("id"),
                                  "predicted_name": top.get("name"),
                                  "score": top.get("score"), "rank": None if rank == NOT_FOUND else int(rank),
                                  "nil": bool(record.get("nil"))})
    if not scores.ranks:
        raise InputError("no records to evaluate", name)
    check_namespaces(scores.gold_namespaces, scores.predicted_namespaces, name)
    return scores


def score_file(records: Iterable[dict[str, Any]], ontology: Ontology | None = None, ks: Sequence[int] = DEFAULT_KS,
               gold_by_id: dict[str, Any] | None = None, name: str = "<stdin>",
               nil_outcomes: list | None = None) -> tuple[np.ndarray, list]:
    """Per-mention rank of the first correct candidate (``rank_metrics.NOT_FOUND`` = none) and category,
    for one file; NIL outcomes are appended to ``nil_outcomes`` when given (see score_mentions)."""
    scores = score_mentions(records, ontology=ontology, gold_by_id=gold_by_id, name=name)
    if nil_outcomes is not None:
        nil_outcomes.extend(scores.nil_outcomes)
    return np.asarray(scores.ranks, dtype=float), scores.categories


def metrics_from_ranks(ranks, ks=DEFAULT_KS):
    """n, Recall@K of each K and MRR of linked mentions' ranks."""
    return {"n": int(len(ranks))} | {f"R@{k}": recall_at(ranks, k) for k in ks} | {"MRR": mean_reciprocal_rank(ranks)}


def file_metrics(ranks: Sequence[float], categories: Sequence[str | None], ks: Sequence[int] = DEFAULT_KS
                 ) -> dict[str, dict[str, float]]:
    """{group: metrics} for all mentions and, when categories are known, each of HO/LO/NO."""
    values = np.asarray(ranks, dtype=float)
    groups = {"all": metrics_from_ranks(values, ks)}
    if categories:
        labels = np.asarray([category or "" for category in categories])
        for category in CATEGORIES:
            groups[category] = metrics_from_ranks(values[labels == category], ks)
        unknown = int(np.sum(labels == ""))
        if unknown:
            groups["all"]["gold_not_in_ontology"] = unknown
    return groups


def aggregate(per_file: Sequence[dict[str, dict[str, float]]]) -> dict[str, dict[str, dict[str, float]]]:
    """Mean ± population std of every metric over files (seeds, folds). A group or a value missing from a
    file (NIL rows where one run marked NIL, a predicate absent from a fold; NaN) is left out of that
    mean instead of making it NaN."""
    groups: list[str] = []
    for metrics in per_file:
        groups.extend(group for group in metrics if group not in groups)
    summary: dict[str, dict[str, dict[str, float]]] = {}
    for group in groups:
        names: list[str] = []
        for metrics in per_file:
            names.extend(name for name in metrics.get(group, {}) if name not in names)
        summary[group] = {}
        for name in names:
            values = np.asarray([metrics[group][name] for metrics in per_file if name in metrics.get(group, {})],
                                dtype=float)
            values = values[~np.isnan(values)]
            summary[group][name] = ({"mean": float(np.mean(values)), "std": float(np.std(values))} if len(values)
                                    else {"mean": math.nan, "std": math.nan})
    return summary
