"""examples/zero-shot-hpo/Makefile, one seed of one setting on a slice: raw files to a results table."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, shared_path

EXAMPLE = REPO / "examples" / "zero-shot-hpo"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
def test_makefile_runs_one_setting_on_a_slice(small_ontology_path, tmp_path):
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
                 "TRAIN_OPTIONS=--epochs 1 --batch-size 8 --max-length 32 --device cpu",
                 "RERANK_OPTIONS=--epochs 1 --batch-size 4 --max-length 48 --top-k 8 --negatives 3 --device cpu"]
    made = subprocess.run(["make", "-C", str(EXAMPLE), *variables], check=False, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr[-3000:]

    table = (out / "results.md").read_text().splitlines()
    rows = [line.split(" | ") for line in table[2:]]
    assert [(row[0], row[1], row[2]) for row in rows] == [
        ("| retriever", "frozen", "-"), ("| retriever", "synonym", "rm-pcs"), ("| reranker", "synonym", "rm-pcs")]
    for row in rows:
        recall_at_1, recall_at_64, mrr = map(float, row[4:7])
        assert 0 <= recall_at_1 <= recall_at_64 <= 1 and 0 < mrr <= 1
    assert float(rows[1][-1].rstrip(" |")) > 0  # training seconds, from the retriever's manifest
    scores = json.loads((out / "scores" / "retriever" / "synonym__rm-pcs.json").read_text())
    assert scores["metrics"]["all"]["R@64"]["mean"] > 0.5  # the slice's ontology is small: most golds come back

    # incremental: everything is up to date now, so `make -q` has nothing to do
    again = subprocess.run(["make", "-q", "-C", str(EXAMPLE), *variables], check=False, capture_output=True, text=True)
    assert again.returncode == 0, again.stdout
