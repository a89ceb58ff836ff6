"""Artifact writers replace only what they wrote: a directory of the user's own files, or an artifact of
another kind, is refused (exit 2, the path named) unless --force is given."""

import json

import pytest
from conftest import run

from ontolink.core.errors import InputError


def _user_directory(tmp_path):
    directory = tmp_path / "mine"
    (directory / "sub").mkdir(parents=True)
    (directory / "notes.txt").write_text("my notes\n")
    (directory / "sub" / "data.csv").write_text("a,b\n1,2\n")
    return directory


def _kept(directory):
    return (directory / "notes.txt").read_text() == "my notes\n" and (directory / "sub" / "data.csv").exists()


def test_index_refuses_a_directory_of_user_files_and_force_replaces_it(small_ontology_path, tmp_path):
    directory = _user_directory(tmp_path)
    result = run("index", "--ontology", small_ontology_path, "--method", "tfidf", directory)
    assert result.exit_code == 2, result.output
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and str(directory) in message and "--force" in message
    assert "Traceback" not in result.output
    assert _kept(directory)
    assert not any(path.name.startswith(".mine.") for path in tmp_path.iterdir())

    result = run("index", "--ontology", small_ontology_path, "--method", "tfidf", "--force", directory)
    assert result.exit_code == 0, result.output
    assert not (directory / "notes.txt").exists()
    assert json.loads((directory / "manifest.json").read_text())["artifact"] == "index"
    assert run("link", "--index", directory, input='{"id": "m1", "mention": "seizure"}\n').exit_code == 0


def test_an_existing_index_is_rebuilt_in_place_and_an_empty_directory_is_used(small_ontology_path, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run("index", "--ontology", small_ontology_path, "--method", "tfidf", empty).exit_code == 0
    assert json.loads((empty / "manifest.json").read_text())["index"]["min_df"] == 1
    result = run("index", "--ontology", small_ontology_path, "--method", "tfidf", "--min-df", "2", empty)
    assert result.exit_code == 0, result.output
    assert json.loads((empty / "manifest.json").read_text())["index"]["min_df"] == 2
    assert sorted(path.name for path in tmp_path.iterdir()) == ["empty"]  # no .tmp / .old left behind


def test_an_artifact_of_another_kind_is_refused(tfidf_index, small_ontology_path, tmp_path):
    ranker = tmp_path / "ranker"
    ranker.mkdir()
    (ranker / "manifest.json").write_text(json.dumps({"artifact": "ranker"}))
    (ranker / "ranker.safetensors").write_bytes(b"weights")
    result = run("index", "--ontology", small_ontology_path, "--method", "tfidf", ranker)
    assert result.exit_code == 2 and "holds an ontolink ranker, not an ontolink index" in result.stderr
    assert (ranker / "ranker.safetensors").read_bytes() == b"weights"
    # the train commands refuse before any work: an index directory is not a ranker
    result = run("train", "ranker", "--index", tfidf_index, "--synonym-queries", "10", tfidf_index)
    assert result.exit_code == 2 and "not an ontolink ranker" in result.stderr
    assert json.loads((tfidf_index / "manifest.json").read_text())["artifact"] == "index"


def test_a_file_at_the_path_is_refused(small_ontology_path, tmp_path):
    path = tmp_path / "idx"
    path.write_text("not a directory\n")
    result = run("index", "--ontology", small_ontology_path, "--method", "tfidf", path)
    assert result.exit_code == 2 and str(path) in result.stderr
    assert path.read_text() == "not a directory\n"


def test_the_library_writer_refuses_too(small_ontology_path, tmp_path):
    from ontolink.ontology import load_ontology
    from ontolink.indexes.build import build_index

    directory = _user_directory(tmp_path)
    with pytest.raises(InputError, match="not an ontolink artifact"):
        build_index(load_ontology(small_ontology_path), directory, method="tfidf")
    assert _kept(directory)
    build_index(load_ontology(small_ontology_path), directory, method="tfidf", force=True)
    assert not (directory / "notes.txt").exists()
