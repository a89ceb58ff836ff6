"""The local engine: results in order, each batch read only when its turn comes; the inputs it reads, for a
function that prepares batches (`link`: it encodes the next batch while one is linked), one step ahead on a
second thread."""

import sys
import threading
import time

import pytest

from ontolink.core.errors import InputError
from ontolink.engines import ENGINES
from ontolink.engines.ahead import READY_BATCHES


def test_local_engine_keeps_order_and_streams():
    engine = ENGINES.get("local")()
    seen = []

    def batches():
        for batch in ([1, 2], [3], [4, 5]):
            seen.append(batch)
            yield batch

    results = engine.map(sum, batches())
    assert next(results) == 3 and seen == [[1, 2]]  # the first result before the next batch is read
    assert list(results) == [3, 9]


class Prepared:
    """A step function whose ``prepare`` does part of a batch's work ahead: it records the thread it ran on."""

    def __init__(self):
        self.threads = set()

    def prepare(self, batch):
        self.threads.add(threading.current_thread().name)
        return [value * 10 for value in batch]

    def __call__(self, batch):
        return sum(batch)


def read_ahead(function, *inputs):
    """``map_inputs`` of ``function`` over ``inputs`` (functions giving an input's batches), results alone."""
    results = ENGINES.get("local")().map_inputs(function, list(range(len(inputs))),
                                               lambda position, stats: inputs[position](), None)
    return (result for _, result in results)


def test_a_prepared_batch_is_prepared_and_read_on_a_second_thread_and_results_keep_their_order():
    function = Prepared()
    results = list(read_ahead(function, lambda: ([number, number] for number in range(50)), lambda: iter([[7]])))
    assert results == [20 * number for number in range(50)] + [70]
    assert function.threads == {"ontolink-ahead"}
    function = Prepared()  # batches that the engine does not read stay on the caller's thread, unprepared
    assert list(ENGINES.get("local")().map(function, iter([[1, 2]]))) == [3] and not function.threads


def test_a_read_error_comes_after_the_results_of_every_batch_before_it():
    def batches():
        yield from ([number] for number in range(3))
        raise InputError("not JSON", "bad.jsonl", 9)

    results = read_ahead(Prepared(), batches)
    assert [next(results) for _ in range(3)] == [0, 10, 20]
    with pytest.raises(InputError, match="bad.jsonl"):
        next(results)


def test_batches_already_read_are_answered_while_the_input_is_quiet():
    quiet = threading.Event()

    def batches():
        yield [1]
        quiet.wait(10)  # a pipe with nothing more yet: the reading thread waits, the first batch does not
        yield [2]

    results = read_ahead(Prepared(), batches)
    assert next(results) == 10  # answered before the second batch came
    quiet.set()
    assert list(results) == [20]


def test_stopping_early_stops_the_reading_thread():
    read = []

    def batches():
        for number in range(10_000):
            read.append(number)
            yield [number]

    results = read_ahead(Prepared(), batches)
    assert next(results) == 0
    results.close()  # `| head`: the consumer goes away
    deadline = time.monotonic() + 5
    while any(thread.name == "ontolink-ahead" for thread in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(thread.name == "ontolink-ahead" for thread in threading.enumerate())
    assert len(read) <= 1 + 2 + READY_BATCHES  # the one answered, one being handed over, the ready ones


def test_what_was_written_is_flushed_before_waiting_on_a_quiet_input(monkeypatch):
    """The reader flushes stdout before a read that waits, when it is the thread that writes; read ahead, it
    hands a batch on before its records are written, so the writing thread flushes before it waits."""
    import io
    import os
    import select

    read_end, write_end = os.pipe()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BufferedWriter(io.FileIO(write_end, "w"), 1 << 16)))
    quiet = threading.Event()

    def batches():
        yield [1]
        quiet.wait(10)  # a pipe with nothing more for now
        yield [2]

    class Printing(Prepared):
        def __call__(self, batch):
            print(sum(batch))  # buffered: 64 KiB would fill before a flush of its own
            return sum(batch)

    seen = []

    def reader_of_the_output():  # sees the first line while the input is quiet, then lets the input go on
        if select.select([read_end], [], [], 5)[0]:
            seen.append(os.read(read_end, 100))
        quiet.set()

    try:
        results = read_ahead(Printing(), batches)
        assert next(results) == 10
        watching = threading.Thread(target=reader_of_the_output)
        watching.start()
        assert next(results) == 20  # this thread waited for the second batch: it flushed first
        watching.join(10)
        assert seen == [b"10\n"]
    finally:
        quiet.set()
        sys.stdout.close()
        os.close(read_end)
