"""Metrics of Retrieved records (from `ontolink align retrieve` / `align cv`): MRR, Hits@K, median rank,
macro MRR over predicates, per direction (d2t, t2d); mean ± std over folds.

Plain functions: ``retrieval_metrics(records)`` gives {group: {metric: value}} for
one file (fold); ``aggregate_folds([...])`` gives {group: {metric: {mean, std}}},
which ``render_retrieval`` prints.

The rank of a record is its ``rank`` field (the true candidate's place in the
whole pool, as align writes it). A record without one is ranked from its
``candidates``: the first whose id is in ``gold`` (a string or list; default the
record's ``pair_id``); a true candidate outside the list, or a null ``rank`` (the pool
held no true candidate), counts 0 towards MRR and Hits, and as rank pool + 1 in the
median rank (infinity when the pool size is unknown).
"""

import math

import numpy as np

from ontolink.core.errors import InputError
from ontolink.evaluation.rank_metrics import NOT_FOUND, first_rank, mean_reciprocal_rank, median_rank, recall_at
from ontolink.core.records import RETRIEVAL_DIRECTIONS
from ontolink.evaluation.evaluate import aggregate
from ontolink.evaluation.report import _cell as report_cell, Table, render_report

DEFAULT_KS = (1, 10)


def record_ranks(record):
    """(the true candidate's rank as MRR and Hits read it: inf when not found, the rank the median reads: pool + 1
    then, when the pool size is known). A missing pair once counted as found at pool + 1: MRR 1/6 and a hit at 10
    for a pool of 5 that held no true candidate."""
    rank = record.get("rank")
    if isinstance(rank, int) and not isinstance(rank, bool):
        return float(rank), float(rank)
    pool = record.get("pool")
    missing = (NOT_FOUND, float(pool + 1) if isinstance(pool, int) else NOT_FOUND)
    if "rank" in record:  # null: the pool had no true candidate
        return missing
    gold = record.get("gold", record.get("pair_id"))
    gold = {gold} if isinstance(gold, str) else set(gold or ())
    rank = first_rank((candidate.get("id") for candidate in record.get("candidates") or ()), gold)
    return missing if rank == NOT_FOUND else (rank, rank)


def metrics_from_ranks(ranks, ks=DEFAULT_KS, median_ranks=None):
    """n, MRR, Hits@K and median rank of an array of 1-based ranks (inf: never found); ``median_ranks``: the ranks
    the median reads instead (a pair not found at its pool size + 1)."""
    return ({"n": int(len(ranks)), "MRR": mean_reciprocal_rank(ranks)} | {f"Hits@{k}": recall_at(ranks, k) for k in ks}
            | {"median_rank": median_rank(ranks if median_ranks is None else median_ranks)})


def retrieval_metrics(records, ks=DEFAULT_KS, by_predicate=False, name="<stdin>"):
    """{direction: metrics + macro_MRR} for one file or fold; with ``by_predicate``, also
    {"d2t Association": metrics, ...} (macro_MRR is NaN there)."""
    ranks = {direction: [] for direction in RETRIEVAL_DIRECTIONS}
    medians = {direction: [] for direction in RETRIEVAL_DIRECTIONS}
    predicates = {direction: [] for direction in RETRIEVAL_DIRECTIONS}
    for record in records:
        direction = record.get("direction")
        if direction not in ranks:
            raise InputError(f"a record has direction {direction!r}; expected d2t or t2d", name)
        rank, median = record_ranks(record)
        ranks[direction].append(rank)
        medians[direction].append(median)
        predicates[direction].append(str(record.get("predicate", "")))
    if not any(ranks.values()):
        raise InputError("no records to evaluate", name)
    result = {}
    for direction in RETRIEVAL_DIRECTIONS:
        if not ranks[direction]:
            continue
        values, median_values = np.asarray(ranks[direction]), np.asarray(medians[direction])
        labels = np.asarray(predicates[direction])
        metrics = metrics_from_ranks(values, ks, median_values)
        per_predicate = {label: metrics_from_ranks(values[labels == label], ks, median_values[labels == label])
                         for label in sorted(set(labels))}
        metrics["macro_MRR"] = float(np.mean([entry["MRR"] for entry in per_predicate.values()]))
        result[direction] = metrics
        if by_predicate:
            for label, entry in per_predicate.items():
                result[f"{direction} {label}"] = entry | {"macro_MRR": math.nan}
    return result


def aggregate_folds(per_fold):
    """Mean ± population std of every metric over folds (files); a group or value missing from a fold
    (a predicate absent from it) is left out of that group's mean instead of making it NaN."""
    return aggregate(per_fold)


def query_word(groups):
    """What the rows of a summary scored: "texts" (D2T queries only), "triples" (T2D only) or "queries"."""
    directions = {str(group).split(" ", 1)[0] for group in groups}
    if directions == {"d2t"}:
        return "texts"
    if directions == {"t2d"}:
        return "triples"
    return "queries"


def rank_text(value):
    """A rank as people write one: 2, 2.5, 42.6 (at most one decimal, no trailing .0)."""
    text = f"{value:.1f}"
    return text.removesuffix(".0")


def _cell(value, metric, several):
    if metric == "median_rank" and value is not None and value["mean"] == value["mean"]:
        return f"{value['mean']:.1f} ± {value['std']:.1f}" if several else rank_text(value["mean"])
    return report_cell(value, metric, several)


def retrieval_table(summary, unit="folds"):
    """A summary as a report Table in the words of retrieval: the first column names the queries ("texts",
    "triples" or "queries", not "mentions"), a median rank reads 2 or 2.5 (over folds 42.6 ± 3.1) instead
    of 2.000, and the runs averaged over are ``unit`` (folds), not files."""
    return Table(summary, rows_are=query_word(summary), cell=_cell, unit=unit)


def render_retrieval(summary, fmt="markdown", names=(), unit="folds"):
    """A summary in one of ``ontolink.evaluation.report.FORMATS`` as ``retrieval_table`` words it."""
    return render_report({"metrics": retrieval_table(summary, unit)}, fmt, [str(name) for name in names])
