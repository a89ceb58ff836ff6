"""The Python API (ontolink.api, on the package's face): docs/python.md runs as written, and each function
returns what its command writes for the same input."""

import doctest
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import parse_jsonl, run

import ontolink

DOCS = Path(__file__).resolve().parent.parent / "docs" / "python.md"


@pytest.mark.slow
def test_the_python_page_runs_as_written(tmp_path, monkeypatch):
    """Its examples build the embedded HPO's default index and link, annotate and score with it."""
    monkeypatch.chdir(tmp_path)
    result = doctest.testfile(str(DOCS), module_relative=False, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 10 and result.failed == 0, result


def test_index_link_returns_what_link_writes(dense_index):
    phrases = ["seizures", "absence seizures", "eye anomaly"]
    written = parse_jsonl(run("link", "--index", str(dense_index), "--top-k", "3", *phrases).stdout)
    assert ontolink.load_index(dense_index).link(phrases, top_k=3) == written
    records = [{"id": "a", "mention": "fits", "context_left": "The boy had ", "extra": [1, 2]}]
    linked = ontolink.load_index(dense_index).link(records)
    assert linked[0]["extra"] == [1, 2] and len(linked[0]["candidates"]) == 10  # link's default depth
    assert linked == parse_jsonl(run("link", "--index", str(dense_index), input=json.dumps(records[0]) + "\n").stdout)


def test_annotate_returns_what_annotate_writes(small_ontology_path, tmp_path):
    texts = ["The boy had absence seizures and a coloboma.", "No finding."]
    documents = tmp_path / "docs.txt"
    documents.write_text("".join(f"{number}\t{text}\n" for number, text in enumerate(texts, 1)), encoding="utf-8")
    written = parse_jsonl(run("annotate", "--ontology", str(small_ontology_path), "-i", str(documents)).stdout)
    found = ontolink.annotate(texts, small_ontology_path)
    assert found == written and {"absence seizures", "coloboma"} <= {mention["mention"] for mention in found}


def test_evaluate_reports_what_eval_prints(dense_index, small_ontology_path, tmp_path):
    linked = tmp_path / "linked.jsonl"
    records = ontolink.load_index(dense_index).link([{"id": "m1", "mention": "fits", "gold": ["HP:0001250"]}])
    linked.write_text(json.dumps(records[0]) + "\n", encoding="utf-8")
    printed = run("eval", str(linked), "--ontology", str(small_ontology_path), "--format", "markdown").stdout
    assert ontolink.evaluate([linked], ontology=small_ontology_path).render("markdown").strip() == printed.strip()


def test_a_bad_mention_is_refused_as_link_refuses_it(dense_index):
    with pytest.raises(ValueError, match="mention"):
        ontolink.load_index(dense_index).link([{"id": "x"}])


def test_import_ontolink_loads_no_library_module():
    code = ("import sys, ontolink; print(ontolink.__version__, sorted(m for m in sys.modules if m.startswith('ontolink')),"
            " 'numpy' in sys.modules)")
    printed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert printed.split(" ", 1)[1].strip() == "['ontolink', 'ontolink.version'] False"
    assert "Index" in dir(ontolink) and callable(ontolink.load_index)
    with pytest.raises(AttributeError):
        ontolink.no_such_function


def test_train_ranker_writes_what_train_ranker_writes(tfidf_index, tmp_path):
    manifest = ontolink.train_ranker(tfidf_index, tmp_path / "api", synonym_queries=60, groups="dense,lexical",
                                     holdout_share=0)
    assert run("train", "ranker", "--index", str(tfidf_index), "--synonym-queries", "60", "--features",
               "dense,lexical", "--holdout-share", "0", str(tmp_path / "cli")).exit_code == 0
    written = json.loads((tmp_path / "cli" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["weights"] == written["weights"] and manifest["features"] == written["features"]
    linked = ontolink.load_index(tfidf_index).link(["seizures"], ranker=tmp_path / "api")
    assert linked[0]["candidates"][0]["retriever_score"] is not None
