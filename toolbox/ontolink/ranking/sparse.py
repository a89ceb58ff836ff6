"""Dot products of chosen pairs of rows of two sparse matrices: the lexical and overlap groups' kernel."""

import numpy as np


def sparse_pair_dots(queries, query_rows, names, name_rows, queries_per_block=256):
    """float32 dot products of CSR rows ``queries[query_rows[i]]`` and ``names[name_rows[i]]``; ``query_rows``
    ascending (each mention's candidates together).

    A block of query rows is made dense and each pair gathers the query's values at its name's few
    non-zeros: 3-4x faster than multiplying two stacked sparse matrices of the pairs (scipy copies every
    fancy-indexed row). Gathers are ``take`` on flat arrays (half the time of two-dimensional indexing).
    """
    result = np.zeros(len(query_rows), dtype=np.float32)
    columns = queries.shape[1]
    bounds = np.searchsorted(query_rows, np.arange(0, queries.shape[0] + queries_per_block, queries_per_block))
    for block, (first, last) in enumerate(zip(bounds, bounds[1:])):
        rows = name_rows[first:last]
        starts = names.indptr[rows]
        counts = names.indptr[rows + 1] - starts
        ends = np.cumsum(counts)
        nonempty = np.flatnonzero(counts)  # a name without a 3-gram scores 0
        if not len(nonempty):
            continue
        # where each pair's non-zeros lie in the names' arrays, pair after pair
        positions = np.arange(ends[-1]) + np.repeat(starts - ends + counts, counts)
        offsets = (query_rows[first:last] - block * queries_per_block) * columns
        dense = queries[block * queries_per_block:(block + 1) * queries_per_block].toarray().ravel()
        products = dense.take(np.repeat(offsets, counts) + names.indices.take(positions)) * names.data.take(positions)
        result[first + nonempty] = np.add.reduceat(products, (ends - counts)[nonempty])
    return result
