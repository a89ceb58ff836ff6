"""`convert --to pubtator/bioc-* --keep-annotations`: the documents' own annotations (BC5CDR's Chemical and
Disease lines) stay beside the linked mentions instead of being dropped."""

from conftest import annotation_lines, jsonl, parse_jsonl, run


def test_keep_annotations_merges_the_corpus_annotations(cdr, tfidf_index, tmp_path):
    own = annotation_lines(cdr.read_text())
    assert {line[4] for line in own} == {"Chemical", "Disease"}
    diseases = run("convert", "-i", cdr, "--types", "Disease").stdout
    linked = parse_jsonl(run("link", "--index", tfidf_index, "--top-k", 1, input=diseases).stdout)
    for record in linked:
        record["type"] = "Phenotype"  # what this run found, beside what the corpus says
    dropped = annotation_lines(run("convert", "--to", "pubtator", "--documents", cdr, input=jsonl(linked)).stdout)
    assert {line[4] for line in dropped} == {"Phenotype"} and len(dropped) == len(linked)

    result = run("convert", "--to", "pubtator", "--documents", cdr, "--keep-annotations", input=jsonl(linked))
    assert result.exit_code == 0, result.stderr
    kept = annotation_lines(result.stdout)
    assert len(kept) == len(own) + len(linked)
    assert sorted(map(tuple, own)) == sorted(tuple(line) for line in kept if line[4] != "Phenotype")
    for document in {line[0] for line in kept}:  # each document's lines stay in offset order
        starts = [int(line[1]) for line in kept if line[0] == document]
        assert starts == sorted(starts)

    # a linked mention that repeats an own annotation (same span, type and id) is written once
    same = [{**record, "type": "Disease", "candidates": [{"id": record["gold"][0], "name": "x", "score": 1.0}]}
            for record in linked if len(record.get("gold") or ()) == 1]
    assert same
    result = run("convert", "--to", "pubtator", "--documents", cdr, "--keep-annotations", input=jsonl(same))
    assert result.exit_code == 0, result.stderr
    assert sorted(map(tuple, annotation_lines(result.stdout))) == sorted(map(tuple, own))

    bioc = tmp_path / "kept.xml"
    result = run("convert", "--to", "bioc-xml", "--documents", cdr, "--keep-annotations", "-o", bioc,
                 input=jsonl(linked))
    assert result.exit_code == 0, result.stderr
    back = run("convert", "-i", bioc).stdout
    assert len(parse_jsonl(back)) == len(own) + len(linked)
    assert run("convert", "--to", "sssom", "--keep-annotations", input=jsonl(linked)).exit_code == 2
