"""The JSON Lines document format: one object per line, its text in "text" (or the field named), its id from "id",
else "doc_id", else the line number; a line that is no document names FILE:LINE or is skipped."""

import json

import pytest

from conftest import parse_jsonl, run
from ontolink.core.errors import InputError
from ontolink.formats import DOCUMENT_FORMATS, Problems, document_text, read_documents


def _read(path, **options):
    return [(document.id, document_text(document)) for document in DOCUMENT_FORMATS.get("jsonl")(**options).read(
        path, Problems())]


def test_abstracts_as_jsonl_are_the_pubtator_documents(cdr, tmp_path):
    """BC5CDR's abstracts as {"id", "abstract"} records read with text_field="abstract": the PubTator reader's ids
    and texts."""
    pubtator = [(document.id, document_text(document)) for document in read_documents(cdr, "pubtator")]
    path = tmp_path / "abstracts.jsonl"
    path.write_text("".join(json.dumps({"id": doc_id, "abstract": text, "year": 2016}) + "\n"
                            for doc_id, text in pubtator), encoding="utf-8")
    assert DOCUMENT_FORMATS.guess(path) == "jsonl"
    assert _read(path, text_field="abstract") == pubtator and len(pubtator) == 6
    with pytest.raises(InputError, match=r"abstracts\.jsonl:1: no text in field 'text' \(a string\); fields: "
                                         r"abstract, id, year"):
        _read(path)


def test_the_id_comes_from_id_then_doc_id_then_the_line(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text('{"id": "PMID1", "doc_id": "x", "text": "Seizures."}\n\n{"doc_id": 7, "text": "Fever."}\n'
                    '{"id": " ", "text": "Ataxia."}\n{"id": true, "text": "Myopia."}\n', encoding="utf-8")
    assert _read(path) == [("PMID1", "Seizures."), ("7", "Fever."), ("4", "Ataxia."), ("5", "Myopia.")]


@pytest.mark.parametrize("line, words", [
    ("{broken", "not JSON"),
    ("[1, 2]", "a document must be a JSON object, got list"),
    ('{"id": "d2", "text": 3}', "no text in field 'text' (a string); fields: id, text"),
])
def test_a_line_that_is_no_document_names_file_and_line(tmp_path, line, words):
    path = tmp_path / "docs.jsonl"
    path.write_text('{"id": "d1", "text": "Seizures."}\n' + line + '\n{"id": "d3", "text": "Fever."}\n')
    with pytest.raises(InputError) as caught:
        _read(path)
    assert str(caught.value).startswith(f"{path}:2: {words}")
    problems = Problems(skip_invalid=True)
    kept = [document.id for document in DOCUMENT_FORMATS.get("jsonl")().read(path, problems)]
    assert kept == ["d1", "d3"] and problems.skipped == 1


def test_annotate_reads_jsonl_documents_through_the_cli(tmp_path):
    path = tmp_path / "docs.jsonl"
    text = "The child had generalized seizures."
    path.write_text(json.dumps({"id": "d1", "abstract": text}) + "\n")
    result = run("annotate", "--ontology", "hpo", "--roots", "HP:0000118", "-i", path, "--from", "jsonl",
                 "--text-field", "abstract")
    assert result.exit_code == 0, result.stderr
    mentions = parse_jsonl(result.stdout)
    assert ("d1", "generalized seizures") in [(m["doc_id"], m["mention"]) for m in mentions]
    assert all(m["doc_id"] == "d1" and text[m["start"]:m["end"]] == m["mention"] for m in mentions)
