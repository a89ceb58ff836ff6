"""The lexical group: character 3-gram TF-IDF cosine to the candidate's closest name, and exact name matches."""

import numpy as np
import pytest

from ontolink.indexes.tfidf import char_trigram_vectorizer
from ontolink.ontology import normalize
from ontolink.ranking.features import CandidateFeatures


def test_lexical_is_the_best_trigram_cosine_over_the_candidates_names(loaded_dense_index):
    loaded = loaded_dense_index
    features = CandidateFeatures(loaded, ["dense", "lexical"], top_k=12)
    vectorizer = char_trigram_vectorizer()
    names = vectorizer.fit_transform(loaded.names)
    for mention in ("Seizures", "generalised seizure", "eye abnormality", "seizure"):
        entities, _, matrix, *_ = features([{"id": "m", "mention": mention}])[0]
        query = vectorizer.transform([mention])
        column = {name: matrix[:, features.columns.index(name)] for name in ("lexical", "lexical_gap", "exact")}
        for slot, entity in enumerate(entities.tolist()):
            rows = np.flatnonzero(loaded.entity_of_name == entity)
            assert column["lexical"][slot] == pytest.approx((names[rows] @ query.T).toarray().max(), abs=1e-5)
            exact = any(normalize(loaded.names[row]) == normalize(mention) for row in rows)
            assert column["exact"][slot] == float(exact)
        np.testing.assert_allclose(column["lexical_gap"], column["lexical"] - column["lexical"].max())
    entities, _, matrix, *_ = features([{"id": "m", "mention": "seizure"}])[0]
    seizure = entities.tolist().index(loaded.entity_ids.index("HP:0001250"))
    assert matrix[seizure, features.columns.index("exact")] == 1.0 and matrix[seizure, 3] == matrix[:, 3].max()
