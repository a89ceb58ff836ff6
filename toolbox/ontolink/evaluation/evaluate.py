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
    candidate, its HO/LO/NO category, (top-1 score, top-1 right, marked NIL) and its --by value; one entry
    per NIL outcome (and its --by value); and one dict per top-1 miss (for the error classes and --errors)."""

    ranks: list = field(default_factory=list)
    categories: list = field(default_factory=list)
    top_scores: list = field(default_factory=list)
    nil_outcomes: list = field(default_factory=list)
    misses: list = field(default_factory=list)
    gold_namespaces: set = field(default_factory=set)
    predicted_namespaces: set = field(default_factory=set)
    longest: int = 0  # the most candidates a mention has
    values: list = field(default_factory=list)  # --by FIELD's value of each linkable mention
    nil_values: list = field(default_factory=list)  # and of each NIL outcome
    miss_values: list = field(default_factory=list)  # and of each miss
    nil_decided: bool = False  # some record carries a NIL decision ("nil": true or false, `link --nil-threshold`)


NO_VALUE = "(none)"  # the --by value of a record without the field


def by_value(record: dict[str, Any], by_field: str | None) -> str | None:
    """The --by FIELD value of a record as a row name: its text, NO_VALUE when it lacks the field."""
    if by_field is None:
        return None
    value = record.get(by_field)
    if value is None or value == "" or value == []:
        return NO_VALUE
    return "|".join(map(str, value)) if isinstance(value, list) else str(value)


def entity_names(ids: Iterable[str], ontology: Ontology | None) -> str | None:
    """"name; name" of the entities ``ids`` name in ``ontology`` (resolving alt and obsolete ids); None
    when there is no ontology or it names none of them."""
    if ontology is None:
        return None
    names = [ontology[live].name for entity_id in ids for live in ontology.resolve(entity_id)]
    return "; ".join(names) if names else None


def score_mentions(records: Iterable[dict[str, Any]], ontology: Ontology | None = None,
                   gold_by_id: dict[str, Any] | None = None, name: str = "<stdin>",
                   id_prefixes: dict[str, str] | None = None, keep_misses: bool = False,
                   by_field: str | None = None, stats: Any = None) -> LinkedScores:
    """LinkedScores of one file. A mention whose gold is ``[]`` is unlinkable (NIL): it is left out of
    the ranks and counted among the NIL outcomes as (gold_nil, predicted_nil, top_1_right). The misses
    name gold and prediction from ``ontology`` when given (the prediction from its candidate first).
    ``stats``: the reader's ``ReadStats``, whose line names a record refused here."""
    scores = LinkedScores()
    for record in records:
        gold = record.get("gold")
        if gold_by_id is not None:
            gold = gold_by_id.get(record["id"], gold)
        candidates = record["candidates"]
        scores.longest = max(scores.longest, len(candidates))
        scores.predicted_namespaces.update(namespace(candidate["id"]) for candidate in candidates)
        scores.nil_decided = scores.nil_decided or isinstance(record.get("nil"), bool)
        value = by_value(record, by_field)
        if gold == []:
            scores.nil_outcomes.append((True, bool(record.get("nil")), False))
            scores.nil_values.append(value)
            continue
        if not gold:
            raise InputError(f"mention {record['id']!r} has no gold ids; pass --gold FILE with labeled mentions",
                             name, getattr(stats, "line", None))
        gold = with_id_prefix(gold, id_prefixes, record.get("type", ""))
        scores.gold_namespaces.update(namespace(gold_id) for gold_id in gold)
        correct = hit_ids(gold, ontology)
        rank = first_rank((candidate["id"] for candidate in candidates), correct)
        scores.ranks.append(rank)
        scores.values.append(value)
        scores.nil_outcomes.append((False, bool(record.get("nil")), rank == 1))
        scores.nil_values.append(value)
        top = candidates[0] if candidates else {}
        scores.top_scores.append((top.get("score"), rank == 1, bool(record.get("nil"))))
        if ontology is not None:
            gold_names = [ontology[live].name for gold_id in gold for live in ontology.resolve(gold_id)]
            scores.categories.append(_best_category(record["mention"], gold_names) if gold_names else None)
        if keep_misses and rank != 1:
            predicted = top.get("id")
            predicted_name = top.get("name") or (entity_names([predicted], ontology) if predicted else None)
            scores.misses.append({"id": record["id"], "mention": record["mention"], "context": snippet(record),
                                  "gold": list(gold), "gold_name": entity_names(gold, ontology),
                                  "predicted": predicted, "predicted_name": predicted_name,
                                  "score": top.get("score"), "rank": None if rank == NOT_FOUND else int(rank),
                                  "nil": bool(record.get("nil"))})
            if by_field is not None:
                scores.misses[-1].setdefault(by_field, record.get(by_field))  # --errors can be split the same way
            scores.miss_values.append(value)
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


def metrics_from_ranks(ranks, ks=DEFAULT_KS, depth=None):
    """n, Recall@K of each K and MRR of linked mentions' ranks; Recall@K of a K past ``depth`` (the most
    candidates a mention has) is left out: the file does not tell it."""
    return ({"n": int(len(ranks))} | {f"R@{k}": recall_at(ranks, k) for k in ks if depth is None or k <= depth}
            | {"MRR": mean_reciprocal_rank(ranks)})


LENIENT = "lenient_R@1"
NOT_IN_ONTOLOGY = "not-in-ontology"  # the row of mentions whose gold ids the ontology does not hold
NIL_GOLD = "NIL"  # the row of mentions whose gold is [] (counted, not ranked)


def _parts(categories: Sequence[str | None]) -> dict[str, np.ndarray | None]:
    """{row: mask over the linkable mentions (None: all)}: all, then HO, LO, NO and not-in-ontology when the
    categories are known (they add up to all)."""
    parts: dict[str, np.ndarray | None] = {"all": None}
    if categories:
        labels = np.asarray([category or "" for category in categories])
        parts |= {category: labels == category for category in CATEGORIES} | {NOT_IN_ONTOLOGY: labels == ""}
    return parts


def by_sections(values: Sequence[str | None], nil_values: Sequence[str | None], by_field: str | None
                ) -> list[tuple[str, str | None]]:
    """[(row prefix, --by value)]: ("", None) for every mention, then ("FIELD=VALUE", VALUE) per value."""
    sections: list[tuple[str, str | None]] = [("", None)]
    if by_field is not None:
        sections += [(f"{by_field}={value}", value)
                     for value in sorted({value for value in [*values, *nil_values] if value is not None})]
    return sections


def row_name(prefix: str, part: str) -> str:
    """"HO" of every mention, "type=Disease HO" of one --by value ("type=Disease": its all)."""
    if not prefix:
        return part
    return prefix if part == "all" else f"{prefix} {part}"


def file_metrics(ranks: Sequence[float], categories: Sequence[str | None], ks: Sequence[int] = DEFAULT_KS,
                 depth: int | None = None, values: Sequence[str | None] = (), by_field: str | None = None,
                 nil_values: Sequence[str | None] = (), lenient: Sequence[bool] | None = None
                 ) -> dict[str, dict[str, float]]:
    """{row: metrics} for all mentions and, when categories are known, each of HO/LO/NO and the mentions
    whose gold is not in the ontology (the four add up to all); a NIL row counts the mentions whose gold
    is NIL (``nil_values``: one --by value each) when there are any; with ``by_field``, the same rows for
    each of its ``values`` (one per linkable mention), named by ``row_name``. ``lenient`` (one per linkable
    mention: top-1 right or one is_a step from gold) adds lenient_R@1 to each row."""
    ranks_array = np.asarray(ranks, dtype=float)
    chosen = np.asarray(list(values), dtype=object) if by_field is not None else None
    groups = {}
    for prefix, value in by_sections(values, nil_values, by_field):
        in_value = None if value is None or chosen is None else chosen == value
        for part, mask in _parts(categories).items():
            if in_value is not None:
                mask = in_value if mask is None else in_value & mask
            row = metrics_from_ranks(ranks_array if mask is None else ranks_array[mask], ks, depth)
            if lenient is not None:
                chosen_lenient = np.asarray(lenient, dtype=bool)
                chosen_lenient = chosen_lenient if mask is None else chosen_lenient[mask]
                row[LENIENT] = float(np.mean(chosen_lenient)) if len(chosen_lenient) else float("nan")
            groups[row_name(prefix, part)] = row
        nil_count = sum(1 for item in nil_values if value is None or item == value)
        if nil_count:
            groups[row_name(prefix, NIL_GOLD)] = {"n": nil_count}
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
