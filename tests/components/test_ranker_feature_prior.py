"""The prior group: log(1 + count) of an entity prior and its gap to the most common candidate."""

import numpy as np

from ontolink.ranking.features import CandidateFeatures


def test_prior_columns_are_log_counts_and_their_gap(loaded_dense_index):
    loaded = loaded_dense_index
    counts = {"HP:0001250": 400, "HP:0002121": 30}  # Seizure, Absence seizure
    features = CandidateFeatures(loaded, ["dense", "prior"], prior=counts, top_k=10)
    entities, _, matrix, *_ = features([{"id": "m", "mention": "absence seizures"}])[0]
    expected = np.log1p([counts.get(loaded.entity_ids[entity], 0) for entity in entities.tolist()])
    np.testing.assert_allclose(matrix[:, features.columns.index("prior")], expected, rtol=1e-6)
    np.testing.assert_allclose(matrix[:, features.columns.index("prior_gap")], expected - expected.max(), rtol=1e-6)
    assert expected.max() > 0
    # no prior: a constant column
    entities, _, matrix, *_ = CandidateFeatures(loaded, ["dense", "prior"], top_k=10)([{"mention": "absence seizures"}])[0]
    assert not matrix[:, 3:].any()
