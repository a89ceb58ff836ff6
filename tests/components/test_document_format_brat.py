"""brat standoff documents: real BC5CDR abstracts written as NAME.txt + NAME.ann read back to the same
mentions as their PubTator original."""

import pytest

from conftest import parse_jsonl, run, shared_path


def cdr_blocks(count):
    text = shared_path("align", "raw", "bc5cdr", "CDR_TestSet.PubTator.txt").read_text(encoding="utf-8")
    return [block for block in text.split("\n\n") if block.strip()][:count]


def write_brat(directory, block):
    """One PubTator block as brat files: the text is title + ' ' + abstract, as PubTator offsets count it."""
    lines = block.strip("\n").split("\n")
    pmid, _, title = lines[0].split("|", 2)
    abstract = lines[1].split("|", 2)[2]
    (directory / f"{pmid}.txt").write_text(f"{title} {abstract}", encoding="utf-8")
    ann = []
    for number, line in enumerate((line for line in lines[2:] if line.count("\t") >= 5), 1):
        _, start, end, mention, kind, ids = line.split("\t")[:6]
        ann.append(f"T{number}\t{kind} {start} {end}\t{mention}")
        for part, identifier in enumerate(i for i in ids.split("|") if i != "-1"):
            ann.append(f"N{number}_{part}\tReference T{number} MESH:{identifier}\t{mention}")
    ann.append("R1\tCID Arg1:T1 Arg2:T2")  # a relation: not a mention, passed over
    (directory / f"{pmid}.ann").write_text("\n".join(ann) + "\n", encoding="utf-8")
    return directory / f"{pmid}.ann"


def test_brat_reads_the_mentions_of_its_pubtator_original(tmp_path):
    blocks = cdr_blocks(3)
    brat = tmp_path / "brat"
    brat.mkdir()
    first = [write_brat(brat, block) for block in blocks][0]
    pubtator = tmp_path / "slice.pubtator"
    pubtator.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")

    expected = parse_jsonl(run("convert", "-i", pubtator, "--id-prefix", "MESH:").stdout)
    from_dir = run("convert", "-i", brat, "--from", "brat")
    assert from_dir.exit_code == 0, from_dir.output
    got = parse_jsonl(from_dir.stdout)  # the directory's files in name order
    assert len(got) == len(expected) > 30 and [r["doc_id"] for r in got] == sorted(r["doc_id"] for r in got)
    expected.sort(key=lambda record: record["doc_id"])  # stable: each document's mentions in their order
    for record, original in zip(got, expected):
        assert {key: record[key] for key in ("id", "doc_id", "start", "end", "mention", "type")} == \
            {key: original[key] for key in ("id", "doc_id", "start", "end", "mention", "type")}
        assert record.get("gold", []) == original["gold"]
    single = run("convert", "-i", first)  # one .ann file, its format guessed from the name
    assert single.exit_code == 0 and parse_jsonl(single.stdout) == [r for r in got if r["doc_id"] == first.stem]


def test_brat_bad_lines_name_file_and_line(tmp_path):
    (tmp_path / "d.txt").write_text("Seizures and ataxia.", encoding="utf-8")
    (tmp_path / "d.ann").write_text("T1\tDisease 0 8\tSeizures\nT2\tDisease 20 13\tataxia\n", encoding="utf-8")
    result = run("convert", "-i", tmp_path / "d.ann")
    assert result.exit_code == 2 and "d.ann:2" in result.output and "START < END" in result.output
    skipped = run("convert", "-i", tmp_path / "d.ann", "--skip-invalid")
    assert skipped.exit_code == 0 and [r["mention"] for r in parse_jsonl(skipped.stdout)] == ["Seizures"]
    (tmp_path / "e.ann").write_text("T1\tDisease 0 8\tSeizures\n", encoding="utf-8")
    missing = run("convert", "-i", tmp_path / "e.ann")
    assert missing.exit_code == 2 and "e.txt is missing" in missing.output


@pytest.mark.parametrize("offsets", ["0 9", "13 19"])
def test_brat_text_must_match_its_offsets(tmp_path, offsets):
    (tmp_path / "d.txt").write_text("Seizures and ataxia.", encoding="utf-8")
    (tmp_path / "d.ann").write_text(f"T1\tDisease {offsets}\tSeizures\n", encoding="utf-8")
    result = run("convert", "-i", tmp_path / "d.ann")
    assert result.exit_code == 2 and "d.ann:1" in result.output and "does not match" in result.output
