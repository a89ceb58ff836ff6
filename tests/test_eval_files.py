"""ontolink.evaluation.files: eval's choice of file kind, Ks and report, called as a library."""

import json

import pytest

from ontolink.core.errors import InputError
from ontolink.evaluation.files import default_ks, evaluate_files, parse_ks


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return str(path)


def test_linked_mentions_get_the_linking_metrics_and_ks(tmp_path):
    linked = write_jsonl(tmp_path / "linked.jsonl", [
        {"id": "m1", "mention": "a", "gold": ["X:1"], "candidates": [{"id": "X:1", "score": 0.9}]},
        {"id": "m2", "mention": "b", "gold": ["X:2"], "candidates": [{"id": "X:1", "score": 0.9},
                                                                      {"id": "X:2", "score": 0.5}]}])
    report = json.loads(evaluate_files([linked]))
    metrics = report["metrics"]["all"]
    assert metrics["R@1"] == 0.5 and metrics["R@2"] == 1.0 and "R@5" not in metrics  # K up to 2 candidates
    assert "MRR" in metrics and "Hits@10" not in metrics
    assert set(json.loads(evaluate_files([linked], ks="2"))["metrics"]["all"]) >= {"R@2"}


def test_retrieved_records_are_recognised_by_their_first_record(tmp_path):
    retrieved = write_jsonl(tmp_path / "fold-1.jsonl", [
        {"pair_id": f"p{n}", "direction": direction, "predicate": "treats", "rank": rank, "candidates": []}
        for n, rank in enumerate((1, 3)) for direction in ("d2t", "t2d")])
    report = json.loads(evaluate_files([retrieved]))
    assert report["metrics"]["d2t"]["MRR"] == pytest.approx((1 + 1 / 3) / 2)
    assert report["metrics"]["d2t"]["Hits@10"] == 1.0 and "Hits@64" not in report["metrics"]["d2t"]


def test_ks_are_checked():
    assert parse_ks(None) is None and parse_ks(None, retrieved=True) == (1, 10)
    assert default_ks(10) == (1, 5, 10) and default_ks(64) == default_ks(200) == (1, 5, 32, 64) and default_ks(1) == (1,)
    assert parse_ks("64, 1,5,1") == (1, 5, 64)
    for bad in ("1,x", "0,5", ","):
        with pytest.raises(InputError, match="--ks"):
            parse_ks(bad)


def test_eval_files_takes_the_options_object(tmp_path):
    """eval's library function, as a Python caller calls it: GSC+ mentions with their gold id at rank 1 (even
    lines) or rank 2 (odd lines), scored against HPO; the report and the misses go to files."""
    from conftest import shared_path
    from ontolink.core.errors import UsageError
    from ontolink.core.io import read_records
    from ontolink.evaluation.run import eval_files
    from ontolink.evaluation.options import EvalOptions
    from ontolink.ontology import OntologySource

    mentions = [record for _, record in zip(range(20), read_records(str(shared_path("gscplus", "mentions.jsonl"))))]
    other = "HP:0001250"  # Seizure, gold of none of the first 20
    assert all(other not in mention["gold"] for mention in mentions)
    linked = write_jsonl(tmp_path / "linked.jsonl", [
        {**mention, "candidates": [{"id": candidate, "score": score} for candidate, score in
                                   zip([mention["gold"][0], other][::1 if n % 2 == 0 else -1], (0.9, 0.5))]}
        for n, mention in enumerate(mentions)])
    options = EvalOptions(predictions=(linked,), ontology=OntologySource("hpo"), fmt="json",
                          output_path=str(tmp_path / "report.json"), errors_path=str(tmp_path / "misses.jsonl"))
    evaluation = eval_files(options)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["metrics"]["all"]["R@1"] == 0.5 and report["metrics"]["all"]["R@2"] == 1.0
    misses = [json.loads(line) for line in (tmp_path / "misses.jsonl").read_text().splitlines()]
    assert [miss["mention"] for miss in misses] == [mention["mention"] for mention in mentions[1::2]]
    assert evaluation.render("json", None) == (tmp_path / "report.json").read_text().rstrip("\n")
    with pytest.raises(UsageError, match="one per file") as raised:
        eval_files(EvalOptions(predictions=(linked,), labels=("a", "b")))
    assert raised.value.option == "--label"
