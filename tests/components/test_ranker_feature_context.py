"""The context group: cosine of the mention's sentence to the matched name under the index's encoder."""

import numpy as np
import pytest

from ontolink.ranking.features import CandidateFeatures
from ontolink.ranking.groups.context import mention_sentence


def test_mention_sentence_is_the_sentence_that_holds_the_mention():
    record = {"mention": "seizures", "context_left": "We saw a boy. He had focal ",
              "context_right": " since birth. His sister did not."}
    assert mention_sentence(record) == "He had focal seizures since birth."
    assert mention_sentence({"mention": "seizures"}) is None


def test_context_is_the_sentence_cosine_to_the_matched_name(loaded_dense_index):
    loaded = loaded_dense_index
    features = CandidateFeatures(loaded, ["dense", "context"], top_k=8)
    record = {"id": "m", "mention": "fits", "context_left": "The child had ",
              "context_right": " with loss of consciousness. Treatment followed."}
    (entities, _, matrix, *_), (_, _, without, *_) = features([record, {"id": "n", "mention": "fits"}])
    sentence = loaded.name_index.encoder.encode(["The child had fits with loss of consciousness."])[0]
    _, _, name_rows = features.linker.rows([loaded.query_text(record)])[0]
    expected = loaded.name_index.vectors(name_rows[:len(entities)].astype(np.int64)) @ sentence
    np.testing.assert_allclose(matrix[:, features.columns.index("context")], expected, atol=1e-5)
    assert matrix[:, 4].max() == 0 and matrix[:, 4].min() < 0
    assert not without[:, 3:].any()  # no context, no signal


def test_context_needs_a_dense_index(tfidf_index):
    from ontolink.indexes.artifact import load_index
    from ontolink.core.errors import InputError

    with pytest.raises(InputError, match="needs a dense index"):
        CandidateFeatures(load_index(tfidf_index), ["dense", "context"])
