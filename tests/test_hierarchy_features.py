"""The ranker's hierarchy feature group, checked value by value against the is_a graph of a small hand-made
ontology (a character 3-gram TF-IDF index over it builds in well under a second: no model is loaded).

Expected values are computed here from the ontology records alone (parents by id, ancestors by a walk up the
graph), never from the index's own parent rows, so a wrong edge direction, a closure that stops at the parents or
a column in the wrong place fails. The tests go through ``CandidateFeatures`` only, the ranker's public way of
computing features."""

import numpy as np
import pytest

from conftest import jsonl
from ontolink.indexes.artifact import load_index
from ontolink.ontology import load_ontology
from ontolink.ranking.features import CandidateFeatures
from ontolink.ranking.groups import FEATURE_GROUPS
from ontolink.indexes.build import build_index

SHARED = "renal lesion"  # a synonym of five entities in a chain and a fork: they tie for first place
# id, name, parents, synonyms. X:4 has two parents (a DAG); X:3 -> X:8 -> X:9 is a chain below X:3.
ENTITIES = [
    ("X:0", "disorder", [], []),
    ("X:1", "kidney disorder", ["X:0"], [SHARED]),
    ("X:2", "kidney cyst", ["X:1"], [SHARED]),
    ("X:3", "multiple kidney cysts", ["X:2"], [SHARED]),
    ("X:4", "polycystic kidney", ["X:2", "X:7"], [SHARED]),
    ("X:5", "liver disorder", ["X:0"], ["hepatic lesion"]),
    ("X:6", "liver cyst", ["X:5"], []),
    ("X:7", "kidney stone", ["X:1"], [SHARED]),
    ("X:8", "multiple kidney cysts of both kidneys", ["X:3"], []),
    ("X:9", "multiple large kidney cysts of both kidneys", ["X:8"], []),
    ("X:10", "heart murmur", ["X:0"], []),
]
PARENTS = {entity_id: set(parents) for entity_id, _, parents, _ in ENTITIES}


def ancestors(entity_id):
    found, frontier = set(), list(PARENTS[entity_id])
    while frontier:
        parent = frontier.pop()
        if parent not in found:
            found.add(parent)
            frontier.extend(PARENTS[parent])
    return found


@pytest.fixture(scope="module")
def features(tmp_path_factory):
    directory = tmp_path_factory.mktemp("hierarchy")
    path = directory / "kidney.jsonl"
    path.write_text(jsonl([{"id": entity_id, "name": name, "parents": parents, "synonyms": synonyms}
                           for entity_id, name, parents, synonyms in ENTITIES]))
    build_index(load_ontology(path), directory / "index", method="tfidf")
    loaded = load_index(directory / "index")
    return CandidateFeatures(loaded, ["dense", "hierarchy"], top_k=len(ENTITIES))


def hierarchy_of(features, mention):
    entities, scores, matrix, *_ = features([{"id": "m", "mention": mention}])[0]
    ids = [features.index.entity_ids[entity] for entity in entities.tolist()]
    hierarchy = FEATURE_GROUPS.get("hierarchy").columns
    columns = {name: matrix[:, features.columns.index(name)] for name in hierarchy}
    return ids, scores, columns


@pytest.mark.parametrize("mention", [SHARED, "multiple kidney cysts", "kidney cyst", "liver cyst"])
def test_relations_to_the_top_candidate_follow_the_is_a_graph(features, mention):
    ids, _, column = hierarchy_of(features, mention)
    top = ids[0]
    assert len(ids) >= 6  # enough candidates around the top one to tell the relations apart
    assert column["parent_of_top"].tolist() == [float(entity_id in PARENTS[top]) for entity_id in ids]
    assert column["child_of_top"].tolist() == [float(top in PARENTS[entity_id]) for entity_id in ids]
    assert column["ancestor_of_top"].tolist() == [float(entity_id in ancestors(top)) for entity_id in ids]
    assert column["descendant_of_top"].tolist() == [float(top in ancestors(entity_id)) for entity_id in ids]


def test_the_top_candidates_relatives_reach_beyond_its_parents_and_children(features):
    """The exact name of X:3 is its top candidate: a grandparent is an ancestor, not a parent; a grandchild a
    descendant, not a child; a sibling none of them."""
    ids, _, column = hierarchy_of(features, "multiple kidney cysts")
    assert ids[0] == "X:3"
    at = {entity_id: slot for slot, entity_id in enumerate(ids)}
    for relative in ("X:1", "X:8", "X:9", "X:4", "X:2"):
        assert relative in at, ids
    assert (column["parent_of_top"][at["X:2"]], column["ancestor_of_top"][at["X:2"]]) == (1.0, 1.0)
    assert (column["parent_of_top"][at["X:1"]], column["ancestor_of_top"][at["X:1"]]) == (0.0, 1.0)
    assert (column["child_of_top"][at["X:8"]], column["descendant_of_top"][at["X:8"]]) == (1.0, 1.0)
    assert (column["child_of_top"][at["X:9"]], column["descendant_of_top"][at["X:9"]]) == (0.0, 1.0)
    sibling = at["X:4"]
    assert [column[name][sibling] for name in FEATURE_GROUPS.get("hierarchy").columns[2:]] == [0.0, 0.0, 0.0, 0.0]
    assert column["parent_of_top"][0] == column["child_of_top"][0] == 0.0  # nothing is its own relative


def test_consensus_shares_count_the_tied_candidates_above_and_below(features):
    """Five entities share the mention's text (equal scores, equal weight); every other candidate scores far
    below and weighs next to nothing. A candidate's descendant share is then the part of the other four tied
    entities below it, its ancestor share the part above it (through any number of is_a steps)."""
    ids, scores, column = hierarchy_of(features, SHARED)
    tied = {"X:1", "X:2", "X:3", "X:4", "X:7"}
    assert set(ids[:5]) == tied and np.all(scores[:5] == scores[0])
    assert scores[5:].max() < scores[0] - 0.3  # the rest weigh e^-6 or less at any temperature up to 0.05
    for slot, entity_id in enumerate(ids):
        below = sum(entity_id in ancestors(other) for other in tied - {entity_id})
        above = sum(other in ancestors(entity_id) for other in tied - {entity_id})
        if entity_id in tied:
            expected_below, expected_above = below / 4, above / 4
        else:  # the five weigh all the rest's weight: the share is the part of the five related to it
            expected_below, expected_above = below / 5, above / 5
        assert column["descendant_share"][slot] == pytest.approx(expected_below, abs=0.01), entity_id
        assert column["ancestor_share"][slot] == pytest.approx(expected_above, abs=0.01), entity_id
    at = {entity_id: slot for slot, entity_id in enumerate(ids)}
    # spelled out: X:1 is above the other four; X:3 and X:4 have X:2 and X:1 above them (X:4 through both parents)
    assert column["descendant_share"][at["X:1"]] == pytest.approx(1.0, abs=0.01)
    assert column["descendant_share"][at["X:2"]] == pytest.approx(0.5, abs=0.01)
    assert column["ancestor_share"][at["X:3"]] == pytest.approx(0.5, abs=0.01)
    assert column["ancestor_share"][at["X:4"]] == pytest.approx(0.75, abs=0.01)  # X:1, X:2 and X:7
    assert column["ancestor_share"][at["X:1"]] == pytest.approx(0.0, abs=0.01)  # only the root, far below


def test_a_lone_best_candidate_outweighs_the_rest(features):
    """With one clear best candidate, the other candidates' shares are about whether that one is below or above
    them: the consensus weighs candidates by their score, not by their count."""
    ids, scores, column = hierarchy_of(features, "multiple kidney cysts")
    assert scores[0] - scores[1] > 0.2
    for slot, entity_id in enumerate(ids[1:], start=1):
        assert column["descendant_share"][slot] == pytest.approx(float(entity_id in ancestors("X:3")), abs=0.01)
        assert column["ancestor_share"][slot] == pytest.approx(float("X:3" in ancestors(entity_id)), abs=0.01)
