"""Fit a ranker: features of every candidate of every training query, a conditional logit over them, its
weights as plain arrays (ranking/train.py saves them with ontolink.ranking.ranker)."""

import time

import numpy as np

from ontolink.core.progress import progress_bar
from ontolink.ranking.groups import encoder_free, feature_columns
from ontolink.ranking.margin import top_margin
from ontolink.training.loop import rank_of, rank_scores
from ontolink.ranking.options import TrainRankerOptions


class NothingToFit(ValueError):
    """No training query found its answer among the candidates: there is no row to fit a ranker on."""

    def __init__(self, queries: int) -> None:
        super().__init__(f"none of the {queries} training queries retrieved its answer: nothing to fit")
        self.queries = queries


def training_matrix(features, queries, batch_size=256, progress=None):
    """(X, y, query ids, summary) over ``queries``; a query whose answer was not retrieved is skipped."""
    rows, labels, groups = [], [], []
    skipped = 0
    for start in range(0, len(queries), batch_size):
        batch = queries[start:start + batch_size]
        found = features([record for record, _, _ in batch], exclude=[held_out for _, _, held_out in batch])
        for number, ((_, answer, _), (entities, _, matrix, *_)) in enumerate(zip(batch, found)):
            hits = entities == answer
            if not hits.any():
                skipped += 1
                continue
            rows.append(matrix)
            labels.append(hits.astype(np.int8))
            groups.append(np.full(len(entities), start + number, dtype=np.int64))
        if progress is not None:
            progress.update(len(batch))
    if not rows:
        return None, None, None, skipped
    return np.concatenate(rows), np.concatenate(labels), np.concatenate(groups), skipped


def fit_conditional_logit(matrix, labels, groups, regularisation=TrainRankerOptions.regularisation):
    """A logistic regression over each query's candidates at once (softmax within a query, the answer's
    log-probability maximised; McFadden's conditional logit), on standardised features, by L-BFGS.

    Listwise rather than per candidate: a feature only has to tell the answer from the other candidates of
    its own query, so query-level shifts (an easy query's high scores) do not pollute the weights.
    scikit-learn has no per-query softmax, hence scipy's optimiser.
    """
    from scipy.optimize import minimize

    mean = matrix.mean(axis=0)
    scale = matrix.std(axis=0)
    scale[scale == 0] = 1.0  # a constant feature (e.g. no prior for this ontology) gets weight 0
    standard = ((matrix - mean) / scale).astype(np.float64)
    starts = np.r_[0, np.flatnonzero(np.diff(groups)) + 1]
    sizes = np.diff(np.r_[starts, len(groups)])
    answers = np.flatnonzero(labels)
    queries = len(starts)

    def objective(weights):
        scores = standard @ weights
        top = np.maximum.reduceat(scores, starts)
        exponent = np.exp(scores - np.repeat(top, sizes))
        total = np.add.reduceat(exponent, starts)
        probability = exponent / np.repeat(total, sizes)
        loss = -(scores[answers] - top - np.log(total)).sum() / queries + regularisation * weights @ weights
        gradient = (probability @ standard - standard[answers].sum(axis=0)) / queries + 2 * regularisation * weights
        return loss, gradient

    weights = minimize(objective, np.zeros(matrix.shape[1]), jac=True, method="L-BFGS-B").x
    return {"mean": mean.astype(np.float32), "scale": scale.astype(np.float32),
            "coefficients": weights.astype(np.float32), "intercept": np.zeros(1, dtype=np.float32)}


def top1_accuracy(scores, labels, groups):
    """Share of queries whose highest-scoring candidate is the answer (ties: the first, i.e. retriever order)."""
    correct = total = 0
    boundaries = np.flatnonzero(np.diff(groups)) + 1
    for part_scores, part_labels in zip(np.split(scores, boundaries), np.split(labels, boundaries)):
        correct += int(part_labels[int(np.argmax(part_scores))])
        total += 1
    return correct / max(1, total)


def fit_ranker(features, queries, regularisation=TrainRankerOptions.regularisation, batch_size=256, gate_coverage=None):
    """(weights, report) for ``queries`` (see ontolink.ranking.queries) under ``features``; with
    ``gate_coverage`` and an encoder-running group among the features, also a gate (``fit_gate``)."""
    started = time.perf_counter()
    with progress_bar(total=len(queries), desc="ranker features", unit="query") as progress:
        matrix, labels, groups, skipped = training_matrix(features, queries, batch_size, progress)
    if matrix is None:
        raise NothingToFit(len(queries))
    featurised = time.perf_counter() - started
    weights = fit_conditional_logit(matrix, labels, groups, regularisation)
    dense = features.columns.index("dense")
    starts = np.r_[0, np.flatnonzero(np.diff(groups)) + 1]  # each query's first candidate in the index's order
    fitted = ((matrix - weights["mean"]) / weights["scale"]) @ weights["coefficients"]
    report = {
        "queries": int(len(np.unique(groups))), "skipped_unretrieved": skipped,
        # a query whose answer the index already ranks first only confirms that order: the others teach the ranker
        "answer_first": int(labels[starts].sum()), "candidates": int(len(labels)),
        "seconds_features": round(featurised, 1), "seconds_fit": round(time.perf_counter() - started - featurised, 2),
        # on the training queries themselves: what the ranker changed over retrieval order
        "training_top1_retriever": round(top1_accuracy(matrix[:, dense], labels, groups), 4),
        "training_top1_ranker": round(top1_accuracy(fitted, labels, groups), 4),
    }
    gate_groups = encoder_free(features.groups)
    if gate_coverage is not None and len(gate_groups) < len(features.groups):
        gate_weights, report["gate"] = fit_gate(matrix, labels, groups, features.columns, fitted, gate_groups,
                                                gate_coverage, regularisation)
        weights.update({f"gate_{name}": value for name, value in gate_weights.items()})
    return weights, report


def fit_gate(matrix, labels, groups, columns, fitted, gate_groups, coverage, regularisation):
    """(weights, report) of a gate: a ranker on the features that run no encoder, and the top-1 margin
    under which a mention is worth the rest. The margin is set on the training queries, no gold involved:
    of the queries whose top-1 the full ranker changes, a ``coverage`` share lies below it."""
    keep = [columns.index(column) for column in feature_columns(gate_groups)]
    weights = fit_conditional_logit(matrix[:, keep], labels, groups, regularisation)
    gated = ((matrix[:, keep] - weights["mean"]) / weights["scale"]) @ weights["coefficients"]
    boundaries = np.flatnonzero(np.diff(groups)) + 1
    tops, margins, changed = [], [], []
    for gate_scores, full_scores, answers in zip(np.split(gated, boundaries), np.split(fitted, boundaries),
                                                 np.split(labels, boundaries)):
        top = int(np.argmax(gate_scores))
        margins.append(top_margin(gate_scores))
        changed.append(top != int(np.argmax(full_scores)))
        tops.append((answers[top], answers[int(np.argmax(full_scores))]))
    margins, changed = np.array(margins), np.array(changed)
    margin = float(np.quantile(margins[changed], coverage)) if changed.any() else 0.0
    refined = margins <= margin
    cascade = np.mean([full if refine else gate for (gate, full), refine in zip(tops, refined)])
    report = {"groups": list(gate_groups), "coverage": coverage, "margin": round(margin, 4),
              "training_share_refined": round(float(refined.mean()), 4),
              "training_top1_gate": round(float(np.mean([gate for gate, _ in tops])), 4),
              "training_top1_gated_ranker": round(float(cascade), 4)}
    return weights, report


def held_out_scores(features, queries, weights, batch_size=256):
    """(the index's order, the ranker's): {"R@1", "MRR", "queries"} of held-out ``queries``, each over its top-K
    candidates (a query whose answer was not retrieved is a miss for both)."""
    matrix, labels, groups, skipped = training_matrix(features, queries, batch_size)
    start, fitted = [None] * skipped, [None] * skipped
    if matrix is not None:
        scores = ((matrix - weights["mean"]) / weights["scale"]) @ weights["coefficients"]
        boundaries = np.flatnonzero(np.diff(groups)) + 1
        for part_scores, part_labels in zip(np.split(scores, boundaries), np.split(labels, boundaries)):
            answer = int(np.flatnonzero(part_labels)[0])
            start.append(answer + 1)  # candidates come in the index's order
            fitted.append(rank_of(part_scores, answer))
    return rank_scores(start), rank_scores(fitted)
