"""Ids written into SSSOM and PubTator are checked: a line break in an entity id cannot open an uncommented
line in SSSOM's metadata block, an id with a space is no CURIE, and a mention id with a space is kept
(percent-encoded) rather than dropped; SSSOM rows say what the ranking knows."""

import pytest
from conftest import jsonl, run, sssom_validate


def _linked(mention_id, entity_id, score=0.9, matched_by="dense"):
    return {"id": mention_id, "mention": "delirium", "candidates": [
        {"id": entity_id, "name": "Delirium", "score": score, "matched_by": matched_by},
        {"id": "MESH:D000001", "name": "Calcimycin", "score": 0.4, "matched_by": "dense"}]}


@pytest.mark.parametrize("entity_id", ["MESH:D003\n#x: 1", "MESH:D003 693", "ME\nSH:D003693", "MESH:D003\t693", "ME SH:1"])
def test_sssom_refuses_an_entity_id_that_is_no_curie(entity_id, tmp_path):
    out = tmp_path / "t.sssom.tsv"
    result = run("convert", "--to", "sssom", "-o", out, input=jsonl([_linked("m1", entity_id)]))
    assert result.exit_code == 2, result.output
    assert "is not a valid CURIE" in result.stderr and "Traceback" not in result.output


def test_a_mention_id_with_a_space_is_one_valid_row(tmp_path):
    out = tmp_path / "t.sssom.tsv"
    records = [_linked("m 2", "MESH:D003693", matched_by="exact"), _linked("m3", "MESH:D003693")]
    result = run("convert", "--to", "sssom", "--top-n", 2, "-o", out, input=jsonl(records))
    assert result.exit_code == 0, result.stderr
    frame = sssom_validate(out).df
    rows = sorted(zip(frame["subject_id"], frame["object_id"], frame["predicate_id"], frame["mapping_justification"],
                      [float(value) for value in frame["confidence"]]))
    assert rows == [
        ("mention:m%202", "MESH:D000001", "skos:closeMatch", "semapv:SemanticSimilarityThresholdMatching", 0.4),
        ("mention:m%202", "MESH:D003693", "skos:exactMatch", "semapv:LexicalMatching", 0.9),
        ("mention:m3", "MESH:D000001", "skos:closeMatch", "semapv:SemanticSimilarityThresholdMatching", 0.4),
        ("mention:m3", "MESH:D003693", "skos:exactMatch", "semapv:SemanticSimilarityThresholdMatching", 0.9)]
    forced = run("convert", "--to", "sssom", "--top-n", 2, "--predicate", "skos:relatedMatch", "--justification",
                 "semapv:ManualMappingCuration", "-o", out, input=jsonl(records))
    assert forced.exit_code == 0
    frame = sssom_validate(out).df
    assert set(frame["predicate_id"]) == {"skos:relatedMatch"}
    assert set(frame["mapping_justification"]) == {"semapv:ManualMappingCuration"}


def test_pubtator_refuses_an_id_that_would_break_its_line(tmp_path):
    documents = tmp_path / "docs.pubtator"
    documents.write_text("1|t|Delirium in a child.\n1|a|The child had delirium.\n\n")
    record = {"id": "1:0-8", "doc_id": "1", "start": 0, "end": 8, "mention": "Delirium", "type": "Disease",
              "candidates": [{"id": "MESH:D003\n693", "name": "Delirium", "score": 0.9}]}
    result = run("convert", "--to", "pubtator", "--documents", documents, input=jsonl([record]))
    assert result.exit_code == 2 and "tab or line break" in result.stderr, result.output
    record["candidates"][0]["id"] = "MESH:D003693"
    result = run("convert", "--to", "pubtator", "--documents", documents, input=jsonl([record]))
    assert result.exit_code == 0, result.stderr
    assert "1\t0\t8\tDelirium\tDisease\tMESH:D003693" in result.stdout
