"""The link memo is bounded in bytes, not entries: at --top-k 512 a result is 50 times the size of one at 10,
and 100,000 remembered lists reached 5 GB. Remembered or not, a mention gets the same candidates."""

import numpy as np

from ontolink.indexes.artifact import load_index
from ontolink.linking.linker import Linker, SearchMemo


def _texts(count):
    words = ["seizure", "eye", "myopia", "absence", "tonic", "clonic", "retina", "lens", "fever", "focal"]
    return [f"{words[n % 10]} {words[(n // 10) % 10]} {words[(n // 100) % 10]}" for n in range(count)]


def test_the_memo_stays_within_its_bytes_at_any_top_k(tfidf_index):
    loaded = load_index(tfidf_index)
    for top_k in (5, 50):
        linker = Linker(loaded, top_k=top_k, memo_size=40_000)
        for start in range(0, 600, 100):
            linker.candidates(_texts(600)[start:start + 100])
            assert linker.memo.bytes <= 40_000
        assert 0 < len(linker.memo) < 600
        per_entry = linker.memo.bytes / len(linker.memo)
        assert per_entry > 12 * top_k  # three arrays of top_k values, counted
    assert Linker(loaded, top_k=5).memo.max_bytes == 64 << 20


def test_remembered_and_searched_candidates_are_the_same_and_not_shared(tfidf_index):
    loaded = load_index(tfidf_index)
    texts = _texts(50)
    fresh = Linker(loaded, top_k=8, memo_size=0).candidates(texts)
    linker = Linker(loaded, top_k=8)
    first = linker.candidates(texts)
    again = linker.candidates(texts[::-1] + texts)  # every one from the memo, repeats in one batch too
    assert first == fresh and again[50:] == fresh and again[:50] == fresh[::-1]
    again[50][0]["score"] = -1.0  # a caller changing its records changes nothing remembered
    assert linker.candidates(texts[:1])[0][0]["score"] == fresh[0][0]["score"]
    assert again[0] is not again[99]


def test_the_least_recently_used_result_goes_first():
    result = (np.zeros(10, dtype=np.int64), np.zeros(10, dtype=np.float32), np.zeros(10, dtype=np.int64))
    sizing = SearchMemo(1 << 20)
    sizing.put("a", result)
    memo = SearchMemo(3 * sizing.bytes)
    for text in ("a", "b", "c"):
        memo.put(text, result)
    assert memo.get("a") is not None  # "a" used again: "b" is now the oldest
    memo.put("d", result)
    assert "b" not in memo and all(text in memo for text in "acd")


def test_mentions_encoded_ahead_link_as_mentions_encoded_in_their_search(dense_index):
    """`link` encodes a batch's new mentions on a second thread while the batch before is linked
    (``LinkBatches.prepare``); the vectors are the encoder's own, so the output is the same, ranked or not."""
    from ontolink.engines import ENGINES
    from ontolink.linking.link import BatchAhead, LinkBatches
    from ontolink.ranking.ranker import Ranker
    from ontolink.ranking.default import PACKAGED

    texts = _texts(300) + ["seizures", "myopia"]
    batches = [[{"id": str(number), "mention": text} for number, text in enumerate(texts[start:start + 64], start)]
               for start in range(0, len(texts), 64)]
    for ranker in (None, Ranker(PACKAGED)):
        loaded = load_index(dense_index)
        step = LinkBatches(loaded, top_k=5, ranker=ranker)
        prepared = step.prepare(batches[0])
        assert isinstance(prepared, BatchAhead) and prepared == batches[0] and len(prepared.vectors) == 64
        vectors = loaded.name_index.encoder.encode(list(prepared.vectors))
        assert np.array_equal(np.stack(list(prepared.vectors.values())), vectors)  # batch-invariant
        ahead = [record for _, linked in ENGINES.get("local")().map_inputs(step, ["-"], lambda path, stats: batches,
                                                                            None) for record in linked]
        loaded = load_index(dense_index)
        plain = LinkBatches(loaded, top_k=5, ranker=ranker and Ranker(PACKAGED))
        assert ahead == [record for batch in batches for record in plain(batch)]
