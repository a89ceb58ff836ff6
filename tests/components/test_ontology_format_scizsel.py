"""The Sci-ZSEL KB JSON format (one object of entities by id): the real LPT knowledge base loads whole, the shapes
Sci-ZSEL writes are read, types are checked, bad JSON names the file and line."""

import json

import pytest

from conftest import shared_path
from ontolink.core.errors import InputError
from ontolink.ontology import load_ontology
from ontolink.ontology.loaders import detect_format


def test_scizsel_kb_loads():
    path = shared_path("sci-zsel", "lpt_kb.json")
    assert detect_format(path) == "scizsel"
    ontology = load_ontology(path, use_cache=False)
    assert len(ontology) == 520
    for entity in ontology:
        assert entity.id and entity.name
        assert all(parent in ontology for parent in entity.parents)


def test_scizsel_shape(tmp_path):
    path = tmp_path / "kb.json"
    path.write_text(json.dumps({
        "K:1": {"id": "K:1", "name": "root", "def": "The root.", "synonyms": ["base", ""]},
        "K:2": {"name": "leaf", "ParentIDs": ["K:1"], "altdiseaseid": ["K:9"]},
    }))
    ontology = load_ontology(path, use_cache=False)
    assert ontology["K:1"].to_record() == {"id": "K:1", "name": "root", "definition": "The root.",
                                            "synonyms": ["base"], "parents": [], "alt_ids": []}
    assert ontology["K:2"].parents == ["K:1"]
    assert ontology.resolve("K:9") == ["K:2"]


def test_scizsel_entity_without_name(tmp_path):
    path = tmp_path / "kb.json"
    path.write_text(json.dumps({"K:1": {"id": "K:1"}}))
    with pytest.raises(InputError, match="'K:1' has no 'name'") as caught:
        load_ontology(path, use_cache=False)
    assert caught.value.exit_code == 2


def test_invalid_json_names_file_and_line(tmp_path):
    path = tmp_path / "kb.json"
    path.write_text('{\n  "K:1": {"name": "x"},\n  oops\n}\n')
    with pytest.raises(InputError) as caught:
        load_ontology(path, use_cache=False)
    assert f"{path}:3:" in str(caught.value)
    assert caught.value.exit_code == 2


def test_scizsel_kb_types_are_checked(tmp_path):
    path = tmp_path / "kb.json"
    path.write_text(json.dumps({"A:1": {"name": "alpha", "ParentIDs": "A:0"}, "A:0": {"name": "root"}}))
    with pytest.raises(InputError, match="entity 'A:1': field 'ParentIDs' must be a list of strings, not a string"):
        load_ontology(path, use_cache=False)
    path.write_text(json.dumps({"A:1": {"id": 1, "name": "alpha"}}))
    with pytest.raises(InputError, match="field 'id' must be a non-empty string, not a number"):
        load_ontology(path, use_cache=False)
    path.write_text(json.dumps({"A:1": {"name": "alpha", "synonyms": "abc"}}))
    with pytest.raises(InputError, match="field 'synonyms' must be a list of strings"):
        load_ontology(path, use_cache=False)
