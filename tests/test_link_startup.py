"""`link` at speed, links unchanged: the folded-name table `index` stores is the one `link` would make (and is
the one it reads), and the summary puts start-up apart from the rate."""

import json

from conftest import jsonl, parse_jsonl, run

MENTIONS = [{"id": f"m{n}", "mention": mention} for n, mention in enumerate(
    ["Seizures", "seizure", "myopia", "Myopia", "generalized seizures", "eye abnormalities", "seizures",
     "focal seizure", "abnormal eye", "Generalised seizure", "tonic seizures", "atonic seizures"] * 3)]


def test_index_stores_the_folded_names_link_reads(small_ontology_path, tmp_path):
    from ontolink.indexes.artifact import TABLES_FILE, load_index
    from ontolink.linking.link import FOLDED_NAMES, folded_names, folding_digest

    directory = tmp_path / "idx"
    result = run("index", "--ontology", small_ontology_path, "--method", "tfidf", directory)
    assert result.exit_code == 0, result.stderr
    manifest = json.loads((directory / "manifest.json").read_text())
    assert TABLES_FILE in manifest["files"]
    loaded = load_index(directory)
    made = folded_names(loaded.names)
    assert any(key != name for key, name in zip(made, loaded.names))  # folding changes names: a real table
    stored = json.loads((directory / TABLES_FILE).read_text())[FOLDED_NAMES]
    assert stored == {"digest": folding_digest(), "rows": made}

    linked = run("link", "--index", directory, "--top-k", 3, input=jsonl(MENTIONS))
    assert linked.exit_code == 0, linked.stderr
    assert any(record["candidates"][0]["matched_by"] == "exact" for record in parse_jsonl(linked.stdout))
    # an index without the table (built before it existed), or with one made by other folding code: made again
    tables = directory / TABLES_FILE
    original = tables.read_text()
    tables.unlink()  # a table listed in the manifest is required (a truncated index is refused) ...
    assert run("link", "--index", directory, input=jsonl(MENTIONS)).exit_code == 2
    (directory / "manifest.json").write_text(json.dumps({**manifest, "files": [
        name for name in manifest["files"] if name != TABLES_FILE]}))  # ... in an index from before it, none is
    assert run("link", "--index", directory, "--top-k", 3, input=jsonl(MENTIONS)).stdout == linked.stdout
    tables.write_text(json.dumps({FOLDED_NAMES: {"digest": "other code", "rows": [""] * len(made)}}))
    assert run("link", "--index", directory, "--top-k", 3, input=jsonl(MENTIONS)).stdout == linked.stdout
    # and the table of this code is the one read: emptied, no candidate is an exact name any more
    tables.write_text(json.dumps({FOLDED_NAMES: {"digest": folding_digest(), "rows": [""] * len(made)}}))
    emptied = parse_jsonl(run("link", "--index", directory, "--top-k", 3, input=jsonl(MENTIONS)).stdout)
    assert not any(candidate["matched_by"] == "exact" for record in emptied for candidate in record["candidates"])
    tables.write_text(original)


def test_the_summary_gives_start_up_apart(tfidf_index):
    result = run("link", "--index", tfidf_index, "seizures", "myopia")
    assert result.exit_code == 0, result.stderr
    summary = result.stderr.strip().splitlines()[-1]
    assert "linked 2 mentions in " in summary and "; start-up " in summary
    startup = float(summary.split("; start-up ")[1].split(" s")[0])
    assert 0 < startup < 3600
