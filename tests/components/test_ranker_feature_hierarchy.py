"""The hierarchy group: the candidates' is_a relations to each other and to the top candidate."""

import numpy as np

from ontolink.ontology import load_ontology
from ontolink.ranking.features import CandidateFeatures
from ontolink.ranking.groups import FEATURE_GROUPS


def test_hierarchy_features_come_from_parent_links_in_the_index(loaded_dense_index, small_ontology_path):
    loaded = loaded_dense_index
    ontology = load_ontology(small_ontology_path)
    entity_of = {entity_id: row for row, entity_id in enumerate(loaded.entity_ids)}
    assert [sorted(parents) for parents in loaded.entity_parents] == [
        sorted(entity_of[parent] for parent in ontology.entities[entity_id].parents if parent in entity_of)
        for entity_id in loaded.entity_ids]
    features = CandidateFeatures(loaded, ["dense", "hierarchy"])
    entities, scores, matrix, *_ = features([{"id": "m", "mention": "focal motor seizures"}])[0]
    column = {name: matrix[:, features.columns.index(name)] for name in FEATURE_GROUPS.get("hierarchy").columns}
    ids = [loaded.entity_ids[entity] for entity in entities.tolist()]
    top = ontology.entities[ids[0]]
    ancestors = set()
    frontier = list(top.parents)
    while frontier:
        parent = frontier.pop()
        if parent not in ancestors:
            ancestors.add(parent)
            frontier.extend(ontology.entities[parent].parents)
    assert column["parent_of_top"].tolist() == [float(entity_id in top.parents) for entity_id in ids]
    assert column["ancestor_of_top"].tolist() == [float(entity_id in ancestors) for entity_id in ids]
    assert column["parent_of_top"].sum() >= 1  # the slice's seizure subtree: the top candidate's parent is retrieved
    assert column["child_of_top"].tolist() == [float(ids[0] in ontology.entities[entity_id].parents)
                                               for entity_id in ids]
    # Seizure, the root of the slice's subtree, has every other seizure candidate below it
    seizure = ids.index("HP:0001250")
    assert column["descendant_share"][seizure] > 0.5 and column["ancestor_share"][seizure] == 0.0
    assert np.all((column["descendant_share"] >= 0) & (column["descendant_share"] <= 1 + 1e-6))
