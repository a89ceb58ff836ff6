"""The BioC XML document format: annotations at sentence and document level, input that is valid but unusual
(internal entities), or lies (an offset of 500,000,000 in a 421-byte file), or is one line of XML past the line
limit, or is not XML at all. Its round trip with PubTator is in test_document_format_pubtator.py."""

from pathlib import Path

from conftest import parse_jsonl, run

DATA = Path(__file__).resolve().parents[1] / "data" / "hostile"


def test_bioc_xml_reads_sentence_level_and_document_annotations(tmp_path):
    xml = tmp_path / "doc.xml"
    xml.write_text("""<?xml version="1.0" encoding="UTF-8"?>
<collection><source>test</source><date/><key/>
<document><id>d1</id>
<passage><offset>0</offset>
  <sentence><offset>0</offset><text>Short stature.</text>
    <annotation id="a"><infon key="type">Phenotype</infon><infon key="identifier">HP:0004322</infon>
      <location offset="0" length="13"/><text>Short stature</text></annotation></sentence>
  <sentence><offset>15</offset><text>No seizures.</text></sentence>
</passage>
<annotation id="b"><infon key="type">Phenotype</infon><location offset="18" length="8"/><text>seizures</text>
</annotation>
</document></collection>
""")
    mentions = parse_jsonl(run("convert", "-i", xml).stdout)
    assert [(m["id"], m["mention"], m.get("gold")) for m in mentions] == [
        ("d1:0-13", "Short stature", ["HP:0004322"]), ("d1:18-26", "seizures", None)]
    assert mentions[1]["context_left"] == "Short stature. No "


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


def test_an_offset_past_the_limit_is_bad_data_not_a_500_mb_line():
    name, words = "bioc_offset_5e8.xml", "bioc_offset_5e8.xml:7: <passage> <offset> 500,000,000 is outside 0 to"
    result = run("convert", "-i", DATA / name, "--from", "bioc-xml")
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
    assert result.exit_code == 2 and "one_line.xml:5: line longer than the limit" in result.stderr


def test_bioc_that_is_not_xml(tmp_path):
    path = tmp_path / "broken.xml"
    path.write_text("<collection><document><id>1</id>\n<passage><offset>0</offset>\n<text>oops</passage>")
    result = run("convert", "-i", path)
    assert result.exit_code == 2 and f"{path}:3: not valid XML" in result.stderr
    path.write_text("PMID 12345 seizures\n")
    assert f"{path}:1: not valid XML" in run("convert", "-i", path).stderr
    other = tmp_path / "other.xml"
    other.write_text("<html><body/></html>")
    assert "not BioC XML" in run("convert", "-i", other).stderr
