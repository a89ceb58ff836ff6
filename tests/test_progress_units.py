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
