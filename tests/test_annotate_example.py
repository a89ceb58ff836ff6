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


def test_the_annotate_example_takes_an_alias_file_for_annotate_and_its_index(tmp_path):
    abstracts = tmp_path / "abstracts.txt"
    abstracts.write_text("a1\tOcular manifestations and seizures were noted.\n", encoding="utf-8")
    aliases = tmp_path / "kept.jsonl"
    aliases.write_text('{"id": "HP:0000478", "aliases": ["ocular manifestations"]}\n', encoding="utf-8")
    environment = dict(os.environ, ONTOLINK_INDEX=str(tmp_path / "idx"),
                       PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    result = subprocess.run(["bash", str(EXAMPLE), str(abstracts), str(aliases)], capture_output=True, text=True,
                            env=environment)
    assert result.returncode == 0, result.stderr
    rows = {tuple(line.split("\t")) for line in result.stdout.splitlines()}
    assert rows == {("a1", "Ocular manifestations", "HP:0000478", "Abnormality of the eye"),
                    ("a1", "seizures", "HP:0001250", "Seizure")}
    built = [path.name for path in tmp_path.iterdir() if path.name.startswith("idx-aliases-")]
    assert len(built) == 1 and not (tmp_path / "idx").exists()  # only the index with the aliases is built
    edited = aliases.read_text(encoding="utf-8") + '{"id": "HP:0001250", "aliases": ["fits"]}\n'
    aliases.write_text(edited, encoding="utf-8")
    again = subprocess.run(["bash", str(EXAMPLE), str(abstracts), str(aliases)], capture_output=True, text=True,
                           env=environment)
    assert again.returncode == 0, again.stderr
    assert len([path for path in tmp_path.iterdir() if path.name.startswith("idx-aliases-")]) == 2
