"""The dense group: the retriever's own scores and order."""

import numpy as np

from ontolink.linking.linker import Linker
from ontolink.ranking.features import CandidateFeatures


def test_dense_columns_are_the_retrievers_scores_gaps_and_ranks(loaded_dense_index):
    loaded = loaded_dense_index
    features = CandidateFeatures(loaded, ["dense"], top_k=16)
    records = [{"id": "m", "mention": "absence seizures"}, {"id": "n", "mention": "eye abnormality"}]
    searched = Linker(loaded, top_k=16).search_rows([loaded.query_text(record) for record in records])
    for (entities, scores, matrix, *_), (expected_entities, expected_scores, _) in zip(features(records), searched):
        np.testing.assert_array_equal(entities, expected_entities[:16])
        np.testing.assert_array_equal(scores, expected_scores[:16].astype(np.float32))
        assert features.columns == ["dense", "dense_gap", "rank"]
        np.testing.assert_array_equal(matrix[:, 0], scores)
        np.testing.assert_allclose(matrix[:, 1], scores - scores[0])
        np.testing.assert_allclose(matrix[:, 2], np.log1p(np.arange(len(entities))))
        assert matrix[0, 1] == 0 and (matrix[1:, 1] <= 0).all()
