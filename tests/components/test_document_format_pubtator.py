"""The PubTator document format: BC5CDR's PubTator to Mention JSONL (`convert`), Linked JSONL back to PubTator (and
to BioC, the documents' other way back), bad lines naming FILE:LINE, streaming."""

import json

import pytest

from conftest import annotation_lines, jsonl, parse_jsonl, run, shared_path
from ontolink.formats.convert import parse_id_prefixes, parse_ids


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


def test_convert_files_takes_the_options_object(tmp_path):
    """convert's library function, as a Python caller calls it: three GSC+ abstracts written as PubTator become
    the same mentions again; the mentions, linked to their gold id, become an SSSOM table."""
    from ontolink.core.io import read_records
    from ontolink.formats.convert import convert_files
    from ontolink.formats.options import ConvertOptions

    gold = [record for record in read_records(str(shared_path("gscplus", "mentions.jsonl")))]
    documents = list(dict.fromkeys(record["doc_id"] for record in gold))[:3]
    gold = [record for record in gold if record["doc_id"] in documents]
    lines = []
    for doc_id in documents:
        mentions = [record for record in gold if record["doc_id"] == doc_id]
        text = mentions[0]["context_left"] + mentions[0]["mention"] + mentions[0]["context_right"]
        lines += [f"{doc_id}|t|{text}", f"{doc_id}|a|"]
        lines += [f"{doc_id}\t{m['start']}\t{m['end']}\t{m['mention']}\tPhenotype\t{'|'.join(m['gold'])}"
                  for m in mentions] + [""]
    (tmp_path / "gsc.pubtator").write_text("\n".join(lines) + "\n")
    convert_files(ConvertOptions(input_path=str(tmp_path / "gsc.pubtator"), output_path=str(tmp_path / "m.jsonl")))
    converted = parse_jsonl((tmp_path / "m.jsonl").read_text())
    assert [(m["doc_id"], m["start"], m["mention"], m["gold"]) for m in converted] == \
        [(m["doc_id"], m["start"], m["mention"], m["gold"]) for m in gold]
    (tmp_path / "linked.jsonl").write_text(jsonl({**m, "candidates": [{"id": m["gold"][0], "score": 0.5}]}
                                                 for m in converted))
    convert_files(ConvertOptions(input_path=str(tmp_path / "linked.jsonl"), output_path=str(tmp_path / "t.tsv"),
                                 target_format="sssom", mapping_set_id="https://example.org/gsc"))
    table = (tmp_path / "t.tsv").read_text().splitlines()
    assert '#mapping_set_id: "https://example.org/gsc"' in table
    rows = [line.split("\t") for line in table if not line.startswith("#")][1:]
    assert [row[3] for row in rows] == [m["gold"][0] for m in gold]


def test_id_rewriter_strips_adds_and_replaces_prefixes():
    from ontolink.formats.convert import IdRewriter

    assert IdRewriter(strip_prefix="MESH:")("MESH:D015738") == "D015738"
    assert IdRewriter(strip_prefix="MESH")("MESH:D015738") == "D015738"  # the colon is understood
    assert IdRewriter(strip_prefix="MESH:")("NCBIGene:7157") == "NCBIGene:7157"  # another prefix is kept
    per_type = IdRewriter(strip_prefix="Disease=MESH:")
    assert per_type("MESH:D015738", "Disease") == "D015738" and per_type("MESH:D015738", "Chemical") == "MESH:D015738"
    assert IdRewriter("MeSH:", "MESH:")("MESH:D015738") == "MeSH:D015738"  # both: a prefix replaced
    assert IdRewriter("MESH:")("D015738") == "MESH:D015738" and not IdRewriter("", "")


def test_pubtator_written_with_the_corpus_bare_ids(cdr, kg_entities_index, tmp_path):
    """BC5CDR writes its MeSH ids bare (D003693); read with --id-prefix MESH: and linked to an ontology of MESH:
    ids, its PubTator came back as MESH:D003693, which the corpus's own scoring never matches. --strip-prefix
    writes them as the corpus did: scored here by the bioc package's PubTator reader against the corpus, by
    offsets."""
    from bioc import pubtator

    mentions = run("convert", "-i", cdr, "--types", "Disease", "--id-prefix", "MESH:")
    assert all(gold.startswith("MESH:") for record in parse_jsonl(mentions.stdout) for gold in record["gold"])
    linked = run("link", "--index", kg_entities_index, "--top-k", 1, input=mentions.stdout)
    assert linked.exit_code == 0, linked.stderr
    linked_path = tmp_path / "linked.jsonl"
    linked_path.write_text(linked.stdout)
    with open(cdr, encoding="utf-8") as handle:
        gold = {(ann.pmid, ann.start, ann.end): set(ann.id.split("|")) for document in pubtator.load(handle)
                for ann in document.annotations if ann.type == "Disease"}

    def scored(*options):
        out = tmp_path / "linked.pubtator"
        result = run("convert", "-i", linked_path, "--to", "pubtator", "--documents", cdr, "-o", out, *options)
        assert result.exit_code == 0, result.stderr
        with open(out, encoding="utf-8") as handle:
            written = [ann for document in pubtator.load(handle) for ann in document.annotations]
        assert {(ann.pmid, ann.start, ann.end) for ann in written} == set(gold)
        return sum(ann.id in gold[ann.pmid, ann.start, ann.end] for ann in written), written, result.stderr

    correct, written, _ = scored()
    # what a user got before: MESH: ids (a few mentions link to another prefix's entity), none the corpus's
    prefixed = sum(ann.id.startswith("MESH:") for ann in written)
    assert correct == 0 and prefixed >= 0.6 * len(gold)
    correct, written, stderr = scored("--strip-prefix", "MESH:")
    assert not any(ann.id.startswith("MESH:") for ann in written)
    assert correct >= 0.6 * len(gold), (correct, len(gold))
    assert f"ids of {prefixed} linked mentions rewritten" in stderr
    # the documents' own annotations, kept beside the links, are written as read
    out = tmp_path / "kept.pubtator"
    assert run("convert", "-i", linked_path, "--to", "bioc-json", "--documents", cdr, "--strip-prefix", "MESH:",
               "--keep-annotations", "-o", out).exit_code == 0
    identifiers = [annotation["infons"]["identifier"] for document in json.loads(out.read_text())["documents"]
                   for passage in document["passages"] for annotation in passage["annotations"]]
    assert identifiers and not any(identifier.startswith("MESH:") for identifier in identifiers)
