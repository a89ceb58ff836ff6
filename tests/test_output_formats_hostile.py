"""A hostile user's round on the written formats, one test each (each failed before its fix): PubTator from
documents whose text or id it cannot hold, a carriage return inside a TSV or SSSOM cell, SSSOM of IRI ids and of
scores that are not numbers, brat text with CRLF line ends, ONTOLINK_TRACEBACK=0."""

import csv
import json

from conftest import jsonl, run, sssom_validate

SEIZURES = {"id": "HP:0001250", "name": "Seizure", "score": 0.9}


def _linked(doc_id, start, mention, **fields):
    return {"id": f"{doc_id}:{start}-{start + len(mention)}", "doc_id": doc_id, "start": start,
            "end": start + len(mention), "mention": mention, "candidates": [SEIZURES], **fields}


def _to_pubtator(tmp_path, documents, links, name="docs.jsonl"):
    """`convert --to pubtator` of ``links`` (Linked records) into ``documents`` (records, or a file's text):
    (the result, the documents' path, the links' path, the output's path)."""
    documents_path, linked, written = tmp_path / name, tmp_path / "linked.jsonl", tmp_path / "out.pubtator"
    documents_path.write_text(documents if isinstance(documents, str) else jsonl(documents))
    linked.write_text(jsonl(links))
    result = run("convert", "-i", linked, "--to", "pubtator", "--documents", documents_path, "-o", written)
    return result, documents_path, linked, written


def test_pubtator_writes_line_breaks_in_a_text_as_spaces_and_reads_back(tmp_path):
    """A newline in a document's text was written raw: the next line ('5|a|fake') read as another document."""
    text = "Seizures were seen.\nShort stature\r\n too.\u2028\n5|a|fake"
    result, _, _, written = _to_pubtator(tmp_path, [{"id": "j1", "text": text}], [_linked("j1", 0, "Seizures")])
    assert result.exit_code == 0, result.output
    lines = written.read_text().splitlines()
    assert lines[0] == "j1|t|Seizures were seen. Short stature   too.  5|a|fake" and len(lines) == 3
    back = run("convert", "-i", written, "--from", "pubtator", "-o", "-")
    assert back.exit_code == 0, back.output
    (mention,) = map(json.loads, back.stdout.splitlines())
    assert (mention["start"], mention["end"], mention["mention"]) == (0, 8, "Seizures")


def test_pubtator_refuses_a_document_id_it_cannot_write(tmp_path):
    result, documents, _, _ = _to_pubtator(tmp_path, [{"id": "j|2", "text": "Patient had seizures."}],
                                           [_linked("j|2", 12, "seizures")])
    assert result.exit_code == 2 and f"{documents}: document 'j|2': its id holds a '|'" in result.stderr


BIOC_ADJACENT = """<?xml version='1.0' encoding='UTF-8'?>
<collection><source>x</source><date></date><key></key>
<document><id>66</id>
<passage><infon key="type">title</infon><offset>0</offset><text>Seizures.</text></passage>
<passage><infon key="type">abstract</infon><offset>9</offset><text>Short stature.</text></passage>
</document></collection>
"""


def test_pubtator_refuses_an_abstract_that_starts_where_the_title_ends(tmp_path):
    """The abstract lost its first character ('66|a|hort stature.'), exit 0, and its offsets no longer held."""
    result, documents, _, _ = _to_pubtator(tmp_path, BIOC_ADJACENT, [_linked("66", 9, "Short stature")], "adjacent.xml")
    assert result.exit_code == 2, result.output
    assert f"{documents}: document '66': a passage starts at offset 9, right after its 9-character title" \
        in result.stderr


def test_a_carriage_return_in_a_cell_keeps_tsv_and_sssom_rows_whole(small_ontology_path, tmp_path):
    """csv quotes "\\n" but not a bare "\\r": the row split for Python's csv reader and pandas, and the sssom
    package dropped the mapping, exit 0."""
    from ontolink.formats.linked_tsv import CandidateTSVWriter

    records = [{"id": "m1", "mention": "short\rstature", "candidates": [SEIZURES]},
               {"id": "m2", "mention": "seizures", "candidates": [SEIZURES]}]
    table = tmp_path / "linked.tsv"
    with open(table, "w", newline="") as stream:
        writer = CandidateTSVWriter(stream)
        for record in records:
            writer.write(record)
    with open(table, newline="") as stream:
        rows = list(csv.reader(stream, delimiter="\t"))
    assert [len(row) for row in rows] == [9, 9, 9] and rows[1][1] == "short\rstature"
    linked = tmp_path / "linked.jsonl"
    linked.write_text(jsonl(records))
    mappings = tmp_path / "out.sssom.tsv"
    assert run("convert", "-i", linked, "--to", "sssom", "-o", mappings).exit_code == 0
    labels = list(sssom_validate(mappings).df.subject_label)  # the sssom parser reads the quoted CR as "\n"
    assert [label.replace("\r", "\n") for label in labels] == ["short\nstature", "seizures"]


def test_sssom_compacts_iri_ids_or_names_the_curie_map_they_need(tmp_path):
    """An OWL ontology's IRI ids were written with "http" as their prefix, expanded to
    http://purl.obolibrary.org/obo/http_//www.ebi.ac.uk/..., and the validator passed them."""
    linked = tmp_path / "linked.jsonl"
    linked.write_text(jsonl([
        {"id": "m1", "mention": "fits", "candidates": [{"id": "http://purl.obolibrary.org/obo/HP_0001250",
                                                        "name": "Seizure", "score": 0.8}]},
        {"id": "m2", "mention": "cancer", "candidates": [{"id": "http://www.ebi.ac.uk/efo/EFO_0000311",
                                                          "name": "cancer", "score": 0.7}]}]))
    mappings = tmp_path / "out.sssom.tsv"
    result = run("convert", "-i", linked, "--to", "sssom", "-o", mappings)
    assert result.exit_code == 2 and f"{linked}:2: mention 'm2': entity id 'http://www.ebi.ac.uk/efo/EFO_0000311' " \
        "is an IRI" in result.stderr and "--curie-map PREFIX=http://www.ebi.ac.uk/efo/" in result.stderr
    result = run("convert", "-i", linked, "--to", "sssom", "--curie-map", "EFO=http://www.ebi.ac.uk/efo/EFO_",
                 "-o", mappings)
    assert result.exit_code == 0, result.output
    table = sssom_validate(mappings)
    assert list(table.df.object_id) == ["HP:0001250", "EFO:0000311"]
    assert [table.converter.expand(curie) for curie in table.df.object_id] == [
        "http://purl.obolibrary.org/obo/HP_0001250", "http://www.ebi.ac.uk/efo/EFO_0000311"]


def test_sssom_refuses_a_score_that_is_not_a_number_naming_the_line(tmp_path):
    """'high' was exit 1 (ValueError) with no file or line; NaN was written as confidence 0."""
    linked = tmp_path / "linked.jsonl"
    for score in ("high", float("nan")):
        linked.write_text(jsonl([{"id": "m1", "mention": "fits", "candidates": [SEIZURES]},
                                 {"id": "m2", "mention": "x", "candidates": [{**SEIZURES, "score": score}]}]))
        result = run("convert", "-i", linked, "--to", "sssom", "-o", tmp_path / "out.sssom.tsv")
        assert result.exit_code == 2 and f"{linked}:2: mention 'm2': a candidate's score" in result.stderr


def test_brat_offsets_count_the_carriage_returns_of_crlf_text(tmp_path):
    """The .txt was read with its "\\r\\n" turned into "\\n": every span after the first line was refused."""
    (tmp_path / "d1.txt").write_bytes(b"Seizures and\r\nshort stature.\r\n")
    annotations = tmp_path / "d1.ann"
    annotations.write_text("T1\tDisease 0 8\tSeizures\nT2\tDisease 14 27\tshort stature\n")
    result = run("convert", "-i", annotations, "-o", "-")
    assert result.exit_code == 0, result.output
    assert [record["mention"] for record in map(json.loads, result.stdout.splitlines())] == [
        "Seizures", "short stature"]


def test_ontolink_traceback_0_means_off(monkeypatch):
    from ontolink.cli.main import _show_tracebacks

    for value, shown in (("0", False), ("", False), ("false", False), ("1", True), ("yes", True)):
        monkeypatch.setenv("ONTOLINK_TRACEBACK", value)
        assert _show_tracebacks() is shown


def test_a_linked_mention_pubtator_cannot_write_is_blamed_on_the_linked_records(tmp_path):
    """The refusal named the --documents file, whose records were fine."""
    result, _, linked, _ = _to_pubtator(tmp_path, [{"id": "x1", "text": "Seizures here."}],
                                        [_linked("x1", 0, "Seizures", type="Dis\tease")])
    assert result.exit_code == 2 and f"{linked}: mention 'x1:0-8': its type 'Dis\\tease'" in result.stderr


def test_eval_tables_keep_a_by_value_in_its_cell(tmp_path):
    """--by sources (a list, joined with '|') ended its Markdown cell early; a tab in a value split its TSV row."""
    linked = tmp_path / "linked.jsonl"
    linked.write_text(jsonl([
        {"id": "a", "mention": "x", "gold": ["HP:1"], "sources": ["ner", "dict"], "candidates": [{"id": "HP:1"}]},
        {"id": "b", "mention": "y", "gold": ["HP:2"], "sources": "ner", "type": "a\tb",
         "candidates": [{"id": "HP:1"}]}]))
    markdown = run("eval", linked, "--format", "markdown", "--by", "sources")
    assert markdown.exit_code == 0, markdown.output
    assert {line.replace("\\|", "").count("|") for line in markdown.stdout.splitlines() if line.startswith("|")} == {5}
    table = run("eval", linked, "--format", "tsv", "--by", "type")
    assert {line.count("\t") for line in table.stdout.splitlines() if line} == {3}


def test_an_empty_span_is_called_empty_not_outside_the_text(tmp_path):
    corpus = tmp_path / "corpus.pubtator"
    corpus.write_text("21|t|Patient had seizures.\n21|a|\n21\t9\t9\t\tDisease\tHP:2\n\n")
    result = run("convert", "-i", corpus, "-o", "-")
    assert result.exit_code == 2 and f"{corpus}:3: document 21: offsets 9-9 are an empty span" in result.stderr
