"""Optional extras: the core install indexes, links and evaluates without them, and a command that
needs a missing one exits 1 with one line naming the extra. A module is made missing for real: a
sitecustomize on PYTHONPATH puts a meta-path finder in front that refuses to import it."""

import json
import os
import subprocess
import sys

import pytest

from ontolink.core.extras import EXTRA_OF_MODULE, MissingExtra, missing_extra, require

BLOCKER = '''
import os, sys

BLOCKED = set(os.environ.get("ONTOLINK_TEST_BLOCKED", "").split(","))


class Blocker:
    """Refuses the blocked top-level modules, as an environment without them would."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Blocker())
'''
OPTIONAL = ",".join(sorted(set(EXTRA_OF_MODULE) - {"faiss"}))  # all but FAISS ([cpu])


@pytest.fixture
def without(tmp_path):
    """Run ``python -m ontolink ARGS`` with the named modules missing; (exit code, stdout, stderr)."""
    (tmp_path / "blocker").mkdir()
    (tmp_path / "blocker" / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")

    def run(blocked, *args, input=None):
        env = {key: value for key, value in os.environ.items()
               if key not in ("PYTEST_CURRENT_TEST", "ONTOLINK_TRACEBACK")}  # the CLI's own error handling
        env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "blocker")] + ([os.environ["PYTHONPATH"]]
                                                                          if os.environ.get("PYTHONPATH") else []))
        env["ONTOLINK_TEST_BLOCKED"] = blocked
        env["ONTOLINK_CACHE_DIR"] = str(tmp_path / "cache")  # nothing converted before: the GGUF reader is needed
        done = subprocess.run([sys.executable, "-m", "ontolink", *map(str, args)], input=input, env=env,
                              capture_output=True, text=True, cwd=tmp_path, timeout=300)
        return done.returncode, done.stdout, done.stderr

    return run


def test_the_blocker_really_blocks(without):
    code, _, stderr = without("pykeen", "embed-kg", "emb", "-i", "-", "--method", "transe", "--epochs", "1",
                              input="a\tr\tb\nb\tr\tc\n")
    assert code == 1
    lines = stderr.strip().splitlines()
    assert lines[-1].startswith("ontolink: error:") and "pip install 'ontolink[kg]'" in lines[-1]
    assert "pykeen" in lines[-1] and "Traceback" not in stderr


def test_rdf2vec_without_gensim_names_the_kg_extra(without):
    code, _, stderr = without("gensim", "embed-kg", "emb", "-i", "-", "--method", "rdf2vec", "--epochs", "1",
                              input="a\tr\tb\nb\tr\tc\n")
    assert code == 1 and "ontolink[kg]" in stderr and "Traceback" not in stderr


def test_gen_aliases_without_gguf_names_the_llm_extra(without, small_ontology_path):
    record = {"id": "HP:0001250", "name": "Seizure", "definition": "A seizure is an intermittent abnormality."}
    code, _, stderr = without("gguf", "gen-aliases", "--ontology", small_ontology_path,
                              input=json.dumps(record) + "\n")
    assert code == 1 and "ontolink[llm]" in stderr and "gguf" in stderr and "Traceback" not in stderr, stderr


def test_core_install_indexes_links_and_evaluates_without_the_extras(without, small_ontology_path, tmp_path):
    code, _, stderr = without(OPTIONAL, "index", "--ontology", small_ontology_path, "--method", "tfidf",
                              tmp_path / "idx")
    assert code == 0, stderr
    mention = {"id": "m1", "mention": "seizures", "gold": ["HP:0001250"]}
    code, linked, stderr = without(OPTIONAL, "link", "--index", tmp_path / "idx", input=json.dumps(mention) + "\n")
    assert code == 0, stderr
    assert json.loads(linked)["candidates"][0]["id"] == "HP:0001250"
    (tmp_path / "linked.jsonl").write_text(linked, encoding="utf-8")
    code, report, stderr = without(OPTIONAL, "eval", tmp_path / "linked.jsonl", "--format", "json")
    assert code == 0, stderr
    recall = json.loads(report)["metrics"]["all"]["R@1"]
    assert (recall["mean"] if isinstance(recall, dict) else recall) == 1.0


def test_the_rankers_word_features_need_no_extra(tmp_path):
    """The overlap group's stems and stop words come from the core install (snowballstemmer, scikit-learn)."""
    (tmp_path / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    env = dict(os.environ, ONTOLINK_TEST_BLOCKED=OPTIONAL,
               PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    script = ("from ontolink.ranking.words import ContentWords\n"
              "print(sorted(ContentWords()('Tumors of the kidney, pathological')))\n"
              "import gensim\n")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout == "['kidnei', 'patholog', 'tumor']\n", done.stderr
    assert "No module named 'gensim'" in done.stderr  # the blocker was in place


def test_missing_extra_maps_modules_to_extras():
    assert missing_extra(ModuleNotFoundError("No module named 'pykeen.models'", name="pykeen.models")).extra == "kg"
    assert missing_extra(ModuleNotFoundError("No module named 'numpy'", name="numpy")) is None
    assert "ontolink[cpu] (or ontolink[gpu]" in str(MissingExtra("faiss", "cpu"))
    require("json", "numpy")  # present: nothing happens (absent: see the gen-aliases test above)
