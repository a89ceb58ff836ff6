"""The SSSOM document format (written, never read): `convert --to sssom` writes a mapping set that the reference
implementation (PyPI's sssom) reads and validates; bare ids need a prefix."""

import pytest

from conftest import jsonl, parse_jsonl, run, sssom_validate


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


def test_an_id_a_curie_cannot_carry_is_percent_encoded(tmp_path):
    """tmVar's variant ids hold "|", which a CURIE's local part cannot: sssom's parser dropped those rows with a
    log line (the shared KG's table links chemicals to them)."""
    records = [{"id": "m1", "mention": "alanine", "candidates": [
                   {"id": "tmVar:21080147:p|SUB|A|286|P", "name": "alanine for proline", "score": 0.9}]},
               {"id": "m2", "mention": "ARSA", "candidates": [{"id": "NCBIGene:410", "name": "ARSA", "score": 0.9}]}]
    out = tmp_path / "t.sssom.tsv"
    assert run("convert", "--to", "sssom", "-o", out, input=jsonl(records)).exit_code == 0
    frame = sssom_validate(out).df
    assert list(frame["object_id"]) == ["tmVar:21080147:p%7CSUB%7CA%7C286%7CP", "NCBIGene:410"]


def test_exact_min_and_close_min_decide_the_predicate_by_score(cdr, kg_entities_index, tmp_path):
    """Every best candidate was skos:exactMatch, a 0.50 guess too: with --exact-min only a best candidate scoring
    at least that is, the others close matches; --close-min makes the weakest related matches. Still valid SSSOM."""
    mentions = run("convert", "-i", cdr, "--types", "Disease", "--id-prefix", "MESH:").stdout
    linked = run("link", "--index", kg_entities_index, "--top-k", 3, input=mentions)
    assert linked.exit_code == 0, linked.stderr
    records = parse_jsonl(linked.stdout)
    best = sorted(record["candidates"][0]["score"] for record in records)
    exact_min = best[len(best) // 2]  # half the best candidates reach it
    close_min = 0.3
    out = tmp_path / "links.sssom.tsv"
    result = run("convert", "--to", "sssom", "--top-n", 3, "--exact-min", exact_min, "--close-min", close_min,
                 "-o", out, input=linked.stdout)
    assert result.exit_code == 0, result.stderr
    frame = sssom_validate(out).df
    expected = {}
    for record in records:
        for rank, candidate in enumerate(record["candidates"][:3]):
            score = candidate["score"]
            expected[f"mention:{record['id']}", candidate["id"]] = (
                "skos:exactMatch" if rank == 0 and score >= exact_min else
                "skos:closeMatch" if score >= close_min else "skos:relatedMatch")
    assert dict(zip(zip(frame["subject_id"], frame["object_id"]), frame["predicate_id"])) == expected
    counts = frame["predicate_id"].value_counts()
    assert counts["skos:exactMatch"] >= len(records) // 2 and counts["skos:closeMatch"] > len(records) // 4
    assert counts.get("skos:relatedMatch", 0) > 0
    # without thresholds: rank alone, as before
    plain = tmp_path / "plain.sssom.tsv"
    assert run("convert", "--to", "sssom", "-o", plain, input=linked.stdout).exit_code == 0
    assert set(sssom_validate(plain).df["predicate_id"]) == {"skos:exactMatch"}
    for options in (("--to", "pubtator", "--documents", cdr), ("--to", "sssom", "--predicate", "skos:closeMatch")):
        refused = run("convert", *options, "--exact-min", 0.5, input=linked.stdout)
        assert refused.exit_code == 2 and "--exact-min decide SSSOM's predicate" in refused.stderr
