"""The depth group: the candidate's depth in the is_a graph, its difference to the top candidate's, leaf or not."""

import numpy as np

from ontolink.ontology import load_ontology
from ontolink.ranking.features import CandidateFeatures


def test_depth_is_the_entitys_depth_in_the_ontology(loaded_dense_index, small_ontology_path):
    loaded = loaded_dense_index
    ontology = load_ontology(small_ontology_path)
    depths = ontology.depths()
    features = CandidateFeatures(loaded, ["dense", "depth"])
    entities, _, matrix, *_ = features([{"id": "m", "mention": "generalized seizures"}])[0]
    depth = features.columns.index("depth")
    for entity, row in zip(entities.tolist(), matrix):
        assert row[depth] == min(20, depths[loaded.entity_ids[entity]])
    np.testing.assert_array_equal(matrix[:, depth + 1], matrix[:, depth] - matrix[0, depth])
    leaf = features.columns.index("leaf")
    assert [row[leaf] for row in matrix] == [float(not ontology.children[loaded.entity_ids[entity]])
                                             for entity in entities.tolist()]
