"""The scispaCy KB JSONL format (concept_id, canonical_name, aliases, types, definition per line): read as a
format of its own, indexed and linked, a field of the wrong type naming the file and line."""

import json

from conftest import parse_jsonl, run
from ontolink.ontology import load_ontology


def _lines(path, *records):
    path.write_text("".join((record if isinstance(record, str) else json.dumps(record)) + "\n" for record in records))
    return path


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
