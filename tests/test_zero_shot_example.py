"""examples/zero-shot-hpo/Makefile, one seed of one setting on a slice: raw files to a results table."""

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, shared_path
from ontolink.ontology import load_ontology
from ontolink.evaluation.evaluate import file_metrics, score_file
from ontolink.indexes.artifact import load_index
from ontolink.linking.link import link_mentions

EXAMPLE = REPO / "examples" / "zero-shot-hpo"


def candidate_sets(path):
    with gzip.open(path, "rt") as handle:
        return [sorted(candidate["id"] for candidate in json.loads(line)["candidates"]) for line in handle]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
def test_makefile_runs_one_setting_on_a_slice(small_ontology_path, dense_index, tmp_path):
    kept = {json.loads(line)["id"] for line in small_ontology_path.read_text().splitlines()}
    # A slice of the real corpora: 150 NCBI-disease mentions and the GSC+ mentions whose gold lies in the
    # HPO slice (they are the test set, and, stripped of their labels, part of the unlabeled corpus).
    shared = tmp_path / "shared"
    (shared / "ncbi_disease").mkdir(parents=True)
    (shared / "gscplus").mkdir()
    ncbi = shared_path("ncbi_disease", "unlabeled_mentions.jsonl").read_text().splitlines(keepends=True)
    (shared / "ncbi_disease" / "unlabeled_mentions.jsonl").write_text("".join(ncbi[:150]))
    gold = [line for line in shared_path("gscplus", "mentions.jsonl").read_text().splitlines(keepends=True)
            if set(json.loads(line)["gold"]) & kept]
    assert len(gold) >= 10
    (shared / "gscplus" / "mentions.jsonl").write_text("".join(gold[:40]))

    out = tmp_path / "out"
    ontolink = Path(sys.executable).parent / "ontolink"
    variables = [f"ONTOLINK={ontolink}", f"SHARED={shared}", f"ONTOLOGY={small_ontology_path}", f"OUT={out}",
                 "SETTINGS=synonym", "NEGATIVES=rm-pcs", "SEEDS=0", "RERANK=synonym__rm-pcs", "DEVICE=cpu",
                 # --force: a slice this small may be too few pairs to learn from, which is not what is checked
                 "TRAIN_OPTIONS=--epochs 1 --batch-size 8 --max-length 32 --device cpu --force",
                 "RERANK_OPTIONS=--epochs 1 --batch-size 4 --max-length 48 --top-k 8 --negatives 3 --device cpu --force",
                 "RES_READINGS=frozen",
                 "RES_OPTIONS=--epochs 2 --batch-size 4 --top-k 8 --select-width 32 --device cpu --force"]
    made = subprocess.run(["make", "-C", str(EXAMPLE), *variables], check=False, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr[-3000:]

    table = (out / "results.md").read_text().splitlines()
    rows = [line.strip("| ").split(" | ") for line in table[2:]]
    assert [tuple(row[:3]) for row in rows] == [
        ("retriever", "frozen", "-"), ("retriever", "synonym", "rm-pcs"), ("reranker", "synonym", "rm-pcs"),
        ("res-frozen", "synonym", "rm-pcs")]
    # each row is its eval file, and the frozen row is what the library gives with the same index settings
    scores = [json.loads((out / "scores" / stage / f"{name}.json").read_text())["metrics"]["all"]
              for stage, name in (("retriever", "frozen"), ("retriever", "synonym__rm-pcs"),
                                  ("reranker", "synonym__rm-pcs"), ("res-frozen", "synonym__rm-pcs"))]
    for row, metrics in zip(rows, scores):
        assert row[4:7] == [f"{metrics[key]:.3f}" for key in ("R@1", "R@64", "MRR")]  # one seed: plain values
    mentions = [json.loads(line) for line in gold[:40]]
    frozen = file_metrics(*score_file(link_mentions(mentions, load_index(dense_index, device="cpu"), top_k=64),
                                      ontology=load_ontology(small_ontology_path)))["all"]
    assert rows[0][4:7] == [f"{frozen[key]:.3f}" for key in ("R@1", "R@64", "MRR")]
    # the reranker reorders the retriever's candidates of each mention, never changes them
    run_name = "synonym__rm-pcs__0"
    for reranked in ("reranked", "reranked-res-frozen"):
        assert candidate_sets(out / reranked / f"{run_name}.jsonl.gz") == \
            candidate_sets(out / "linked" / f"{run_name}.jsonl.gz")
    assert rows[2][5] == rows[1][5] == rows[3][5]  # so R@64 is the retriever's
    trained_for = json.loads((out / "retriever" / run_name / "manifest.json").read_text())["seconds"]
    assert rows[1][-1] == f"{trained_for:.0f}"

    # incremental: everything is up to date now, so `make -q` has nothing to do
    again = subprocess.run(["make", "-q", "-C", str(EXAMPLE), *variables], check=False, capture_output=True, text=True)
    assert again.returncode == 0, again.stdout
