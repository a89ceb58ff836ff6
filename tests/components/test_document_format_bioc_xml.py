"""BioC input that is valid but unusual (internal entities), or lies (an offset of 500,000,000 in a 421-byte
file), or is one line of XML past the line limit."""

from pathlib import Path

import pytest

from conftest import parse_jsonl, run

DATA = Path(__file__).parent / "data" / "hostile"


def test_an_internal_entity_keeps_the_passage_text_through_a_round_trip(tfidf_index, tmp_path):
    documents = DATA / "bioc_internal_entity.xml"
    mentions = run("convert", "-i", documents, "--from", "bioc-xml")
    assert mentions.exit_code == 0, mentions.stderr
    [mention] = parse_jsonl(mentions.stdout)
    assert mention["context_left"] == "Fever of 39\u00b0C with " and mention["context_right"] == " and myopia."
    linked = tmp_path / "linked.jsonl"
    assert run("link", "--index", tfidf_index, "--top-k", 1, "-o", linked, input=mentions.stdout).exit_code == 0
    back = run("convert", "-i", linked, "--to", "bioc-xml", "--documents", documents)
    assert back.exit_code == 0, back.stderr
    assert "Fever of 39\u00b0C with seizures and myopia." in back.stdout  # the whole text, entity included


@pytest.mark.parametrize("name, source_format, words", [
    ("bioc_offset_5e8.xml", "bioc-xml", "bioc_offset_5e8.xml:7: <passage> <offset> 500,000,000 is outside 0 to"),
    ("bioc_offset_5e8.json", "bioc-json", "bioc_offset_5e8.json:1: document d1: passage offset 500000000 is outside"),
])
def test_an_offset_past_the_limit_is_bad_data_not_a_500_mb_line(name, source_format, words):
    result = run("convert", "-i", DATA / name, "--from", source_format)
    assert result.exit_code == 2 and words in result.stderr and "ONTOLINK_MAX_LINE_BYTES" in result.stderr
    assert result.stdout == ""


def test_bioc_xml_on_one_line_past_the_limit_names_the_line(tmp_path, monkeypatch):
    monkeypatch.setenv("ONTOLINK_MAX_LINE_BYTES", "4K")
    one_line = (DATA / "bioc_internal_entity.xml").read_text().split("\n", 4)
    path = tmp_path / "one_line.xml"
    path.write_text("\n".join(one_line[:4]) + "\n" + one_line[4].replace("\n", " ").replace(
        "</collection>", "<document><id>d2</id><passage><offset>0</offset><text>" + "x" * 5000
        + "</text></passage></document></collection>"))
    result = run("convert", "-i", path, "--from", "bioc-xml")
    assert result.exit_code == 2 and "one_line.xml:5: line of " in result.stderr
