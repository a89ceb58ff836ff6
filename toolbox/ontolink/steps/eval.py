"""`ontolink eval`: Recall@K and MRR of Linked-mention files, overall and by overlap category."""

import re

import numpy as np

from ontolink.errors import InputError

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


def score_file(records, ontology=None, ks=DEFAULT_KS, gold_by_id=None, name="<stdin>", nil_outcomes=None):
    """Per-mention rank of the first correct candidate (0 = none) and category, for one file.

    A mention whose gold is ``[]`` is unlinkable (NIL): it is left out of the
    ranks and, like every mention, appended to ``nil_outcomes`` as
    (gold_nil, predicted_nil, top_1_right)."""
    ranks, categories = [], []
    for record in records:
        gold = record.get("gold")
        if gold_by_id is not None:
            gold = gold_by_id.get(record["id"], gold)
        if gold == [] and nil_outcomes is not None:
            nil_outcomes.append((True, bool(record.get("nil")), False))
            continue
        if not gold:
            raise InputError(f"mention {record['id']!r} has no gold ids; pass --gold FILE with labeled mentions",
                             name)
        correct = hit_ids(gold, ontology)
        rank = next((position for position, candidate in enumerate(record["candidates"], 1)
                     if candidate["id"] in correct), 0)
        ranks.append(rank)
        if nil_outcomes is not None:
            nil_outcomes.append((False, bool(record.get("nil")), rank == 1))
        if ontology is not None:
            gold_names = [ontology[live].name for gold_id in gold for live in ontology.resolve(gold_id)]
            categories.append(_best_category(record["mention"], gold_names) if gold_names else None)
    if not ranks:
        raise InputError("no records to evaluate", name)
    return np.asarray(ranks), categories


def metrics_from_ranks(ranks, ks=DEFAULT_KS):
    found = ranks > 0
    result = {"n": int(len(ranks))}
    for k in ks:
        result[f"R@{k}"] = float(np.mean(found & (ranks <= k))) if len(ranks) else float("nan")
    result["MRR"] = float(np.mean(np.where(found, 1.0 / np.maximum(ranks, 1), 0.0))) if len(ranks) else float("nan")
    return result


def file_metrics(ranks, categories, ks=DEFAULT_KS):
    """{group: metrics} for all mentions and, when categories are known, each of HO/LO/NO."""
    groups = {"all": metrics_from_ranks(ranks, ks)}
    if categories:
        labels = np.asarray([category or "" for category in categories])
        for category in CATEGORIES:
            groups[category] = metrics_from_ranks(ranks[labels == category], ks)
        unknown = int(np.sum(labels == ""))
        if unknown:
            groups["all"]["gold_not_in_ontology"] = unknown
    return groups


def aggregate(per_file):
    """Mean ± population std of every metric over files (seeds)."""
    summary = {}
    for group in per_file[0]:
        summary[group] = {}
        for metric in per_file[0][group]:
            values = np.asarray([metrics[group][metric] for metrics in per_file], dtype=float)
            summary[group][metric] = {"mean": float(np.mean(values)), "std": float(np.std(values))}
    return summary
