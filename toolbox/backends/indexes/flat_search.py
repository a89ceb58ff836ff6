"""The flat index's search on the CPU: every name scored, each query's best ``k`` kept, best first, ties
by lower row.

Two ways to the same rows and scores:

* ``exact_search``: numpy's BLAS product (built for this CPU; the faiss-cpu wheel bundles a generic
  one), then ``best_columns``;
* ``flat_search`` with an ``Int8NameScan``: ONNX Runtime's integer kernels score every name from int8
  copies, 5-6x faster than the fp32 product on this CPU; the best ``k + SCAN_MARGIN`` of the scan are
  rescored exactly and the best ``k`` of those kept. The scan is off from the exact score by at most
  0.0033 (p99 0.0014) on HPO, so the margin takes in every name of the exact top k: on the 2,246
  distinct mention texts of NCBI-disease + GSC+ against HPO's 40,508 names, k = 278, a margin of 32
  already missed none (16 missed one).

Both work query by query (the scan quantises each query with its own scale, integer sums are exact),
so a query's result does not depend on the queries beside it.
"""

import functools

import numpy as np

SCAN_MARGIN = 64
SCAN_MIN_NAMES = 10_000  # below this the fp32 product takes a few milliseconds: no scan to build
SCAN_ROWS = 128  # queries a session scores at once: 20 MB of scores, a block of them stays in cache
MEMBERS_PER_GROUP = 16  # columns per group in best_columns: about 1.05 k entries to sort at k = 278 of 40,508


def exact_search(matrix, queries, k, rows_per_block=256):
    """(scores, rows) of the ``k`` best inner products of each query with ``matrix``'s rows, best first;
    ``best_columns`` runs on every core (numpy releases the GIL while it compares and sorts)."""
    scores = np.empty((len(queries), k), dtype=np.float32)
    rows = np.empty((len(queries), k), dtype=np.int64)

    def best(block, start):
        rows[start:start + len(block)], scores[start:start + len(block)] = best_columns(block, k)

    pool, threads = _sorting_pool()
    for start in range(0, len(queries), rows_per_block):
        block = queries[start:start + rows_per_block] @ matrix.T
        if pool is None or len(block) < 8:
            best(block, start)
            continue
        step = -(-len(block) // threads)
        list(pool.map(best, *zip(*((block[offset:offset + step], start + offset)
                                    for offset in range(0, len(block), step)))))
    return scores, rows


def flat_search(matrix, queries, k, scan=None):
    """``exact_search``'s result, through ``scan`` (an ``Int8NameScan`` of ``matrix``) where one is given."""
    if scan is None:
        return exact_search(matrix, queries, k)
    shortlist = min(len(matrix), k + SCAN_MARGIN)
    scores = np.empty((len(queries), k), dtype=np.float32)
    rows = np.empty((len(queries), k), dtype=np.int64)

    def search_block(start):
        block = queries[start:start + SCAN_ROWS]
        candidates, _ = best_columns(scan.scores(block), shortlist)
        candidates.sort(axis=1)  # so that the stable sort below puts equal scores by lower row
        # one query at a time: its exact scores do not depend on the block (and its names stay in cache)
        exact = np.stack([matrix[names] @ query for names, query in zip(candidates, block)])
        order = np.argsort(-exact, axis=1, kind="stable")[:, :k]
        rows[start:start + len(block)] = np.take_along_axis(candidates, order, axis=1)
        scores[start:start + len(block)] = np.take_along_axis(exact, order, axis=1)

    list(scan.map(search_block, range(0, len(queries), SCAN_ROWS)))
    return scores, rows


class Int8NameScan:
    """Approximate inner products of queries with every row of ``matrix``, from int8 copies.

    Each row of ``matrix`` is quantised once with its own scale (symmetric, 127 steps), each query with
    its own at search time (unsigned, zero point 128); ONNX Runtime's ``MatMulIntegerToFloat`` sums the
    integers exactly and applies the rows' scales. A query's own scale is left out: it orders nothing
    within the query's scores.
    """

    def __init__(self, matrix, threads=None):
        from toolbox.onnx_sessions import SessionPool

        scales = (np.maximum(np.abs(matrix).max(axis=1), 1e-12) / 127.0).astype(np.float32)
        # |value| / scale <= 127 by the scale's choice, so rounding stays in int8 (no clip pass)
        integers = np.rint(matrix.T / scales).astype(np.int8)  # names as columns: the product's right side
        self._sessions = SessionPool(int8_scan_model(integers, scales), threads)

    def scores(self, queries):
        """(len(queries), rows) float32: each query's scores, up to its own positive scale."""
        scale = np.maximum(np.abs(queries).max(axis=1, keepdims=True), 1e-12) / 127.0
        quantised = (np.rint(queries / scale) + 128).astype(np.uint8)  # within 1..255, as the names' integers
        return self._sessions.run({"queries": quantised})[0]

    def map(self, function, items):
        """``function`` over ``items`` on as many threads as there are sessions, results in order."""
        return self._sessions.map(function, items)


def int8_scan_model(names, scales):
    """ONNX model bytes: uint8 queries (zero point 128) times int8 ``names`` (dimension x names), each
    column scaled by ``scales``."""
    from toolbox import onnx_proto

    dimension, count = names.shape
    return onnx_proto.model(
        "int8_name_scan",
        [onnx_proto.node("MatMulIntegerToFloat", ["queries", "names", "one", "name_scales", "zero_point"],
                         ["scores"], domain="com.microsoft")],
        [onnx_proto.value_info("queries", np.uint8, ["queries", dimension])],
        [onnx_proto.value_info("scores", np.float32, ["queries", count])],
        [onnx_proto.tensor("names", names), onnx_proto.tensor("name_scales", scales),
         onnx_proto.tensor("one", np.array(1.0, dtype=np.float32)),
         onnx_proto.tensor("zero_point", np.array(128, dtype=np.uint8))],
        {"": 17, "com.microsoft": 1})


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

    from toolbox.device import usable_threads

    threads = usable_threads()
    return (ThreadPoolExecutor(threads, thread_name_prefix="exact-search") if threads > 1 else None), threads


