"""The local engine: results in order, each batch read only when its turn comes."""

from ontolink.engines import ENGINES


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
