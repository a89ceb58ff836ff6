"""The flat index's CPU search: best_columns, the int8 scan with exact rescoring, the ONNX bytes it runs."""

import numpy as np
import onnx
import pytest

from ontolink.indexes.best_k import _best_columns_by_sort, best_columns
from ontolink.indexes.flat_search import Int8NameScan, exact_search, flat_search, int8_scan_model


def unit_rows(count, dimension, seed):
    rows = np.random.default_rng(seed).standard_normal((count, dimension)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.mark.parametrize("width, k", [(40_508, 278), (1000, 64), (1000, 1), (100, 64), (50, 50), (5000, 5000)])
def test_best_columns_is_a_stable_sort_of_each_row(width, k):
    """Equal values (many, after rounding) come by lower column, as one stable sort of the row puts them."""
    block = np.round(np.random.default_rng(width + k).standard_normal((37, width)), 2).astype(np.float32)
    block[:, 5] = block[:, 7]
    block[0, -1] = -0.0  # compares equal to 0.0 and must sort with it
    columns, values = best_columns(block, k)
    expected_columns, expected_values = _best_columns_by_sort(block, k)
    assert np.array_equal(columns, expected_columns) and np.array_equal(values, expected_values)


def test_best_columns_with_nan_still_returns_the_best_numbers():
    block = np.random.default_rng(0).standard_normal((4, 5000)).astype(np.float32)
    block[2, 10] = np.nan
    columns, values = best_columns(block, 10)
    assert not np.isnan(values).any()
    assert np.array_equal(values[2], np.sort(np.delete(block[2], 10))[::-1][:10])


def test_the_scan_is_approximate_and_rescoring_makes_it_exact():
    names, queries = unit_rows(12_000, 64, 0), unit_rows(300, 64, 1)
    k = 100
    _, exact_rows = exact_search(names, queries, k)
    scan = Int8NameScan(names, threads=2)
    scanned_rows, _ = best_columns(scan.scores(queries), k)
    # the int8 order alone differs from the exact one: what the test below checks is the rescoring
    assert sum(set(found) != set(exact) for found, exact in zip(scanned_rows, exact_rows)) > 10
    scores, rows = flat_search(names, queries, k, scan)
    assert all(set(found) == set(exact) for found, exact in zip(rows, exact_rows))
    # in exact order (float64 products; fp32 sums differ in the 8th digit, so near ties may swap)
    reference = np.take_along_axis(queries.astype(np.float64) @ names.T.astype(np.float64), rows, axis=1)
    assert np.abs(scores - reference).max() <= 1e-6
    assert np.all(np.diff(reference, axis=1) <= 1e-6)


def test_the_scan_sums_its_integers_exactly():
    """Every score is the integer product of the quantised query and name, times the name's scale: x86's
    uint8 x int8 kernels add two products into an int16 that saturates, which queries up to 255 overflowed
    (2,265 of these 60,000 scores were wrong under onnxruntime 1.32 on an AVX2 CPU)."""
    from ontolink.indexes.flat_search import QUERY_STEPS

    names, queries = unit_rows(12_000, 64, 0), unit_rows(5, 64, 1)
    scan = Int8NameScan(names, threads=1)
    scales = np.maximum(names.max(axis=1), -names.min(axis=1)).astype(np.float32) / np.float32(127.0)
    name_integers = np.rint(names / scales[:, None]).astype(np.int64)
    query_scales = np.abs(queries).max(axis=1, keepdims=True) / QUERY_STEPS
    query_integers = np.rint(queries / query_scales).astype(np.int64)
    expected = (query_integers @ name_integers.T) * scales[None, :].astype(np.float64)
    assert np.abs(scan.scores(queries) - expected).max() <= 1e-4 * np.abs(expected).max()


def test_a_query_gets_the_same_result_alone_or_in_any_batch():
    names, queries = unit_rows(12_000, 64, 2), unit_rows(300, 64, 3)
    scan = Int8NameScan(names, threads=2)
    together = flat_search(names, queries, 50, scan)
    for position in (0, 137, 299):
        alone = flat_search(names, queries[position:position + 1], 50, scan)
        assert np.array_equal(alone[1][0], together[1][position])
        assert np.array_equal(alone[0][0], together[0][position])
    assert np.array_equal(flat_search(names, queries[::-1], 50, scan)[1][::-1], together[1])


def test_the_scan_model_bytes_are_a_valid_onnx_model():
    names = np.arange(-6, 6, dtype=np.int8).reshape(3, 4)
    model = onnx.load_from_string(int8_scan_model(names, np.full(4, 0.5, dtype=np.float32)))
    onnx.checker.check_model(model, full_check=True)
    initializers = {tensor.name: onnx.numpy_helper.to_array(tensor) for tensor in model.graph.initializer}
    assert np.array_equal(initializers["names"], names)
    assert [node.op_type for node in model.graph.node] == ["MatMulIntegerToFloat"]
    assert [dim.dim_param or dim.dim_value for dim in model.graph.output[0].type.tensor_type.shape.dim] == [
        "queries", 4]
