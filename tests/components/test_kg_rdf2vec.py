"""RDF2Vec (`embed-kg --method rdf2vec`): walks follow the edges both ways; a seeded run is complete and
reproducible."""

import json

import numpy as np

from ontolink.kg.embed import embed_kg
from ontolink.formats.triples import TripleSet, read_triples


def test_random_walks_follow_edges_both_ways(kg_slice):
    from ontolink.kg.embedders.rdf2vec import random_walks

    triple_set = TripleSet.from_triples(list(read_triples(kg_slice)))
    n_entities, n_relations = len(triple_set.entity_ids), len(triple_set.relation_ids)
    walks = random_walks(triple_set, depth=3, walks_per_entity=5, reverse=True, seed=0)
    edges = {tuple(row) for row in triple_set.mapped.tolist()}
    assert set(walks[:, 0].tolist()) == set(range(n_entities))  # every entity starts walks (tails too)
    assert len({tuple(row) for row in walks.tolist()}) == len(walks)  # deduplicated
    for walk in walks[:500]:
        for hop in range(3):
            head, token, tail = walk[2 * hop], walk[2 * hop + 1], walk[2 * hop + 2]
            if token < 0:
                break
            relation = token - n_entities
            if relation < n_relations:
                assert (head, relation, tail) in edges
            else:
                assert (tail, relation - n_relations, head) in edges
    forward_only = random_walks(triple_set, depth=3, walks_per_entity=5, reverse=False, seed=0)
    assert forward_only[:, 1].max() < n_entities + n_relations


def test_rdf2vec_directory_is_complete_and_reproducible(kg_slice, tmp_path):
    from ontolink.kg.embeddings import load_kg_embeddings

    triples = list(read_triples(kg_slice))
    outputs = []
    for name in ("one", "two"):
        manifest = embed_kg(triples, tmp_path / name, method="rdf2vec", dim=8, walks=5, epochs=2, seed=3)
        outputs.append(load_kg_embeddings(tmp_path / name))
    loaded = outputs[0]
    assert sorted(p.name for p in (tmp_path / "one").iterdir()) == [
        "embeddings.safetensors", "ids.json", "manifest.json", "training_curve.jsonl"]
    assert loaded.entity.shape == (manifest["entities"], 8) and loaded.relation.shape == (manifest["relations"], 8)
    assert manifest["artifact"] == "kg-embeddings" and manifest["embedding"]["options"]["depth"] == 4
    assert "relation_inverse" in loaded.extra
    assert np.array_equal(loaded.entity, outputs[1].entity)  # same seed, same vectors
    curve = [json.loads(line) for line in (tmp_path / "one" / "training_curve.jsonl").read_text().splitlines()]
    assert [entry["epoch"] for entry in curve] == [1, 2] and all(entry["loss"] > 0 for entry in curve)
    assert loaded.missing("MESH:NOPE", triples[0].relation, triples[0].tail) == (
        f"subject entity 'MESH:NOPE' has no embedding in {tmp_path / 'one'} (not in its KG)")
    assert "relation 'NoSuchRelation' is not in the KG" in loaded.missing(triples[0].head, "NoSuchRelation",
                                                                           triples[0].tail)
