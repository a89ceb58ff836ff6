"""Artifacts someone handed you, damaged or crafted: every file is checked on load (exit 2, the file named, no
crash), replacing an artifact is one atomic swap, and what a killed run left behind goes on the next run."""

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import artifact_copy, edit_json, rewrite_tensors, run

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "toolbox"
MENTION = '{"id": "m1", "mention": "seizures"}\n'


index_copy = artifact_copy("tfidf_index", "idx")


def _link(index):
    """`link` in a child process: a crash in compiled code (exit 139) must show as one, not end the tests."""
    return subprocess.run([sys.executable, "-m", "ontolink", "link", "--index", str(index), "--top-k", "3"],
                          input=MENTION, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(PACKAGE_DIR)})


def _out_of_range_indices(arrays):
    arrays["indices"][-1] = 10 ** 9


def _short_indptr(arrays):
    arrays["indptr"] = arrays["indptr"][:-2]


def _indptr_past_the_end(arrays):
    arrays["indptr"][-1] += 1000


def _unsigned_indptr_past_the_values(arrays):
    """uint64 row pointers where the first row runs 1,000 past the values and the next falls back: the
    difference wraps to a large positive number, so they seemed to grow."""
    indptr = arrays["indptr"].astype(np.uint64)
    indptr[1] = indptr[-1] + 1000
    arrays["indptr"] = indptr


def _float_indices(arrays):
    arrays["indices"] = arrays["indices"].astype(np.float32)


def _no_idf(arrays):
    del arrays["idf"]


@pytest.mark.parametrize("damage, words", [
    (_out_of_range_indices, "column indices holds 1000000000, outside 0 to"),
    (_short_indptr, "row pointers (indptr) do not describe"),
    (_indptr_past_the_end, "row pointers end at"),
    (_unsigned_indptr_past_the_values, "row pointers (indptr) do not describe"),
    (_float_indices, "tensor 'indices' is float32"),
    (_no_idf, "holds no tensor 'idf'"),
])
def test_a_crafted_tfidf_matrix_is_refused_naming_the_file(index_copy, damage, words):
    rewrite_tensors(index_copy / "tfidf.safetensors", damage)
    result = _link(index_copy)
    assert result.returncode == 2, (result.returncode, result.stderr)  # was -11 (a segfault) for bad indices
    assert f"{index_copy / 'tfidf.safetensors'}: " in result.stderr and words in result.stderr
    assert "Traceback" not in result.stderr


def _negative_entity(maps):
    maps["entity_of_name"][0] = -1


def _entity_past_the_end(maps):
    maps["entity_of_name"][0] = len(maps["entity_ids"]) + 5


def _no_entity_ids(maps):
    del maps["entity_ids"]


def _parent_past_the_end(maps):
    maps["entity_parents"][0] = [10 ** 6]


def _fewer_names_than_rows(maps):
    maps["entity_of_name"].pop()


@pytest.mark.parametrize("damage, words", [
    (_negative_entity, "'entity_of_name' holds -1, outside 0 to"),  # linked every mention to a wrong entity
    (_entity_past_the_end, "'entity_of_name' holds"),  # an IndexError
    (_no_entity_ids, "'entity_ids' must be a list of strings"),  # a KeyError
    (_parent_past_the_end, "'entity_parents' holds 1000000"),
    (_fewer_names_than_rows, "'entity_of_name' must list one entity row"),
])
def test_lying_names_json_is_refused_naming_the_file(index_copy, damage, words):
    edit_json(index_copy / "names.json", damage)
    result = run("link", "--index", index_copy, input=MENTION)
    assert result.exit_code == 2, result.stderr
    assert f"{index_copy / 'names.json'}: " in result.stderr and words in result.stderr


def test_names_json_pointing_at_dev_zero_is_refused_at_once(index_copy):
    (index_copy / "names.json").unlink()
    (index_copy / "names.json").symlink_to("/dev/zero")
    result = _link(index_copy)  # read /dev/zero forever
    assert result.returncode == 2 and "names.json: is not a regular file" in result.stderr


@pytest.mark.parametrize("key", ["method", "index"])
def test_a_manifest_missing_a_key_names_the_key(index_copy, key):
    def remove(manifest):
        del (manifest["index"] if key == "method" else manifest)[key]

    edit_json(index_copy / "manifest.json", remove)
    result = run("link", "--index", index_copy, input=MENTION)
    assert result.exit_code == 2, result.stderr  # was a KeyError, exit 1
    assert f"{index_copy / 'manifest.json'}: has no " in result.stderr and repr(
        "index.method" if key == "method" else "index") in result.stderr


def test_a_manifest_that_is_not_an_object_is_refused(index_copy):
    (index_copy / "manifest.json").write_text("[1, 2]")
    result = run("link", "--index", index_copy, input=MENTION)
    assert result.exit_code == 2 and "holds a JSON list, not an object" in result.stderr


def test_every_index_file_gets_the_same_permissions(tfidf_index):
    modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in Path(tfidf_index).iterdir()}
    assert len(set(modes.values())) == 1, modes  # tfidf.safetensors was 0600, the rest 0644


@pytest.mark.parametrize("content", [b"this is not an SQLite database, just sixty-four bytes of text.." * 32,
                                     b"SQLite format 3\x00" + b"\xff" * 4080])
def test_a_damaged_embedding_cache_names_the_file_and_no_cache(tmp_path, content):
    """What `ontolink index` opens (``EmbeddingCache``, in ONTOLINK_CACHE_DIR) when the encoder's vectors can be
    reused: a file that is not SQLite, or whose header is cut."""
    from ontolink.encoders.embedding_cache import EmbeddingCache
    from ontolink.core.errors import InputError

    damaged = tmp_path / "embeddings.sqlite"
    damaged.write_bytes(content)
    with pytest.raises(InputError) as caught:  # was "file is not a database", no file named
        cache = EmbeddingCache("fingerprint", 4, path=damaged)
        cache.get_many([b"key"])
    assert str(caught.value).startswith(f"{damaged}: the embedding cache is damaged")
    assert "--no-cache" in str(caught.value) and caught.value.exit_code == 2


REPLACER = """
import sys
from ontolink.core.manifest import artifact_directory
for number in range(int(sys.argv[2])):
    with artifact_directory(sys.argv[1], {"artifact": "index"}) as directory:
        (directory / "names.json").write_text(str(number))
"""


def test_replacing_an_artifact_never_leaves_the_path_empty(tmp_path):
    """A real process replaces an artifact 300 times while this one looks for it: with two renames
    (old away, new in) it was missing at about 3% of the looks."""
    target = tmp_path / "idx"
    environment = {**os.environ, "PYTHONPATH": str(PACKAGE_DIR)}
    subprocess.run([sys.executable, "-c", REPLACER, str(target), "1"], env=environment, check=True, timeout=120)
    child = subprocess.Popen([sys.executable, "-c", REPLACER, str(target), "300"], env=environment)
    looks = missing = 0
    try:
        while child.poll() is None:
            looks += 1
            missing += not (target / "manifest.json").exists()
    finally:
        child.wait(timeout=120)
    assert child.returncode == 0 and looks > 1000
    assert missing == 0, f"missing at {missing} of {looks} looks"
    assert (target / "names.json").read_text() == "299"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["idx"]  # no .old / .tmp left


def test_leftovers_of_a_killed_run_are_removed_on_the_next(tfidf_index, small_ontology_path, tmp_path):
    """What `kill -9` leaves (a half-built .tmp directory, an .old one not yet deleted) goes on the next run;
    a live process's temporary directory stays."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    target = tmp_path / "idx"
    shutil.copytree(tfidf_index, target)
    for leftover in (f".idx.tmp-{dead.pid}", f".idx.old-{dead.pid}", f".idx.tmp-{os.getppid()}"):
        shutil.copytree(tfidf_index, tmp_path / leftover)
    result = run("index", "--ontology", small_ontology_path, "--method", "tfidf", target)
    assert result.exit_code == 0, result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == [f".idx.tmp-{os.getppid()}", "idx"]


def _crafted(directory, artifact, tensors_file, tensors, **files):
    from safetensors.numpy import save_file

    directory.mkdir()
    (directory / "manifest.json").write_text(json.dumps({"artifact": artifact, "features": {
        "groups": ["lexical"], "columns": ["a", "b"]}}))
    save_file(tensors, str(directory / tensors_file))
    for name, content in files.items():
        (directory / name.replace("_", ".")).write_text(content)
    return directory


def test_a_ranker_with_integer_weights_or_no_intercept_is_refused(tmp_path):
    from ontolink.ranking.ranker import ARTIFACT, WEIGHTS_FILE, Ranker
    from ontolink.core.errors import InputError

    weights = {"mean": np.zeros(2, np.float32), "scale": np.ones(2, np.float32),
               "coefficients": np.ones(2, np.float32)}
    directory = _crafted(tmp_path / "ranker", ARTIFACT, WEIGHTS_FILE, weights)
    with pytest.raises(InputError, match=rf"{WEIGHTS_FILE}: holds no tensor 'intercept'"):  # was a KeyError
        Ranker(directory)
    weights["intercept"] = np.zeros(1, np.float32)
    weights["coefficients"] = np.ones(2, np.int64)
    directory = _crafted(tmp_path / "ranker2", ARTIFACT, WEIGHTS_FILE, weights)
    with pytest.raises(InputError, match="tensor 'coefficients' is int64"):
        Ranker(directory)


def test_kg_embeddings_whose_ids_point_at_dev_zero_are_refused(tmp_path):
    from ontolink.kg.embeddings import ARTIFACT, IDS, TENSORS, load_kg_embeddings
    from ontolink.core.errors import InputError

    directory = _crafted(tmp_path / "kg", ARTIFACT, TENSORS, {"entity": np.zeros((2, 4), np.float32),
                                                              "relation": np.zeros((1, 4), np.float32)})
    (directory / IDS).symlink_to("/dev/zero")
    with pytest.raises(InputError, match=rf"{IDS}: is not a regular file"):  # read /dev/zero forever
        load_kg_embeddings(directory)
    (directory / IDS).unlink()
    (directory / IDS).write_text(json.dumps({"entities": "ab", "relations": ["r"]}))
    with pytest.raises(InputError, match="must hold 'entities' and 'relations', lists of ids"):
        load_kg_embeddings(directory)


def _token_files(directory, offsets):
    """A multi-vector index's token files (10 token vectors of the tests' encoder, the offsets given as uint64)
    in ``directory``; returns the encoder."""
    import faiss
    from safetensors.numpy import save_file

    from ontolink.encoders import load_encoder
    from ontolink.indexes.multivector import OFFSETS_FILE, TOKENS_FILE

    encoder = load_encoder(runtime="hashed-3grams", device="cpu")
    tokens = faiss.IndexFlatIP(encoder.dimension)
    tokens.add(encoder.encode([f"token {number}" for number in range(10)]))
    faiss.write_index(tokens, str(directory / TOKENS_FILE))
    save_file({"offsets": np.array(offsets, dtype=np.uint64)}, str(directory / OFFSETS_FILE))
    return encoder


@pytest.mark.parametrize("offsets", [[0, 20, 10], [0, (1 << 63) + 5, 10]])
def test_unsigned_token_offsets_that_fall_back_are_refused(tmp_path, offsets):
    """A multi-vector index's token offsets stored as uint64: a difference that falls back wraps to a large
    positive number, so [0, 20, 10] passed the check that they grow, and np.repeat failed on them as int64 (a
    traceback)."""
    from ontolink.indexes.multivector import OFFSETS_FILE, MultiVectorNameIndex
    from ontolink.core.errors import InputError

    encoder = _token_files(tmp_path, offsets)
    manifest = {"index": {"faiss": {"type": "flat"}, "token_k": 16}}
    with pytest.raises(InputError, match=f"{OFFSETS_FILE}: does not hold the token offsets of 2 names"):
        MultiVectorNameIndex.load(tmp_path, manifest, encoder, ["first name", "second name"])


@pytest.mark.parametrize("token_k, words", [(None, "has no 'index.token_k'"),
                                            ("many", "'index.token_k' must be an integer of at least 1")])
def test_a_multivector_manifest_without_a_token_depth_is_refused(tmp_path, token_k, words):
    """'index.token_k', the token vectors each mention token retrieves: missing it was a KeyError, a string a
    TypeError at the first search (tracebacks)."""
    from ontolink.indexes.multivector import MultiVectorNameIndex
    from ontolink.core.errors import InputError

    encoder = _token_files(tmp_path, [0, 4, 10])
    manifest = {"index": {"faiss": {"type": "flat"}, **({} if token_k is None else {"token_k": token_k})}}
    with pytest.raises(InputError, match=f"manifest.json: {words}"):
        MultiVectorNameIndex.load(tmp_path, manifest, encoder, ["first name", "second name"])
