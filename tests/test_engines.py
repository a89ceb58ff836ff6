"""Engines' pure parts, without a cluster: the resources a Ray actor asks for, the windows of batches; the
in-process engine's pipeline."""

import json
import pickle
import threading
import time

import pytest

from conftest import shared_path
from ontolink.engines.local import pipelined
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


def test_the_local_engine_runs_the_next_batchs_first_stage_beside_this_ones_second():
    """`link` in this process: the next batch's search (encoding, the scan) runs on a second thread while this
    batch's records are made; results in order, the same as one after another."""
    next_searched = threading.Event()

    def first(batch):
        if batch == [1]:
            next_searched.set()
        return [value * 10 for value in batch]

    def then(batch, found):
        if batch == [0]:
            assert next_searched.wait(10), "batch 1 was searched only after batch 0 was finished"
        return list(zip(batch, found))

    assert list(pipelined(first, then, ([number] for number in range(5)))) == [
        [(number, number * 10)] for number in range(5)]
    assert list(pipelined(first, then, iter([]))) == []


def test_a_batch_that_cannot_be_read_fails_after_the_results_of_those_before_it():
    def batches():
        yield from ([number] for number in range(3))
        raise ValueError("bad.jsonl:9: not JSON")

    results = pipelined(lambda batch: batch, lambda batch, found: found, batches())
    assert [next(results) for _ in range(3)] == [[0], [1], [2]]
    with pytest.raises(ValueError, match="bad.jsonl:9"):
        next(results)


def test_a_reader_that_stops_early_closes_the_pipeline():
    """`link | head`: the generator is closed at a yield; at most the batch after is read, and nothing waits."""
    read = []

    def batches():
        for number in range(100):
            read.append(number)
            yield [number]

    results = pipelined(lambda batch: batch, lambda batch, found: found, batches())
    assert next(results) == [0]
    results.close()
    time.sleep(0.5)
    assert read in ([0], [0, 1])  # one batch read ahead, no more


def test_a_result_is_yielded_before_the_next_input_comes():
    """A pipe fed a line at a time: the first batch's result comes out while the next batch is still awaited."""
    arrived = threading.Event()

    def batches():
        yield [1]
        assert arrived.wait(10)
        yield [2]

    results = pipelined(lambda batch: batch, lambda batch, found: found, batches())
    assert next(results) == [1]  # the reader is blocked on batch 2 meanwhile
    arrived.set()
    assert list(results) == [[2]]


@pytest.mark.parametrize("ranked", [False, True])
def test_link_through_the_local_engine_is_link_batch_by_batch(loaded_dense_index, ranked):
    """The pipelined engine changes when work is done, not what is written: the same records, with the default
    ranker (which searches through its own memo) and without, as linking each batch alone in order."""
    from ontolink.engines.local import LocalEngine
    from ontolink.linking.link import LinkBatches, link_mentions
    from ontolink.ranking.default import packaged_ranker

    with open(shared_path("gscplus", "mentions.jsonl"), encoding="utf-8") as lines:
        gsc = [json.loads(line) for line, _ in zip(lines, range(300))]  # abstracts: repeats, short forms
    ranker = packaged_ranker() if ranked else None
    piped = list(link_mentions(gsc, loaded_dense_index, top_k=10, batch_size=64, ranker=ranker,
                               engine=LocalEngine()))
    one_by_one = LinkBatches(loaded_dense_index, top_k=10, ranker=packaged_ranker() if ranked else None)
    alone = [record for start in range(0, len(gsc), 64) for record in one_by_one(gsc[start:start + 64])]
    assert piped == alone


def test_a_link_function_with_a_call_of_its_own_is_called_not_staged(loaded_dense_index):
    """A subclass of LinkBatches that changes __call__ (and not stages) is run by its __call__ in this process."""
    from ontolink.engines.local import LocalEngine
    from ontolink.linking.link import LinkBatches

    class Counted(LinkBatches):
        def __call__(self, batch):
            return [len(batch)]

    assert Counted(loaded_dense_index, top_k=3).stages() is None
    batches = [[{"id": "a", "mention": "seizures"}], [{"id": "b", "mention": "ptosis"}, {"id": "c", "mention": "x"}]]
    assert list(LocalEngine().map(Counted(loaded_dense_index, top_k=3), iter(batches))) == [[1], [2]]
