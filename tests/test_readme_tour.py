"""The README's first command and its tour run as written from a fresh clone: every file a tour command reads is in
the repository (examples/sample/, written for the tour) or written by a command before it, and the commands run, in
order, in an empty folder holding only the repository's examples/. The fast test stands a TF-IDF index in for the
dense `idx/hpo` (a 40,508-name encoding); the slow one builds it as written. Commands that load a model from the
hub are left out (no hub here)."""

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
READS = {"-i", "--input", "--ontology", "--index", "--mentions", "--pairs", "<"}
WRITES = {"-o", "--output", ">"}
DENSE_HPO = ["ontolink", "index", "--ontology", "hpo", "idx/hpo"]


def first_command():
    """The ontolink steps of the README's first command (after the venv and pip steps)."""
    line = next(line.strip() for line in README.splitlines() if line.startswith("    python3 -m venv"))
    return [part for part in line.split(" && ") if part.startswith("ontolink ")]


def tour():
    section = README.split("## A 5-minute tour", 1)[1].split("\n## ", 1)[0]
    return [line.strip() for line in section.splitlines() if line.startswith("    ontolink ")]


def from_the_hub(command):
    words = shlex.split(command, comments=True)
    return "--model" in words and "/" in words[words.index("--model") + 1] \
        and not (REPO / words[words.index("--model") + 1]).exists()


def test_every_file_the_tour_reads_is_shipped_or_written_before():
    written, missing = set(), []
    for command in first_command() + tour():
        for part in command.split(" | "):
            words = shlex.split(part, comments=True)
            for flag, value in zip(words, words[1:]):
                if flag in READS and value != "hpo" and value not in written and not (REPO / value).exists():
                    missing.append(f"{value} ({command})")
            written.update(value for flag, value in zip(words, words[1:]) if flag in WRITES)
            if words[:2] == ["ontolink", "eval"]:
                missing += [f"{word} ({command})" for word in words[2:]
                            if word.endswith((".jsonl", ".gz")) and word not in written]
            if words[:2] == ["ontolink", "index"]:
                written.add(words[-1])  # its DIRECTORY
    assert not missing, "README tour commands read files no one ships or writes: " + ", ".join(missing)
    assert (REPO / "examples/sample/mentions.jsonl").exists() and (REPO / "examples/sample/abstracts.txt").exists()


def _run_tour(tmp_path, commands):
    (tmp_path / "examples").symlink_to(REPO / "examples", target_is_directory=True)
    environment = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    environment["PYTHONPATH"] = os.pathsep.join([str(REPO / "toolbox"), os.environ.get("PYTHONPATH", "")])
    outputs = {}
    for command in commands:
        started = time.perf_counter()
        result = subprocess.run(["bash", "-c", f"set -o pipefail; {command}"], cwd=tmp_path, capture_output=True,
                                text=True, env=environment, timeout=1200)
        print(f"{time.perf_counter() - started:.1f} s: {command}")
        # `| head -3` may close the pipe before link ends: 141, as documented, without a message
        allowed = (0, 141) if "| head" in command else (0,)
        assert result.returncode in allowed, f"{command}: exit {result.returncode}\n{result.stderr[-2000:]}"
        assert "error" not in result.stderr.lower() and "Traceback" not in result.stderr, (command, result.stderr)
        outputs[command] = result.stdout
    return outputs


def _check(tmp_path, outputs):
    tsv = outputs[first_command()[-1]].splitlines()
    assert tsv[0].startswith("mention_id\tmention\trank\tid\tname") and len(tsv) == 1 + 3 * 3
    assert {"seizures\t1\tHP:0001250", "short stature\t1\tHP:0004322", "enlarged liver\t1\tHP:0002240"} \
        <= {"\t".join(row.split("\t")[1:4]) for row in tsv[1:]}
    mentions = [json.loads(line) for line in (REPO / "examples/sample/mentions.jsonl").read_text().splitlines()]
    linked = [json.loads(line) for line in (tmp_path / "tfidf.jsonl").read_text().splitlines()]
    assert [record["id"] for record in linked] == [record["id"] for record in mentions] and len(linked) == 14
    hits = sum(record["candidates"][0]["id"] in record["gold"] for record in linked)
    assert hits >= len(linked) // 2, hits  # the sample reads like real case reports: most are linked right
    annotated = outputs[next(command for command in tour() if command.startswith("ontolink annotate"))]
    found = {(json.loads(line)["mention"], json.loads(line)["candidates"][0]["id"]) for line in annotated.splitlines()}
    assert {("cataracts", "HP:0000518"), ("cleft palate", "HP:0000175")} <= found, found


def test_the_tour_runs_as_written_with_a_tfidf_stand_in(tmp_path):
    commands = [command for command in first_command() + tour() if not from_the_hub(command)]
    commands = [command for command in commands
                if [word for word in shlex.split(command, comments=True) if word != "-q"] != DENSE_HPO]
    assert len(commands) >= 10, commands
    tfidf = next(command for command in commands if "--method tfidf" in command)
    commands.remove(tfidf)
    (tmp_path / "idx").mkdir()
    (tmp_path / "idx" / "hpo").symlink_to("tfidf")  # the index every later command names, built by the tour's own line
    _check(tmp_path, _run_tour(tmp_path, [tfidf, *commands]))


@pytest.mark.slow
def test_the_tour_runs_as_written(tmp_path):
    _check(tmp_path, _run_tour(tmp_path, [command for command in first_command() + tour()
                                          if not from_the_hub(command)]))
