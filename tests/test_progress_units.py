"""Progress a person can trust: the default encoder counts an index build in tokens (names come sorted by
length, so a rate in names falls and its ETA lies), and `link` writes its first records after a small batch."""

import io

from tqdm import tqdm


def test_encoding_counts_tokens_when_the_bar_is_in_tokens():
    from ontolink.encoders import load_encoder

    encoder = load_encoder(None, device="cpu")
    names = ["Seizure", "Abnormality of the eye", "Generalized non-motor (absence) seizure", "Myopia"]
    tokens = sum(len(row) for row in encoder.tokenize(names))
    with tqdm(total=None, unit="token", file=io.StringIO()) as bar:
        encoder.encode(names, progress=bar)
        assert bar.total == tokens and bar.n == tokens and tokens > len(names)
    with tqdm(total=len(names), unit="name", file=io.StringIO()) as bar:
        encoder.encode(names, progress=bar)
        assert bar.n == len(names)


def test_first_batches_are_small_and_double():
    from ontolink.core.io import record_batches

    sizes = [len(batch) for batch in record_batches(range(5000), 4096, first_size=256)]
    assert sizes == [256, 512, 1024, 2048, 1160]
    assert [len(batch) for batch in record_batches(range(10), 4)] == [4, 4, 2]


def _pipe_records(count):
    """A pipe holding ``count`` JSONL records and kept open: (its reading end's descriptor, its writing end's).
    `link` reads it as ``/dev/fd/N``, a named pipe, as from ``-i <(annotate ...)``."""
    import json
    import os

    read_end, write_end = os.pipe()
    os.write(write_end, "".join(json.dumps({"id": f"m{n}", "mention": "seizures"}) + "\n"
                                for n in range(count)).encode())
    return read_end, write_end


def _link_batches(read_end):
    """The batches `link`'s reader makes of a pipe (at its default sizes)."""
    from ontolink.core.io import RecordBatchReader

    return RecordBatchReader(4096, first_size=256)(f"/dev/fd/{read_end}", None)


def test_a_quiet_pipe_hands_on_the_records_it_has():
    """A pipe whose writer is busy (annotate, a person typing) gives its records to a batch at once: the batch
    does not wait to fill to 256 (it would wait for ever here: the pipe stays open)."""
    import os

    read_end, writer = _pipe_records(3)
    try:
        batches = _link_batches(read_end)
        assert [record["id"] for record in next(batches)] == ["m0", "m1", "m2"]
        os.write(writer, b'{"id": "m3", "mention": "myopia"}\n')
        os.close(writer)
        writer = None
        assert [[record["id"] for record in batch] for batch in batches] == [["m3"]]
    finally:
        if writer is not None:
            os.close(writer)
        os.close(read_end)


def test_a_trickle_of_records_is_answered_as_it_comes():
    """A writer that sends a record every 0.1 s: a batch is handed on a quarter of a second after its first
    record (at a pause), not when 256 have come, nor one record at a time."""
    import os
    import threading
    import time

    read_end, writer = _pipe_records(1)

    def trickle():
        for number in range(1, 20):
            time.sleep(0.1)
            os.write(writer, f'{{"id": "m{number}", "mention": "myopia"}}\n'.encode())
        os.close(writer)

    thread = threading.Thread(target=trickle)
    thread.start()
    try:
        batches = list(_link_batches(read_end))
    finally:
        thread.join()
        os.close(read_end)
    assert sum(len(batch) for batch in batches) == 20
    assert 2 <= len(batches) < 20 and max(len(batch) for batch in batches) < 20


def test_a_file_is_never_cut_by_waiting(tmp_path):
    from ontolink.core.io import RecordBatchReader, WaitingInput

    path = tmp_path / "m.jsonl"
    path.write_text("".join(f'{{"id": "m{n}", "mention": "seizures"}}\n' for n in range(1000)))
    assert [len(batch) for batch in RecordBatchReader(4096, first_size=256)(str(path), None)] == [256, 512, 232]
    with open(path, "rb") as handle:
        waiting = WaitingInput()
        waiting.watch(handle)
        assert waiting.descriptor is None and not waiting.stalled(0)


def test_link_answers_a_line_while_its_input_stays_open(tfidf_index):
    """`link` fed line by line (a person, a slow program) writes each answer before the next line comes, at its
    default batch size."""
    import json
    import select
    import subprocess
    import sys

    link = subprocess.Popen([sys.executable, "-m", "ontolink", "link", "--index", str(tfidf_index)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        link.stdin.write(b'{"id": "m1", "mention": "myopia"}\n')
        link.stdin.flush()
        ready, _, _ = select.select([link.stdout], [], [], 120)
        assert ready, "no answer while the input stayed open"
        assert json.loads(link.stdout.readline())["id"] == "m1"
        link.stdin.write(b'{"id": "m2", "mention": "seizures"}\n')
        link.stdin.close()
        assert json.loads(link.stdout.readline())["id"] == "m2"
        assert link.wait(60) == 0
    finally:
        link.kill()
        link.stdout.close()
        link.stderr.close()
