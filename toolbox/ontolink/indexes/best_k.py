"""Each row's best ``k`` values of a dense score matrix, best first, ties by lower column, in bounded memory:
what the flat and TF-IDF searches keep of their scores."""

import functools

import numpy as np

from ontolink.core.device import usable_threads

MEMBERS_PER_GROUP = 16  # columns per group in best_columns: about 1.05 k entries to sort at k = 278 of 40,508


def best_of_blocks(score_rows, count, k, rows_per_block=256):
    """(scores, rows) of the ``k`` best of each of ``count`` score rows, best first, ties by lower column;
    ``score_rows(start, stop)`` gives rows ``start:stop`` as a dense array, so that only a block of them
    is ever held. ``best_columns`` runs on every core (numpy releases the GIL while it compares and sorts)."""
    scores = np.empty((count, k), dtype=np.float32)
    rows = np.empty((count, k), dtype=np.int64)

    def best(block, start):
        rows[start:start + len(block)], scores[start:start + len(block)] = best_columns(block, k)

    pool, threads = _sorting_pool()
    for start in range(0, count, rows_per_block):
        block = score_rows(start, min(count, start + rows_per_block))
        if pool is None or len(block) < 8:
            best(block, start)
            continue
        step = -(-len(block) // threads)
        list(pool.map(best, *zip(*((block[offset:offset + step], start + offset)
                                    for offset in range(0, len(block), step)))))
    return scores, rows


def best_columns(block, k):
    """(columns, values) of each row's ``k`` largest values, largest first, ties by lower column.

    Exact, and 10-15x faster than a partial sort of every row at a few hundred of 40,000 names: the
    columns are cut into groups of ``MEMBERS_PER_GROUP`` (spread across the row, so near-duplicate
    names, which stand side by side, fall into different groups); the k-th largest group maximum is a
    value that at least k entries reach (each of the k best groups has one), so only the entries that
    reach it are sorted.
    """
    count, width = block.shape
    members = min(MEMBERS_PER_GROUP, width // k) if k else 0
    if members < 2:
        return _best_columns_by_sort(block, k)
    groups = width // members  # at least k; group g holds columns g, g + groups, g + 2 groups, ...
    spread = groups * members
    maxima = block[:, :spread].reshape(count, members, groups).max(axis=1)
    if spread < width:  # the last few columns are groups of one
        maxima = np.concatenate([maxima, block[:, spread:]], axis=1)
    threshold = np.partition(maxima, maxima.shape[1] - k, axis=1)[:, maxima.shape[1] - k]
    flat = np.flatnonzero(block >= threshold[:, None])  # row by row, columns ascending
    row_of = flat // width
    reached = np.bincount(row_of, minlength=count)
    if (reached < k).any():  # only NaN leaves a row short
        return _best_columns_by_sort(block, k)
    values = block.ravel()[flat]
    # one stable sort by (row, value descending): equal values keep their column order
    order = np.argsort((row_of.astype(np.uint64) << np.uint64(32)) | _descending_key(values), kind="stable")
    firsts = np.cumsum(reached) - reached
    picked = order[(firsts[:, None] + np.arange(k)).ravel()]
    return (flat[picked] % width).reshape(count, k), values[picked].reshape(count, k)


def _descending_key(values):
    """uint64 keys of float32 ``values`` that sort in descending order of the values."""
    bits = (np.asarray(values, dtype=np.float32) + np.float32(0)).view(np.uint32)  # -0.0 as 0.0
    ascending = np.where(bits >> np.uint32(31), ~bits, bits | np.uint32(0x80000000))
    return (~ascending).astype(np.uint64)


def _best_columns_by_sort(block, k):
    """``best_columns`` by one stable sort of every row: for small rows (and NaN, which sorts last)."""
    top = np.argsort(-block, axis=1, kind="stable")[:, :k]
    return top, np.take_along_axis(block, top, axis=1)


@functools.cache
def _sorting_pool():
    """(threads for best_columns, their number): one per usable core, made once; no pool on one core."""
    from concurrent.futures import ThreadPoolExecutor

    threads = usable_threads()
    return (ThreadPoolExecutor(threads, thread_name_prefix="exact-search") if threads > 1 else None), threads
