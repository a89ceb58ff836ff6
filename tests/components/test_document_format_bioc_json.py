"""The BioC JSON document format: one document per line; a line that is not JSON, passages or annotations that
are not objects, an offset past the line limit are bad data naming the file and line (exit 2), not an
AttributeError. Its round trip with PubTator is in test_document_format_pubtator.py."""

import json

import pytest
from conftest import DATA, parse_jsonl, run

DOCUMENT = {"id": "1", "infons": {}, "relations": [],
            "passages": [{"offset": 0, "text": "Seizures.", "infons": {}, "annotations": [], "relations": []}]}


@pytest.mark.parametrize("damage, words", [
    (lambda document: document.update(passages=["oops"]), "document 1 'passages' must be a list of objects"),
    (lambda document: document.update(passages={"offset": 0}), "document 1 'passages' must be a list of objects"),
    (lambda document: document["passages"][0].update(annotations=["x"]),
     "document 1: a passage's 'annotations' must be a list of objects"),
    (lambda document: document.update(annotations=[3]), "document 1 'annotations' must be a list of objects"),
])
def test_non_object_parts_are_file_line_errors(tmp_path, damage, words):
    good, bad = json.loads(json.dumps(DOCUMENT)), json.loads(json.dumps(DOCUMENT))
    damage(bad)
    path = tmp_path / "docs.json"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    result = run("convert", "-i", path, "--from", "bioc-json")
    assert result.exit_code == 2, result.output
    assert f"{path}:2: {words}" in result.stderr and "Traceback" not in result.output


def test_an_offset_past_the_limit_is_bad_data_not_a_500_mb_line():
    result = run("convert", "-i", DATA / "hostile" / "bioc_offset_5e8.json", "--from", "bioc-json")
    words = "bioc_offset_5e8.json:1: document d1: passage offset 500000000 is outside"
    assert result.exit_code == 2 and words in result.stderr and "ONTOLINK_MAX_LINE_BYTES" in result.stderr
    assert result.stdout == ""


def test_bioc_json_that_is_not_json(tmp_path):
    lines = tmp_path / "docs.json"
    document = {"id": "d1", "passages": [{"offset": 0, "text": "Fever.", "annotations": [
        {"id": "1", "infons": {"type": "Disease"}, "text": "Fever", "locations": [{"offset": 0, "length": 5}]}]}]}
    lines.write_text(json.dumps(document) + "\n{broken\n")
    result = run("convert", "-i", lines)
    assert result.exit_code == 2 and f"{lines}:2: not valid JSON" in result.stderr
    assert parse_jsonl(result.stdout)[0]["mention"] == "Fever"
