"""Grouped k-fold splits: no group (source document) in both train and test."""

import numpy as np

from ontolink.core.errors import InputError
from ontolink.core.options import DEFAULT_SEED
from ontolink.kg.options import AlignCvOptions, AlignFitOptions


def grouped_folds(groups, folds=AlignCvOptions.folds, seed=DEFAULT_SEED):
    """A list of ``folds`` arrays of row indices (the test rows of each fold).

    Groups are shuffled with ``seed``, then placed largest first into the fold
    with the fewest rows so far, so folds are balanced in pairs, not groups.
    """
    groups = [str(group) for group in groups]
    unique = sorted(set(groups))
    if folds < 2:
        raise InputError(f"--folds {folds}: cross-validation needs at least 2 folds")
    if len(unique) < folds:
        fewer = f"use --folds {len(unique)} or fewer, or " if len(unique) >= 2 else "give "
        raise InputError(f"cannot make {folds} folds from {len(unique)} group(s): a fold would be empty "
                         f"({fewer}pairs from more documents)")
    rows_of = {}
    for row, group in enumerate(groups):
        rows_of.setdefault(group, []).append(row)
    rng = np.random.default_rng(seed)
    order = [unique[i] for i in rng.permutation(len(unique))]
    order.sort(key=lambda group: -len(rows_of[group]))  # stable: ties keep the shuffled order
    sizes = np.zeros(folds, dtype=np.int64)
    members = [[] for _ in range(folds)]
    for group in order:
        fold = int(np.argmin(sizes))
        members[fold].extend(rows_of[group])
        sizes[fold] += len(rows_of[group])
    return [np.asarray(sorted(rows), dtype=np.int64) for rows in members]


def grouped_holdout(rows, groups, fraction=AlignFitOptions.validation_fraction, seed=DEFAULT_SEED):
    """Split ``rows`` into (train, validation) by group, about ``fraction`` of the rows held out."""
    rows = np.asarray(rows, dtype=np.int64)
    if fraction <= 0:
        return rows, np.zeros(0, dtype=np.int64)
    by_group = {}
    for row in rows:
        by_group.setdefault(str(groups[row]), []).append(row)
    names = sorted(by_group)
    rng = np.random.default_rng(seed)
    held, target = [], fraction * len(rows)
    for index in rng.permutation(len(names)):
        if len(held) >= target:
            break
        if len(held) + len(by_group[names[index]]) > len(rows) - 2:
            continue  # keep at least 2 rows to train on
        held.extend(by_group[names[index]])
    held = np.asarray(sorted(held), dtype=np.int64)
    return np.setdiff1d(rows, held), held
