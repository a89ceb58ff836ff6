"""Boosted regression trees on top of the ranker's conditional logit, for bench_ranker.py --trees (a measurement,
not a shipped model): the same per-query softmax loss, each round a small scikit-learn regression tree fitted to
its gradient, its leaves set by one Newton step, the number of rounds chosen on held-out queries.

Why it is here: it tells whether a nonlinear combination of the ranker's features does better. Fitted on the
no-gold queries it does better on held-out queries of the same kind (top-1 0.66 -> 0.70-0.73) but not on GSC+;
cross-validated on GSC+ gold it does (bench_ranker.py prints both). So its limit is the training queries, and it
is not shipped. The trees are plain arrays (feature, threshold, left, right, value per node), scored with numpy.
"""

import numpy as np

TREE_KEYS = ("tree_feature", "tree_threshold", "tree_left", "tree_right", "tree_value")


def query_softmax(scores, starts, sizes):
    top = np.maximum.reduceat(scores, starts)
    exponent = np.exp(scores - np.repeat(top, sizes))
    return exponent / np.repeat(np.add.reduceat(exponent, starts), sizes)


def query_log_likelihood(scores, labels, starts, sizes):
    """Mean log-probability of each query's answer (labels: one 1 per query)."""
    top = np.maximum.reduceat(scores, starts)
    total = np.add.reduceat(np.exp(scores - np.repeat(top, sizes)), starts)
    return float((scores[labels == 1] - top - np.log(total)).mean())


def _boundaries(groups):
    starts = np.r_[0, np.flatnonzero(np.diff(groups)) + 1]
    return starts, np.diff(np.r_[starts, len(groups)])


def fit_boosted_trees(matrix, labels, groups, base, validation, rounds=300, learning_rate=0.1, depth=3,
                      min_leaf=100, patience=30, seed=0):
    """Trees added to the scores ``base`` of ``matrix``'s rows (grouped by query in ``groups``, one answer each).

    ``validation``: a boolean mask of rows (whole queries) held out of fitting; the number of rounds kept is
    the one with the best held-out log-likelihood (stopping after ``patience`` rounds without a gain).
    Returns (trees as arrays, {"rounds": kept, "validation_log_likelihood": [per round]}).
    """
    from sklearn.tree import DecisionTreeRegressor

    fit_rows = ~validation
    X_fit, y_fit, base_fit = matrix[fit_rows], labels[fit_rows], base[fit_rows].astype(np.float64)
    X_val, y_val, base_val = matrix[validation], labels[validation], base[validation].astype(np.float64)
    fit_starts, fit_sizes = _boundaries(groups[fit_rows])
    val_starts, val_sizes = _boundaries(groups[validation])
    trees, history = [], [query_log_likelihood(base_val, y_val, val_starts, val_sizes)]
    best_round = 0
    scores_fit, scores_val = base_fit.copy(), base_val.copy()
    for round_number in range(rounds):
        probability = query_softmax(scores_fit, fit_starts, fit_sizes)
        gradient = y_fit - probability
        hessian = np.maximum(probability * (1 - probability), 1e-6)
        tree = DecisionTreeRegressor(max_depth=depth, min_samples_leaf=min_leaf, random_state=seed + round_number)
        tree.fit(X_fit, gradient)
        # one Newton step per leaf: sum of gradients over sum of hessians
        leaves = tree.apply(X_fit)
        node_count = tree.tree_.node_count
        value = np.bincount(leaves, gradient, node_count) / np.maximum(np.bincount(leaves, hessian, node_count), 1e-6)
        value *= learning_rate
        arrays = _tree_arrays(tree.tree_, value)
        trees.append(arrays)
        scores_fit += value[leaves]
        scores_val += _score_tree(arrays, X_val)
        history.append(query_log_likelihood(scores_val, y_val, val_starts, val_sizes))
        if history[-1] > history[best_round]:
            best_round = round_number + 1
        elif round_number + 1 - best_round >= patience:
            break
    return stack_trees(trees[:best_round]), {"rounds": best_round, "validation_log_likelihood": history}


def _tree_arrays(tree, value):
    leaf = tree.children_left == -1
    nodes = np.arange(tree.node_count)
    # a leaf points at itself, so walking a fixed number of steps stays on it
    return {"tree_feature": np.where(leaf, 0, tree.feature).astype(np.int32),
            "tree_threshold": np.where(leaf, np.inf, tree.threshold).astype(np.float64),
            "tree_left": np.where(leaf, nodes, tree.children_left).astype(np.int32),
            "tree_right": np.where(leaf, nodes, tree.children_right).astype(np.int32),
            "tree_value": np.where(leaf, value, 0.0).astype(np.float64)}


def stack_trees(trees):
    """One (trees, nodes) array per key, shorter trees padded with a leaf worth 0."""
    width = max((len(tree["tree_feature"]) for tree in trees), default=1)
    stacked = {}
    for key in TREE_KEYS:
        fill = {"tree_threshold": np.inf}.get(key, 0)
        rows = []
        for tree in trees:
            row = np.full(width, fill, dtype=tree[key].dtype)
            row[:len(tree[key])] = tree[key]
            if key in ("tree_left", "tree_right"):
                row[len(tree[key]):] = np.arange(len(tree[key]), width)
            rows.append(row)
        stacked[key] = np.array(rows).reshape(len(trees), width).astype(
            np.float64 if key in ("tree_threshold", "tree_value") else np.int32)
    return stacked


def _score_tree(tree, matrix):
    node = np.zeros(len(matrix), dtype=np.int64)
    values = matrix.astype(np.float64)
    rows = np.arange(len(matrix))
    for _ in range(len(tree["tree_feature"])):
        go_left = values[rows, tree["tree_feature"][node]] <= tree["tree_threshold"][node]
        following = np.where(go_left, tree["tree_left"][node], tree["tree_right"][node])
        if np.array_equal(following, node):
            break
        node = following
    return tree["tree_value"][node]


def tree_scores(trees, matrix):
    """Sum of the stacked ``trees`` over the rows of ``matrix`` (features in the ranker's column order)."""
    count = len(trees["tree_feature"])
    if not count or not len(matrix):
        return np.zeros(len(matrix))
    node = np.zeros((len(matrix), count), dtype=np.int64)
    values = matrix.astype(np.float64)
    rows = np.arange(len(matrix))[:, None]
    tree = np.arange(count)[None, :]
    for _ in range(trees["tree_feature"].shape[1]):
        feature = trees["tree_feature"][tree, node]
        go_left = values[rows, feature] <= trees["tree_threshold"][tree, node]
        following = np.where(go_left, trees["tree_left"][tree, node], trees["tree_right"][tree, node])
        if np.array_equal(following, node):
            break
        node = following
    return trees["tree_value"][tree, node].sum(axis=1)


def boosted_scorer(matrix, labels, groups, keep, seed=0, validation_share=0.2, **options):
    """matrix -> scores of the conditional logit plus boosted trees, both fitted on ``matrix`` (the columns
    ``keep`` of a full feature matrix), a seeded share of its queries held out to choose the rounds."""
    from ontolink.ranking.fit import fit_conditional_logit

    queries = np.unique(groups)
    held = np.random.default_rng(seed).choice(queries, int(len(queries) * validation_share), replace=False)
    validation = np.isin(groups, held)
    weights = fit_conditional_logit(matrix[~validation], labels[~validation], groups[~validation])

    def linear(rows):
        return ((rows - weights["mean"]) / weights["scale"]) @ weights["coefficients"]

    trees, _ = fit_boosted_trees(matrix, labels, groups, linear(matrix), validation, seed=seed, **options)
    return lambda full: linear(full[:, keep]) + tree_scores(trees, full[:, keep])
