"""examples/annotate-abstracts.sh: raw abstracts to (document, span, id, name) lines, as a user runs it."""

import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "annotate-abstracts.sh"


def test_the_annotate_example_finds_phenotypes_in_raw_text(tmp_path):
    index = tmp_path / "idx"
    built = subprocess.run([sys.executable, "-m", "ontolink", "index", "--ontology", "hpo", "--method", "tfidf",
                            str(index)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    abstracts = tmp_path / "abstracts.txt"
    abstracts.write_text("a1\tThe boy had seizures, short stature and an enlarged liver.\n"
                         "a2\tKidney anomalies and palmar and plantar pits were noted.\n", encoding="utf-8")
    environment = dict(os.environ, ONTOLINK_INDEX=str(index),
                       PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    result = subprocess.run(["bash", str(EXAMPLE), str(abstracts)], capture_output=True, text=True, env=environment)
    assert result.returncode == 0, result.stderr
    rows = {tuple(line.split("\t")[:3]) for line in result.stdout.splitlines()}
    assert {("a1", "seizures", "HP:0001250"), ("a1", "short stature", "HP:0004322"),
            ("a1", "enlarged liver", "HP:0002240"), ("a2", "Kidney anomalies", "HP:0000077"),
            ("a2", "palmar and plantar pits", "HP:0010610"), ("a2", "plantar pits", "HP:0010612")} <= rows
    piped = subprocess.run(["bash", str(EXAMPLE)], input="She had seizures.\n", capture_output=True, text=True,
                           env=environment)
    assert piped.returncode == 0 and "\tseizures\tHP:0001250\tSeizure" in piped.stdout
