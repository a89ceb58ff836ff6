"""A hostile user's third round, one test each (each failed before its fix): an output option naming another
command input or another output, outputs through /dev/stdout on a pipe, a BioC JSON file nested past any parser's
stack, an artifact directory that cannot be written."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import jsonl, run

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "toolbox"
# linked mentions: `make-pairs --mentions` reads them as mentions, `eval` as predictions
MENTIONS = [{"id": f"m{number}", "mention": mention, "gold": ["HP:0001250"],
             "candidates": [{"id": "HP:0001250", "score": 1.0}]}
            for number, mention in enumerate(["seizure", "seizures", "fits", "fever"], 1)]
ENTITIES = [{"id": "X:1", "name": "alpha"}, {"id": "X:2", "name": "beta"}]


def _child(*args, stdin=None, stdout=subprocess.PIPE):
    environment = {**os.environ, "PYTHONPATH": str(PACKAGE_DIR)}
    return subprocess.run([sys.executable, "-m", "ontolink", *map(str, args)], stdin=stdin, stdout=stdout,
                          stderr=subprocess.PIPE, env=environment, timeout=120)


def test_make_pairs_ambiguous_naming_its_mentions_is_refused_and_keeps_them(small_ontology_path, tmp_path):
    """--ambiguous was opened before --mentions was read: the mentions were replaced by the (empty) ambiguous
    output and the command said exit 0."""
    mentions = tmp_path / "mentions.jsonl"
    mentions.write_text(jsonl(MENTIONS))
    before = mentions.read_bytes()
    result = run("make-pairs", "--ontology", small_ontology_path, "--sources", "name,synonym", "-i", os.devnull,
                 "--mentions", mentions, "--ambiguous", mentions)
    assert result.exit_code == 2 and f"{mentions}: is also the input {mentions}" in result.stderr
    assert mentions.read_bytes() == before


@pytest.mark.parametrize("command", [
    ("make-pairs", "--sources", "name", "-i", os.devnull, "--mentions", "{mentions}", "--ambiguous", "{out}"),
    ("eval", "{mentions}", "--errors", "{out}"),
])
def test_one_file_for_two_outputs_is_refused_before_any_work(small_ontology_path, tmp_path, command):
    """`-o out --ambiguous out` wrote the pairs then failed naming a missing file; `eval -o out --errors out` let
    the report replace the misses, exit 0."""
    mentions = tmp_path / "mentions.jsonl"
    mentions.write_text(jsonl(MENTIONS))
    out = tmp_path / "out.jsonl"
    arguments = [part.format(mentions=mentions, out=out) for part in command]
    for same in (out, f"{tmp_path}/./out.jsonl"):
        result = run(*arguments, "--ontology", small_ontology_path, "-o", same)
        assert result.exit_code == 2 and "is given to both -o and" in result.stderr, result.output
        assert not out.exists()
    assert run(*arguments, "--ontology", small_ontology_path, "-o", os.devnull).exit_code == 0  # a device: fine


def test_output_to_dev_stdout_on_a_pipe_is_written(small_ontology_path, tmp_path):
    """-o /dev/stdout (or /dev/fd/N) on a pipe resolved to "/proc/PID/fd/pipe:[N]", a name that cannot be opened:
    exit 2, "No such file or directory", nothing written."""
    mentions = tmp_path / "mentions.jsonl"
    mentions.write_text(jsonl(MENTIONS))
    result = _child("eval", mentions, "--ontology", small_ontology_path, "--format", "json", "-o", "/dev/stdout")
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.startswith(b"{")
    with open(tmp_path / "report.json", "wb") as file:  # a regular file on stdout: written beside it and renamed
        assert _child("eval", mentions, "--ontology", small_ontology_path, "--format", "json", "-o", "/dev/stdout",
                      stdout=file).returncode == 0
    assert (tmp_path / "report.json").read_bytes().startswith(b"{")


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000,
                                  '{"documents": ' + "[" * 3000 + "]" * 3000 + "}"])
def test_bioc_json_nested_past_the_stack_is_one_line_naming_the_file(tmp_path, text):
    """The BioC JSON reader used the standard library's parser, whose RecursionError came out as exit 1 naming no
    file."""
    path = tmp_path / "deep.json"
    path.write_text(text + "\n")
    result = run("convert", "-i", path, "--from", "bioc-json")
    assert result.exit_code == 2 and f"{path}: not valid JSON: nested deeper than 1024 levels" in result.stderr


@pytest.mark.skipif(os.geteuid() != 0 and not os.path.isdir("/proc/self"), reason="needs /proc")
def test_an_artifact_directory_that_cannot_be_made_is_one_line_naming_it(tmp_path):
    """`index ... /proc/x/idx` (a place no one can write, root included) ended with exit 1 and a PermissionError
    or FileNotFoundError naming a temporary directory; now exit 2 naming the directory asked for, before the work."""
    ontology = tmp_path / "entities.jsonl"
    ontology.write_text(jsonl(ENTITIES))
    for target in ("/proc/self/idx", f"/proc/{os.getpid()}/missing/idx"):
        result = run("index", "--ontology", ontology, "--method", "tfidf", target)
        assert result.exit_code == 2 and f"{target}: cannot be written" in result.stderr, result.output
        assert "Error" not in result.stderr.split(":", 2)[-1]


def test_refusals_of_a_record_name_its_file_and_line(small_ontology_path, tmp_path):
    """A mention without gold in `eval`, an alias record of an unknown entity in `make-pairs` and `filter`: the
    message named the file but no line."""
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text(jsonl([MENTIONS[0], {**MENTIONS[1], "gold": None}]))
    result = run("eval", predictions)
    assert result.exit_code == 2 and f"{predictions}:2: mention 'm2' has no gold ids" in result.stderr
    aliases = tmp_path / "aliases.jsonl"
    aliases.write_text(jsonl([{"id": "HP:0001250", "aliases": ["fits"]}, {"id": "XX:1", "aliases": ["a"]}]))
    mentions = tmp_path / "mentions.jsonl"
    mentions.write_text(jsonl(MENTIONS))
    for command in (("make-pairs", "--sources", "alias", "--mentions", mentions), ("filter",)):
        result = run(*command, "--ontology", small_ontology_path, "-i", aliases)
        assert result.exit_code == 2 and f"{aliases}:2: entity 'XX:1' is not in the ontology" in result.stderr


def test_convert_back_names_the_line_of_a_mention_outside_its_document(tmp_path):
    documents = tmp_path / "docs.pubtator"
    documents.write_text("1|t|Seizures in a child.\n1|a|She had fever.\n1\t0\t8\tSeizures\tDisease\tD012640\n\n")
    linked = tmp_path / "linked.jsonl"
    record = {"id": "1:0-8", "doc_id": "1", "start": 0, "end": 8, "mention": "Seizures",
              "candidates": [{"id": "D012640", "score": 1.0}]}
    linked.write_text(jsonl([record, {**record, "id": "1:500-508", "start": 500, "end": 508}]))
    result = run("convert", "-i", linked, "--to", "pubtator", "--documents", documents, "-o", tmp_path / "out.txt")
    assert result.exit_code == 2 and f"{linked}:2: mention '1:500-508': start/end 500-508" in result.stderr


def test_select_entities_and_eval_say_a_duplicate_id(small_ontology_path, tmp_path):
    """Every reader of ids says the first duplicate on stderr (the bad-input contract); these two were silent,
    and `eval --gold` let the last of two gold records win."""
    duplicated = tmp_path / "duplicated.jsonl"
    duplicated.write_text(jsonl([MENTIONS[0], {**MENTIONS[1], "id": "m1"}]))
    said = "duplicated.jsonl:2: duplicate id 'm1' (first at line 1)"
    assert said in run("select-entities", "--ontology", small_ontology_path, "-i", duplicated).stderr
    assert said in run("eval", duplicated).stderr
    assert said in run("eval", duplicated, "--gold", duplicated).stderr


def test_an_index_whose_vectors_are_garbled_is_refused_naming_the_file(dense_index, tmp_path):
    """Bytes garbled inside the stored vectors pass FAISS's structural checks: `link` ran, printed numpy's
    warnings with their source lines, and wrote other candidates, exit 0."""
    import shutil

    import numpy as np

    from ontolink.indexes.flat_search import Int8NameScan

    damaged = tmp_path / "damaged"
    shutil.copytree(dense_index, damaged)
    with open(damaged / "index.faiss", "r+b") as handle:
        handle.seek(1000)
        handle.write(b"\xff" * 4096)  # NaN floats
    mentions = tmp_path / "mentions.jsonl"
    mentions.write_text(jsonl(MENTIONS))
    result = run("link", "--index", damaged, "-i", mentions)
    assert result.exit_code == 2 and result.stdout == ""
    assert f"{damaged / 'index.faiss'}: holds vectors that are not finite numbers" in result.stderr
    matrix = np.ones((4, 8), dtype=np.float32)
    matrix[2, 3] = np.nan
    with pytest.raises(ValueError, match="not finite"):  # the large index's int8 scan checks them too
        Int8NameScan(matrix)


def test_a_repeated_document_id_is_said_once(small_ontology_path, tmp_path):
    """Two documents with one id gave mentions with repeated ids, silently (`convert`, `annotate`)."""
    pubtator = tmp_path / "dup.pubtator"
    document = "123|t|Seizures in a child.\n123|a|Fever.\n123\t0\t8\tSeizures\tDisease\tD012640\n\n"
    pubtator.write_text(document * 3)
    result = run("convert", "-i", pubtator)
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 3
    assert result.stderr.count("duplicate document id") == 1
    assert f"{pubtator}:5: duplicate document id '123' (document 2, first as document 1)" in result.stderr
    text = tmp_path / "docs.txt"
    text.write_text("d1\tThe boy had seizures.\nd1\tThe boy had seizures.\n")
    result = run("annotate", "--ontology", small_ontology_path, "-i", text)
    assert result.exit_code == 0 and "duplicate document id 'd1' (document 2" in result.stderr


def test_messages_name_what_is_wrong_with_a_field(tmp_path):
    ontology = tmp_path / "blank.jsonl"
    ontology.write_text(jsonl([{"id": "X:1", "name": " "}]))
    result = run("index", "--ontology", ontology, "--method", "tfidf", tmp_path / "idx")
    assert result.exit_code == 2 and "field 'name' is empty" in result.stderr  # was: "... not a string"
    mentions = tmp_path / "mentions.jsonl"
    mentions.write_text(jsonl([{"id": "m1", "mention": "x", "gold": ["X:1", 5]}]))
    good = tmp_path / "good.jsonl"
    good.write_text(jsonl(ENTITIES))
    result = run("select-entities", "--ontology", good, "-i", mentions)
    assert result.exit_code == 2 and "field 'gold' must be a list of strings, holds 5" in result.stderr


def test_train_ranker_says_pairs_of_entities_the_index_lacks(tfidf_index, tmp_path):
    """A pair whose entity_id the index does not hold was dropped silently (visible only as one pair fewer)."""
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(jsonl([{"id": "p1", "mention": "seizures", "entity_id": "HP:0001250"},
                            {"id": "p2", "mention": "nothing", "entity_id": "XX:999"}]))
    result = run("train", "ranker", "--index", tfidf_index, "--pairs", pairs, "--synonym-queries", 0, "--force",
                 tmp_path / "ranker")
    assert "1 of 2 pairs name an entity the index does not hold (e.g. 'XX:999'): skipped" in result.stderr


def test_an_index_replaced_while_it_is_read_is_read_again(small_ontology_path, tmp_path, monkeypatch):
    """`link` reading an index that `index` swapped in meanwhile found the old and new files at odds and said
    "rebuild it" (exit 2) of a good index. The swap is made here, deterministically, in the middle of a read."""
    from ontolink.core import swap
    from ontolink.indexes import artifact
    from ontolink.indexes.build import build_index
    from ontolink.ontology import load_ontology

    ontology = load_ontology(small_ontology_path)
    live, replacement = tmp_path / "live", tmp_path / "replacement"
    build_index(ontology, live, method="tfidf")
    fewer = tmp_path / "fewer.jsonl"
    fewer.write_text("".join(line + "\n" for line in small_ontology_path.read_text().splitlines()[:20]))
    build_index(load_ontology(fewer), replacement, method="tfidf")
    original_read_json, swapped, swaps = artifact.read_json, [], []

    def read_json_then_swap(path):
        value = original_read_json(path)
        if not swapped:  # names.json of the old index read: the new one is put in place before the vectors
            swapped.append(swap.replace(str(replacement), str(live), str(tmp_path / f"old-{len(swaps)}")))
            swaps.append(path)
        return value

    monkeypatch.setattr(artifact, "read_json", read_json_then_swap)
    loaded = artifact.load_index(live)
    assert swapped and len(loaded.entity_ids) == 20 == len(load_ontology(fewer))
    # a read spanning a swap that fails no check (an identical build, told apart by its manifest) is read again
    build_index(load_ontology(fewer), replacement, method="tfidf")  # what `live` holds now, built again
    manifest = json.loads((replacement / "manifest.json").read_text())
    (replacement / "manifest.json").write_text(json.dumps({**manifest, "created": "the new build"}))
    swapped.clear()
    loaded = artifact.load_index(live)
    assert swapped and loaded.manifest["created"] == "the new build"
    monkeypatch.setattr(artifact, "read_json", original_read_json)
    (live / "names.json").write_text("{}")  # damaged, not replaced: refused as before
    with pytest.raises(Exception, match="names.json"):
        artifact.load_index(live)


@pytest.mark.parametrize("checkpointed", [False, True])
def test_a_trainer_stopped_before_its_first_checkpoint_leaves_no_best_model(tmp_path, checkpointed):
    """SIGTERM during `train multivector`'s first epoch left OUTPUT.best (88 MB, the starting model) with no
    checkpoint beside it: nothing --resume could use. With a checkpoint it stays: a resume needs it."""
    import torch

    from ontolink.training.loop import Checkpoints, run_epochs

    checkpoints = Checkpoints(tmp_path / "model", "retriever", {"seed": 0})
    model = torch.nn.Linear(2, 1)
    checkpoints.save_best(0, lambda directory: (directory / "weights").write_bytes(b"start"))
    if checkpointed:
        checkpoints.path.mkdir()

    def interrupted(indices, rng):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_epochs(model, torch.optim.SGD(model.parameters(), lr=0.1), checkpoints, lambda directory: None,
                   interrupted, item_count=4, batch_size=2, epochs=1, seed=0)
    assert checkpoints.best_path.exists() == checkpointed


def test_sigterm_before_the_first_checkpoint_leaves_no_best_model(tmp_path):
    """The first fix caught exceptions only: SIGTERM's default action ended the process where it stood and left
    OUTPUT.best. A real SIGTERM, in a child process (were it not caught, it would end the test runner)."""
    script = tmp_path / "train.py"
    script.write_text(f"""
import os, signal, torch
from ontolink.training.loop import Checkpoints, run_epochs
checkpoints = Checkpoints({str(tmp_path / "model")!r}, "retriever", {{"seed": 0}})
checkpoints.save_best(0, lambda directory: (directory / "weights").write_bytes(b"start"))
model = torch.nn.Linear(2, 1)
def batch_loss(indices, rng):
    os.kill(os.getpid(), signal.SIGTERM)
    return model(torch.ones(len(indices), 2)).sum()
run_epochs(model, torch.optim.SGD(model.parameters(), lr=0.1), checkpoints, lambda directory: None, batch_loss,
           item_count=4, batch_size=2, epochs=1, seed=0)
""")
    environment = {**os.environ, "PYTHONPATH": str(PACKAGE_DIR)}
    result = subprocess.run([sys.executable, str(script)], capture_output=True, env=environment, timeout=120)
    assert result.returncode == 128 + signal.SIGTERM, result.stderr.decode()
    assert not (tmp_path / "model.best").exists() and not list(tmp_path.glob(".model*"))


def test_config_merges_stay_allowed_and_odd_keys_stay_yaml_errors(tfidf_index, tmp_path):
    """The duplicate-key check first refused every merge (`<<: *defaults`) and crashed on a list as a key."""
    mentions = tmp_path / "mentions.jsonl"
    mentions.write_text(jsonl(MENTIONS))
    merged = tmp_path / "merged.yaml"
    merged.write_text("select-entities: &c {top-k: 5}\nlink: {<<: *c, top-k: 2}\n")
    result = run("link", "--index", tfidf_index, "-i", mentions, "--config", merged)
    assert result.exit_code == 0, result.output
    assert {len(record["candidates"]) for record in map(json.loads, result.stdout.splitlines())} == {2}
    listed = tmp_path / "listed.yaml"
    listed.write_text("? [a, b]\n: 1\n")
    result = run("link", "--index", tfidf_index, "-i", mentions, "--config", listed)
    assert result.exit_code == 2 and "not valid YAML" in result.stderr


def test_stdout_redirected_to_the_file_another_output_names_is_refused(small_ontology_path, tmp_path):
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text(jsonl(MENTIONS))
    with open(tmp_path / "out.txt", "wb") as file:
        result = _child("eval", predictions, "--ontology", small_ontology_path, "-o", "-", "--errors",
                        "/dev/stdout", stdout=file)
    assert result.returncode == 2 and b"is given to both -o and --errors" in result.stderr
    with open(tmp_path / "both.txt", "wb") as file:  # "-" twice is one stream, written in turn
        assert _child("eval", predictions, "--ontology", small_ontology_path, "--format", "json", "-o", "-",
                      "--errors", "-", stdout=file).returncode == 0


@pytest.mark.parametrize("value, said", [("fp16", "fp16 trains on a CUDA device"), ("half", "unknown training precision")])
@pytest.mark.parametrize("trainer", ["retriever", "multivector"])
def test_a_training_precision_that_cannot_be_used_stops_the_trainer_at_once(small_ontology_path, tmp_path, monkeypatch,
                                                                            trainer, value, said):
    """ONTOLINK_TRAIN_PRECISION was read when the first epoch began, after the model was loaded and the pairs mined,
    and a bad value was exit 1 blaming a --precision option no command has."""
    from ontolink.ontology import load_ontology

    entities = list(load_ontology(small_ontology_path))[:40]
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(jsonl({"id": f"p{number}", "mention": entity.name, "entity_id": entity.id}
                           for number, entity in enumerate(entities)))
    monkeypatch.setenv("ONTOLINK_TRAIN_PRECISION", value)
    result = run("train", trainer, "--ontology", small_ontology_path, "-i", pairs, "--device", "cpu", tmp_path / "model")
    assert result.exit_code == 2, result.output
    assert f"error: ONTOLINK_TRAIN_PRECISION='{value}': {said}" in result.stderr and "--precision" not in result.stderr
    assert not (tmp_path / "model").exists() and "Traceback" not in result.output
