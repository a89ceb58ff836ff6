"""Engines' pure parts, without a cluster: the resources a Ray actor asks for, the windows of batches."""

import pickle

import pytest

from ontolink.engines.ray import actor_resources, check_actor_device, windows
from ontolink.core.errors import InputError


@pytest.mark.parametrize("device, cluster_gpus, gpus", [
    ("auto", 4, 1), ("cuda", 1, 1), ("cuda:1", 2, 1),  # CUDA allowed and there: one GPU per actor
    ("auto", 0, 0), ("cuda", 0, 0),  # none in the cluster: a CPU slot
    ("cpu", 4, 0),  # asked for the CPU
])
def test_an_actor_asks_for_one_gpu_where_the_device_allows_and_the_cluster_has_one(device, cluster_gpus, gpus):
    assert actor_resources(device, cluster_gpus) == {"num_cpus": 1, "num_gpus": gpus}


def test_a_numbered_gpu_is_refused_on_ray():
    for device in ("auto", "cuda", "cpu"):
        check_actor_device(device)
    with pytest.raises(InputError, match="each actor is given a GPU of its own"):
        check_actor_device("cuda:1")


def unpickled(found):
    return [([pickle.loads(row)[1] for row in window], error) for window, error in found]


def test_windows_cut_at_a_count_of_batches_and_keep_them_in_order():
    found = unpickled(windows(([number] for number in range(7)), max_batches=3))
    assert found == [([[0], [1], [2]], None), ([[3], [4], [5]], None), ([[6]], None)]
    assert unpickled(windows(iter([[0], [1]]), max_batches=2)) == [([[0], [1]], None)]
    assert unpickled(windows(iter([]))) == []


def test_windows_cut_at_a_size():
    row_size = len(next(windows([["x" * 100]]))[0][0])
    found = unpickled(windows((["x" * 100] for _ in range(5)), max_bytes=row_size * 2.5))
    assert [len(window) for window, _ in found] == [3, 2]  # a window ends once it reaches the size


def test_a_read_error_comes_with_the_last_window_after_the_batches_before_it():
    def batches():
        yield from ([number] for number in range(4))
        raise ValueError("bad.jsonl:9: not JSON")

    found = unpickled(windows(batches(), max_batches=3))
    assert [window for window, _ in found] == [[[0], [1], [2]], [[3]]]
    assert found[0][1] is None and str(found[1][1]) == "bad.jsonl:9: not JSON"
    found = unpickled(windows(batches(), max_batches=4))  # the error right after a full window
    assert found[0] == ([[0], [1], [2], [3]], None) and found[1][0] == [] and isinstance(found[1][1], ValueError)
