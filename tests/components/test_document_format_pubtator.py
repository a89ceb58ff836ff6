"""convert: PubTator / BioC / text to Mention JSONL and Linked JSONL back to PubTator, BioC and SSSOM."""

import json

import pytest

from conftest import jsonl, parse_jsonl, run, shared_path
from ontolink.formats.convert import parse_id_prefixes, parse_ids


def pubtator_slice(directory, documents, *parts):
    """The first ``documents`` documents of a shared PubTator file (blank-line separated)."""
    text = shared_path(*parts).read_text(encoding="utf-8")
    blocks = [block for block in text.split("\n\n") if block.strip()][:documents]
    path = directory / f"slice{documents}.pubtator"
    path.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    return path


@pytest.fixture
def cdr(tmp_path):
    return pubtator_slice(tmp_path, 6, "align", "raw", "bc5cdr", "CDR_TestSet.PubTator.txt")


def annotation_lines(text):
    return [line.split("\t") for line in text.splitlines() if line.count("\t") >= 4]


def text_lines(text):
    return [line for line in text.splitlines() if "|t|" in line or "|a|" in line]


def test_parse_ids_splits_and_drops_no_ids():
    assert parse_ids("D014786|D006311") == ["D014786", "D006311"]
    assert parse_ids("24767,24768;24767") == ["24767", "24768"]
    assert parse_ids("-1") == [] and parse_ids("") == [] and parse_ids("-") == []
    assert parse_ids("c|DEL|4153|A") == ["c|DEL|4153|A"]  # a tmVar variant id keeps its bars
    assert parse_ids("D003693", "MESH:") == ["MESH:D003693"] and parse_ids("HP:1", "MESH:") == ["HP:1"]
    assert parse_id_prefixes("Disease=MESH:,Gene=NCBIGene:") == {"Disease": "MESH:", "Gene": "NCBIGene:"}
    assert parse_id_prefixes("MESH:") == {"": "MESH:"}


def test_pubtator_to_mentions(cdr):
    result = run("convert", "-i", cdr, "--types", "Disease", "--id-prefix", "MESH:")
    assert result.exit_code == 0, result.stderr
    mentions = parse_jsonl(result.stdout)
    source = cdr.read_text()
    expected = [columns for columns in annotation_lines(source) if columns[4] == "Disease"]
    assert len(mentions) == len(expected) and "converted 6 documents" in result.stderr
    first = mentions[0]
    assert first["id"] == "8701013:22-30" and first["doc_id"] == "8701013" and first["type"] == "Disease"
    assert (first["start"], first["end"], first["mention"], first["gold"]) == (22, 30, "delirium", ["MESH:D003693"])
    titles = {line.split("|")[0]: line.split("|", 2)[2] for line in source.splitlines() if "|t|" in line}
    abstracts = {line.split("|")[0]: line.split("|", 2)[2] for line in source.splitlines() if "|a|" in line}
    for mention in mentions:  # the context is the whole document text: title + " " + abstract
        whole = mention["context_left"] + mention["mention"] + mention["context_right"]
        assert whole == titles[mention["doc_id"]] + " " + abstracts[mention["doc_id"]]
        assert len(mention["context_left"]) == mention["start"]
    everything = parse_jsonl(run("convert", "-i", cdr, "--context-chars", 20).stdout)
    assert len(everything) == len(annotation_lines(source))
    assert {mention["type"] for mention in everything} == {"Chemical", "Disease"}
    assert all(len(mention["context_left"]) <= 20 and len(mention["context_right"]) <= 20 for mention in everything)


def test_round_trip_pubtator_link_pubtator_and_bioc(cdr, tfidf_index, tmp_path):
    mentions = run("convert", "-i", cdr, "--types", "Disease")
    linked = run("link", "--index", tfidf_index, "--top-k", 3, input=mentions.stdout)
    assert linked.exit_code == 0, linked.stderr
    linked_path = tmp_path / "linked.jsonl"
    linked_path.write_text(linked.stdout)
    records = parse_jsonl(linked.stdout)

    back = run("convert", "-i", linked_path, "--to", "pubtator", "--documents", cdr)
    assert back.exit_code == 0, back.stderr
    source = cdr.read_text()
    assert text_lines(back.stdout) == text_lines(source)  # same documents, same text
    original = [columns[:5] for columns in annotation_lines(source) if columns[4] == "Disease"]
    written = annotation_lines(back.stdout)
    assert [columns[:5] for columns in written] == original  # same offsets and mention text
    assert [columns[5] for columns in written] == [record["candidates"][0]["id"] for record in records]

    for fmt, name in (("bioc-xml", "linked.xml"), ("bioc-json", "linked.json")):
        bioc_path = tmp_path / name
        result = run("convert", "-i", linked_path, "--to", fmt, "--documents", cdr, "-o", bioc_path)
        assert result.exit_code == 0, result.stderr
        again = parse_jsonl(run("convert", "-i", bioc_path).stdout)  # BioC back to mentions: same spans
        assert [(m["id"], m["mention"], m["context_left"], m["gold"]) for m in again] == \
               [(r["id"], r["mention"], r["context_left"], [r["candidates"][0]["id"]]) for r in records]
        # and BioC as the documents of the way back gives the same PubTator
        from_bioc = run("convert", "-i", linked_path, "--to", "pubtator", "--documents", bioc_path)
        assert from_bioc.stdout == back.stdout


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


def sssom_validate(path):
    from sssom.constants import SchemaValidationType
    from sssom.parsers import parse_sssom_table
    from sssom.validators import validate

    table = parse_sssom_table(str(path))
    validate(table, [SchemaValidationType.JsonSchema, SchemaValidationType.PrefixMapCompleteness,
                     SchemaValidationType.StrictCurieFormat], fail_on_error=True)
    return table


def test_sssom_output_is_valid(cdr, tfidf_index, tmp_path):
    mentions = run("convert", "-i", cdr, "--types", "Disease").stdout
    records = parse_jsonl(run("link", "--index", tfidf_index, "--no-ranker", "--top-k", 3, input=mentions).stdout)
    records[1]["nil"] = True  # a NIL mention becomes sssom:NoTermFound
    out = tmp_path / "links.sssom.tsv"
    result = run("convert", "--to", "sssom", "--mapping-set-id", "https://example.org/test-run", "--top-n", 2,
                 "-o", out, input=jsonl(records))
    assert result.exit_code == 0, result.stderr
    table = sssom_validate(out)
    assert table.metadata["mapping_set_id"] == "https://example.org/test-run"
    assert table.metadata["license"] and table.converter.expand("HP:0000001").startswith("http://purl.obolibrary")
    frame = table.df
    assert len(frame) == 2 * len(records) - 1
    # how each candidate was matched: a name of it once folded, or by the TF-IDF index; NIL: unspecified
    justifications = {"exact": "semapv:LexicalMatching", "tfidf": "semapv:LexicalSimilarityThresholdMatching"}
    expected = {justifications[candidate["matched_by"]] for record in records if not record.get("nil")
                for candidate in record["candidates"][:2]} | {"semapv:UnspecifiedMatching"}
    assert set(frame["mapping_justification"]) == expected
    ranked = frame[frame["object_id"] != "sssom:NoTermFound"]
    assert sorted(ranked["predicate_id"].value_counts().items()) == [("skos:closeMatch", len(records) - 1),
                                                                      ("skos:exactMatch", len(records) - 1)]
    first = frame[frame["subject_id"] == f"mention:{records[0]['id']}"].sort_values("confidence").iloc[-1]
    assert first["subject_label"] == records[0]["mention"]
    assert first["object_id"] == records[0]["candidates"][0]["id"]
    assert first["object_label"] == records[0]["candidates"][0]["name"]
    assert 0 <= float(first["confidence"]) <= 1
    assert list(frame[frame["subject_id"] == f"mention:{records[1]['id']}"]["object_id"]) == ["sssom:NoTermFound"]
    # the validation can fail: a confidence outside [0, 1] or an undeclared prefix is refused
    text = out.read_text()
    row = next(line for line in text.splitlines() if line.startswith(f"mention:{records[0]['id']}\t"))
    cells = row.split("\t")
    for column, value in ((6, "1.5"), (3, "XYZ:1")):
        bad_row = "\t".join(value if index == column else cell for index, cell in enumerate(cells))
        broken = tmp_path / "broken.sssom.tsv"
        broken.write_text(text.replace(row, bad_row))
        with pytest.raises(Exception):
            sssom_validate(broken)


def test_sssom_bare_ids_need_a_prefix(tmp_path):
    record = {"id": "m1", "mention": "x", "candidates": [{"id": "D003693", "name": "Delirium", "score": 0.9}]}
    refused = run("convert", "--to", "sssom", input=jsonl([record]))
    assert refused.exit_code == 2 and "not a CURIE" in refused.stderr
    out = tmp_path / "t.sssom.tsv"
    assert run("convert", "--to", "sssom", "--object-prefix", "MESH:", "-o", out, input=jsonl([record])).exit_code == 0
    table = sssom_validate(out)
    assert table.df.iloc[0]["object_id"] == "MESH:D003693"
    assert table.converter.expand("MESH:D003693") == "http://id.nlm.nih.gov/mesh/D003693"


BAD_PUBTATOR = {
    "malformed line": ("1|t|Seizures in a child.\n1|a|The child had seizures.\nthis is not pubtator\n", 3),
    "offsets outside the text": ("1|t|Seizures in a child.\n1|a|The child had seizures.\n1\t30\t90\tseizures\tDisease\tD1\n", 3),
    "text does not match": ("1|t|Seizures in a child.\n1|a|The child had seizures.\n1\t0\t8\tSeizurez\tDisease\tD1\n", 3),
    "bad integer": ("1|t|Seizures in a child.\n1\tzero\t8\tSeizures\tDisease\tD1\t\n", 2),
}


@pytest.mark.parametrize("problem", sorted(BAD_PUBTATOR))
def test_bad_pubtator_is_file_line_exit_2(tmp_path, problem):
    text, line = BAD_PUBTATOR[problem]
    good = "2|t|Fever.\n2|a|High fever.\n2\t0\t5\tFever\tDisease\tD2\n\n"
    path = tmp_path / "bad.pubtator"
    path.write_text(good + text)
    result = run("convert", "-i", path)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1].startswith(f"ontolink: error: {path}:{line + 4}: ")
    assert "Traceback" not in result.stderr
    assert parse_jsonl(result.stdout)[0]["mention"] == "Fever"  # written before the error: kept
    skipped = run("convert", "-i", path, "--skip-invalid")
    assert skipped.exit_code == 0 and "1 invalid lines or annotations skipped" in skipped.stderr
    assert "Fever" in skipped.stdout


def test_bioc_that_is_not_xml_and_bad_json(tmp_path):
    path = tmp_path / "broken.xml"
    path.write_text("<collection><document><id>1</id>\n<passage><offset>0</offset>\n<text>oops</passage>")
    result = run("convert", "-i", path)
    assert result.exit_code == 2 and f"{path}:3: not valid XML" in result.stderr
    path.write_text("PMID 12345 seizures\n")
    assert f"{path}:1: not valid XML" in run("convert", "-i", path).stderr
    other = tmp_path / "other.xml"
    other.write_text("<html><body/></html>")
    assert "not BioC XML" in run("convert", "-i", other).stderr
    lines = tmp_path / "docs.json"
    document = {"id": "d1", "passages": [{"offset": 0, "text": "Fever.", "annotations": [
        {"id": "1", "infons": {"type": "Disease"}, "text": "Fever", "locations": [{"offset": 0, "length": 5}]}]}]}
    lines.write_text(json.dumps(document) + "\n{broken\n")
    result = run("convert", "-i", lines)
    assert result.exit_code == 2 and f"{lines}:2: not valid JSON" in result.stderr
    assert parse_jsonl(result.stdout)[0]["mention"] == "Fever"


def test_linked_to_pubtator_refuses_mismatched_mentions(cdr, tmp_path):
    mentions = parse_jsonl(run("convert", "-i", cdr).stdout)
    mentions[0] = {**mentions[0], "mention": "something else", "candidates": []}
    for mention in mentions[1:]:
        mention["candidates"] = []
    result = run("convert", "--to", "pubtator", "--documents", cdr, input=jsonl(mentions))
    assert result.exit_code == 2 and "differs from document 8701013" in result.stderr
    unknown = [{**mentions[1], "doc_id": "999"}]
    result = run("convert", "--to", "pubtator", "--documents", cdr, input=jsonl(unknown))
    assert result.exit_code == 2 and "names document '999'" in result.stderr
    assert run("convert", "--to", "pubtator", input=jsonl(unknown)).exit_code == 2  # needs --documents


def test_text_documents(tmp_path):
    path = tmp_path / "docs.txt"
    path.write_text("PMID1\tThe child had seizures.\n\nNo tab here.\n")
    from ontolink.formats import read_documents

    documents = list(read_documents(path))
    assert [(d.id, d.passages[0].text) for d in documents] == [("PMID1", "The child had seizures."),
                                                               ("3", "No tab here.")]


def test_convert_into_a_closed_pipe_and_streaming(tmp_path):
    import subprocess
    import sys

    source = shared_path("align", "raw", "bc5cdr", "CDR_TestSet.PubTator.txt")
    result = subprocess.run(f"{sys.executable} -m ontolink convert -i {source} | head -1", shell=True,
                            capture_output=True, text=True)
    assert result.returncode == 0 and "Traceback" not in result.stderr
    assert json.loads(result.stdout)["id"] == "8701013:0-10"
    # a document is converted as soon as its block ends, while stdin is still open
    process = subprocess.Popen([sys.executable, "-m", "ontolink", "convert", "--from", "pubtator"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    process.stdin.write("1|t|Fever.\n1|a|High fever.\n1\t0\t5\tFever\tDisease\tD1\n\n")
    process.stdin.flush()
    first = json.loads(process.stdout.readline())
    assert first["mention"] == "Fever"
    process.stdin.close()
    process.wait(timeout=60)
    assert process.returncode == 0
