"""The OBO Graphs JSON format (through pronto): a slice of the real HPO written as an OBO Graphs document by the test
loads to the same entities, synonyms with their scopes, parents, alternative ids and obsolete terms' replacements."""

import json

from ontolink.ontology import ALL_SYNONYM_SCOPES, load_ontology
from ontolink.ontology.loaders import detect_format

OBO = "http://purl.obolibrary.org/obo/"
PREDICATES = {"EXACT": "hasExactSynonym", "RELATED": "hasRelatedSynonym", "NARROW": "hasNarrowSynonym",
              "BROAD": "hasBroadSynonym"}


def _iri(entity_id):
    return OBO + entity_id.replace(":", "_")


def _node(entity):
    meta = {"synonyms": [{"pred": PREDICATES[scope], "val": text} for text, scope in entity.synonyms],
            "basicPropertyValues": [{"pred": "http://www.geneontology.org/formats/oboInOwl#hasAlternativeId",
                                     "val": alt_id} for alt_id in entity.alt_ids]}
    if entity.definition:
        meta["definition"] = {"val": entity.definition}
    return {"id": _iri(entity.id), "lbl": entity.name, "type": "CLASS", "meta": meta}


def test_a_slice_of_hpo_as_obo_graphs_loads_the_same_entities(tmp_path):
    hpo = load_ontology("hpo", synonym_scopes=ALL_SYNONYM_SCOPES)
    ids = ["HP:0001250"] + sorted(hpo.children["HP:0001250"])[:20]
    nodes = [_node(hpo[entity_id]) for entity_id in ids]
    edges = [{"sub": _iri(entity_id), "pred": "is_a", "obj": _iri(parent)}
             for entity_id in ids for parent in hpo[entity_id].parents if parent in ids]
    # an obsolete term replaced by the first child: excluded, but its id still resolves
    nodes.append({"id": _iri("HP:9999999"), "lbl": "obsolete seizure kind", "type": "CLASS",
                  "meta": {"deprecated": True, "basicPropertyValues": [
                      {"pred": OBO + "IAO_0100001", "val": _iri(ids[1])}]}})
    path = tmp_path / "seizures.json"
    path.write_text(json.dumps({"graphs": [{"id": OBO + "hp.owl", "nodes": nodes, "edges": edges}]}))
    assert detect_format(path) == "obographs"

    loaded = load_ontology(path, synonym_scopes=ALL_SYNONYM_SCOPES, use_cache=False)
    assert sorted(entity.id for entity in loaded) == sorted(ids)
    assert sum(len(hpo[entity_id].synonyms) for entity_id in ids) > 20  # the slice has synonyms to compare
    for entity_id in ids:
        mine, theirs = loaded[entity_id], hpo[entity_id]
        assert (mine.name, mine.definition) == (theirs.name, theirs.definition)
        assert sorted(mine.synonyms) == sorted(theirs.synonyms)
        assert sorted(mine.alt_ids) == sorted(theirs.alt_ids)
        for alt_id in theirs.alt_ids:
            assert loaded.resolve(alt_id) == [entity_id]
    assert all(loaded[child].parents == ["HP:0001250"] for child in ids[1:])
    assert "HP:9999999" not in loaded and loaded.resolve("HP:9999999") == [ids[1]]
