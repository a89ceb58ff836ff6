"""BioC JSON whose passages or annotations are not objects is bad data naming the file and line (exit 2),
not an AttributeError."""

import json

import pytest
from conftest import run

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
