"""The flat index's search on the CPU: every name scored, each query's best ``k`` kept, best first, ties
by lower row.

Two ways to the same rows and scores:

* ``exact_search``: numpy's BLAS product (built for this CPU; the faiss-cpu wheel bundles a generic
  one; in float64, for small indexes), then ``best_columns``;
* ``flat_search`` with an ``Int8NameScan``: ONNX Runtime's integer kernels score every name from int8
  copies, 5-6x faster than the fp32 product on this CPU; the best ``k + SCAN_MARGIN`` of the scan are
  rescored exactly and the best ``k`` of those kept. The scan is off from the exact score by at most
  0.0033 (p99 0.0014) on HPO with queries in 127 steps, so the margin takes in every name of the exact
  top k: on the 2,246 distinct mention texts of NCBI-disease + GSC+ against HPO's 40,508 names, k = 278,
  a margin of 32 already missed none (16 missed one). Queries now take 63 steps (``Int8NameScan``: x86's
  kernels saturate above that), about twice the error, inside the margin of 64.

Both work query by query (the scan quantises each query with its own scale, integer sums are exact),
so a query's result does not depend on the queries beside it.
"""

import numpy as np

from ontolink.indexes.best_k import best_columns, best_of_blocks
from ontolink.encoders.onnx_sessions import SessionPool
from ontolink.indexes import onnx_proto

SCAN_MARGIN = 64
SCAN_MIN_NAMES = 10_000  # below this the fp32 product takes a few milliseconds: no scan to build
SCAN_ROWS = 128  # queries a session scores at once: 20 MB of scores, a block of them stays in cache
QUERY_STEPS = 63.0  # a query's integers each side of its zero point (see Int8NameScan: no int16 saturation)
QUERY_ZERO_POINT = 64
QUANTISE_ROWS = 256  # names quantised and transposed at once when the scan is made (23 ms for HPO, not 119)


def exact_search(matrix, queries, k):
    """(scores, rows) of the ``k`` best inner products of each query with ``matrix``'s rows, best first.

    The product is taken in float64 and rounded to float32: BLAS picks its kernel, and so the order of its
    sums, by the shape of the block (numpy 2.4's OpenBLAS gives a float32 product that changes in the last
    bit with the number of queries beside a query); float64 rounding errors do not reach float32's. A caller
    that searches the same ``matrix`` again passes it in float64 once converted."""
    matrix64 = matrix.astype(np.float64, copy=False)

    def scores(start, stop):
        return (queries[start:stop].astype(np.float64) @ matrix64.T).astype(np.float32)

    return best_of_blocks(scores, len(queries), k)


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


class NonFiniteVectors(ValueError):
    """Name vectors holding NaN or an infinity: a damaged index (``Int8NameScan`` refuses to quantise them)."""


class Int8NameScan:
    """Approximate inner products of queries with every row of ``matrix``, from int8 copies.

    Each row of ``matrix`` is quantised once with its own scale (symmetric, 127 steps), each query with
    its own at search time (unsigned, 63 steps each side of zero point 64); ONNX Runtime's
    ``MatMulIntegerToFloat`` sums the integers and applies the rows' scales. A query's own scale is left out:
    it orders nothing within the query's scores.

    The queries keep to 1..127 because x86 kernels of that operator (AVX2's ``vpmaddubsw``) add each two
    adjacent uint8 x int8 products into an int16 that saturates: with queries up to 255, two products reach
    64,770 and were cut at 32,767 (onnxruntime 1.32 on an AVX2 CPU: 2,265 of 60,000 scores wrong, some names of
    the exact top k never shortlisted). Up to 127, two products stay within 32,258, so the sums are exact.
    """

    def __init__(self, matrix, threads=None):
        # the largest |value| of each row without an |matrix| copy (62 MB for HPO): the larger of its largest
        # value and its smallest one negated, the same number
        largest = np.maximum(matrix.max(axis=1), -matrix.min(axis=1))
        if not np.isfinite(largest).all():  # a NaN anywhere in a row makes its maximum NaN
            raise NonFiniteVectors("vectors that are not finite numbers")
        scales = (np.maximum(largest, 1e-12) / 127.0).astype(np.float32)
        # names as columns (the product's right side), a block of names at a time: transposing the whole
        # int8 matrix at once is a strided copy, 5x slower. |value| / scale <= 127 by the scale's choice,
        # so rounding stays in int8 (no clip pass).
        integers = np.empty((matrix.shape[1], len(matrix)), dtype=np.int8)
        for start in range(0, len(matrix), QUANTISE_ROWS):
            block = slice(start, start + QUANTISE_ROWS)
            integers[:, block] = np.rint(matrix[block] / scales[block, None]).astype(np.int8).T
        self._sessions = SessionPool(int8_scan_model(integers, scales), threads)

    def scores(self, queries):
        """(len(queries), rows) float32: each query's scores, up to its own positive scale."""
        scale = np.maximum(np.abs(queries).max(axis=1, keepdims=True), 1e-12) / QUERY_STEPS
        quantised = (np.rint(queries / scale) + QUERY_ZERO_POINT).astype(np.uint8)  # within 1..127: no saturation
        return self._sessions.run({"queries": quantised})[0]

    def map(self, function, items):
        """``function`` over ``items`` on as many threads as there are sessions, results in order."""
        return self._sessions.map(function, items)


def int8_scan_model(names, scales):
    """ONNX model bytes: uint8 queries (zero point QUERY_ZERO_POINT) times int8 ``names`` (dimension x names),
    each column scaled by ``scales``."""
    dimension, count = names.shape
    return onnx_proto.model(
        "int8_name_scan",
        [onnx_proto.node("MatMulIntegerToFloat", ["queries", "names", "one", "name_scales", "zero_point"],
                         ["scores"], domain="com.microsoft")],
        [onnx_proto.value_info("queries", np.uint8, ["queries", dimension])],
        [onnx_proto.value_info("scores", np.float32, ["queries", count])],
        [onnx_proto.tensor("names", names), onnx_proto.tensor("name_scales", scales),
         onnx_proto.tensor("one", np.array(1.0, dtype=np.float32)),
         onnx_proto.tensor("zero_point", np.array(QUERY_ZERO_POINT, dtype=np.uint8))],
        {"": 17, "com.microsoft": 1})
