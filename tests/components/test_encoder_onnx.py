"""The default CPU encoder (ONNX Runtime, int8 per token): batch invariance, the embedding cache, name reuse.

Batch invariance is in the fast suite (the session's encoder and a 60-mention GSC+ slice); the comparisons with
PyTorch and the rebuilds are ``slow``."""

import json

import numpy as np
import pytest
from conftest import jsonl, run, shared_path

from ontolink.indexes.artifact import load_index
from ontolink.encoders import load_encoder
from ontolink.encoders.onnx import OnnxSentenceEncoder
from ontolink.core.io import read_records
from ontolink.ontology import load_ontology
from ontolink.indexes.build import build_index
from ontolink.linking.link import link_mentions

TEXTS = ["Seizure", "seizures", "Abnormality of the eye", "a much longer phrase about the optic nerve head and the "
         "retina, with many more word pieces than the others", "cataract", "generalized tonic-clonic seizures",
         "red eye", "x"]


@pytest.fixture(scope="module")
def encoder(default_encoder):
    return default_encoder


@pytest.fixture(scope="module")
def gscplus_slice():
    return list(read_records(shared_path("gscplus", "mentions.jsonl")))[:60]


@pytest.mark.slow
def test_default_cpu_encoder_is_onnx_int8_and_close_to_fp32(encoder):
    assert isinstance(encoder, OnnxSentenceEncoder)
    assert encoder.describe()["runtime"] == "onnx"
    assert encoder.precision == "int8" and encoder.batch_invariant
    exact = load_encoder(device="cpu", precision="fp32", runtime="torch").encode(TEXTS)
    fast = encoder.encode(TEXTS)
    cosines = (exact * fast).sum(axis=1)
    # per-token int8: every text within 0.985 of fp32 (PyTorch's per-batch int8 gave 0.97 on average)
    assert cosines.min() > 0.985, cosines
    onnx_fp32 = load_encoder(device="cpu", precision="fp32").encode(TEXTS)
    assert np.abs(onnx_fp32 - exact).max() < 1e-4


def test_a_text_gets_the_same_vector_in_any_batch(encoder):
    alone = np.stack([encoder.encode([text])[0] for text in TEXTS])
    saved = encoder.max_batch_size
    try:
        for size in (1, 3, 7, 256):
            encoder.max_batch_size = size
            together = encoder.encode(list(reversed(TEXTS)) + TEXTS)[len(TEXTS):]
            assert np.abs(together - alone).max() <= 1e-6, size
    finally:
        encoder.max_batch_size = saved



def test_sessions_side_by_side_give_the_vectors_of_one(encoder):
    """Two single-threaded sessions run batches at once; a text's vector is the one a lone session gives."""
    side_by_side = OnnxSentenceEncoder(threads=2)
    alone = OnnxSentenceEncoder(threads=1)
    assert (side_by_side.parallel_batches, alone.parallel_batches) == (2, 1)
    texts = [f"{text} {number}" for number in range(40) for text in TEXTS]
    # the work is cut so that each session gets four batches (BATCHES_PER_RUNNER), even when it would fit in one
    assert (side_by_side.batch_tokens(4000), alone.batch_tokens(4000)) == (500, alone.tokens_per_batch)
    assert side_by_side.batch_tokens(100_000) == side_by_side.tokens_per_batch
    assert side_by_side.batch_tokens(1000) == side_by_side.min_tokens_per_batch
    assert np.abs(side_by_side.encode(texts) - alone.encode(texts)).max() <= 1e-6

def test_same_links_at_any_batch_size_and_across_shards(dense_index, gscplus_slice, tmp_path):
    outputs = {}
    for size in (1, 7, 256):
        result = run("link", "--index", dense_index, "--batch-size", size, "--top-k", 5, input=jsonl(gscplus_slice))
        assert result.exit_code == 0, result.output
        outputs[size] = [json.loads(line) for line in result.stdout.splitlines()]
    halves = [run("link", "--index", dense_index, "--top-k", 5, input=jsonl(part)).stdout
              for part in (gscplus_slice[:27], gscplus_slice[27:])]
    outputs["shards"] = [json.loads(line) for line in "".join(halves).splitlines()]
    reference = outputs[256]
    for label, records in outputs.items():
        assert [r["candidates"][0]["id"] for r in records] == [r["candidates"][0]["id"] for r in reference], label
        scores = np.array([[c["score"] for c in r["candidates"]] for r in records])
        assert np.abs(scores - np.array([[c["score"] for c in r["candidates"]] for r in reference])).max() <= 1e-4


@pytest.mark.slow
def test_a_rebuild_reuses_the_embedding_cache(small_ontology_path, tmp_path, monkeypatch, encoder):
    from ontolink.core.cache import cache_dir

    # an empty embedding cache (other tests filled the session's), sharing the session's ONNX export
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "onnx").symlink_to(cache_dir("onnx"))
    monkeypatch.setenv("ONTOLINK_CACHE_DIR", str(tmp_path / "cache"))
    ontology = load_ontology(small_ontology_path)
    cold = build_index(ontology, tmp_path / "a", device="cpu")
    warm = build_index(ontology, tmp_path / "b", device="cpu")
    assert cold["encoded"]["encoded"] > 500 and warm["encoded"] == {"encoded": 0, "reused": cold["encoded"]["encoded"]}
    assert (tmp_path / "a" / "index.faiss").read_bytes() == (tmp_path / "b" / "index.faiss").read_bytes()
    fresh = build_index(ontology, tmp_path / "c", device="cpu", cache=False)
    assert fresh["encoded"]["encoded"] == cold["encoded"]["encoded"]

    # an ontology update: one new synonym is the only name encoded
    records = [json.loads(line) for line in small_ontology_path.read_text().splitlines()]
    records[0]["synonyms"] = records[0].get("synonyms", []) + ["a brand new synonym"]
    updated = tmp_path / "updated.jsonl"
    updated.write_text(jsonl(records))
    result = run("index", "--ontology", updated, tmp_path / "d")
    assert result.exit_code == 0, result.output
    assert "1 encoded" in result.stderr
    assert json.loads((tmp_path / "d" / "manifest.json").read_text())["encoded"]["encoded"] == 1


def test_a_mention_spelled_like_a_name_reuses_its_stored_vector(dense_index):
    loaded = load_index(dense_index, device="cpu")
    encoder = loaded.name_index.encoder
    name = loaded.names[0]
    variants = [name.upper(), f"  {name}  ", name]
    records = [{"id": str(n), "mention": text} for n, text in enumerate(variants + ["no such name at all"])]
    linked = list(link_mentions(records, loaded, top_k=3))
    assert encoder.last_reused == 1 and encoder.last_encoded == 1  # the three spellings tokenise alike
    fresh = encoder.encode([name, "no such name at all"])
    stored = loaded.name_index._cpu_index.reconstruct(0)
    assert np.abs(fresh[0] - stored).max() <= 1e-6
    encoding = load_index(dense_index, device="cpu")
    encoding.name_index._known = None  # the same mention, encoded
    expected = list(link_mentions(records[-2:], encoding, top_k=3))[0]["candidates"]
    assert [c["id"] for c in linked[2]["candidates"]] == [c["id"] for c in expected]
    assert max(abs(a["score"] - b["score"]) for a, b in zip(linked[2]["candidates"], expected)) <= 1e-5
    assert linked[0]["candidates"] == linked[1]["candidates"] == linked[2]["candidates"]


def test_an_index_of_another_export_links_without_reusing_its_vectors(dense_index, tmp_path):
    """Vectors stored by another version of the exported graph are not mixed with this version's."""
    import shutil

    from ontolink.encoders.onnx_export import EXPORT_VERSION

    assert load_index(dense_index, device="cpu").name_index._known is not None
    older = tmp_path / "older"
    shutil.copytree(dense_index, older)
    manifest = json.loads((older / "manifest.json").read_text())
    assert manifest["index"]["encoder"]["export"] == EXPORT_VERSION
    manifest["index"]["encoder"]["export"] = EXPORT_VERSION - 1
    (older / "manifest.json").write_text(json.dumps(manifest))
    loaded = load_index(older, device="cpu")
    assert loaded.name_index._known is None
    linked = list(link_mentions([{"id": "1", "mention": loaded.names[0]}], loaded, top_k=3))
    assert linked[0]["candidates"][0]["id"] == loaded.entity_ids[loaded.entity_of_name[0]]


def test_onnx_refuses_what_it_cannot_run_with_the_reason(tmp_path):
    from ontolink.core.errors import OntolinkError

    (tmp_path / "manifest.json").write_text(json.dumps({"artifact": "retriever"}))
    with pytest.raises(OntolinkError, match="--runtime onnx cannot run .*ontolink model directory"):
        load_encoder(str(tmp_path), device="cpu", runtime="onnx")


def test_directory_fingerprint_is_remembered_until_a_file_changes(tmp_path):
    import hashlib

    from ontolink.encoders.model_files import directory_fingerprint

    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "tokenizer.json").write_text('{"model": 1}')
    first = directory_fingerprint(tmp_path)
    expected = hashlib.sha256(b"config.json{}tokenizer.json" + b'{"model": 1}').hexdigest()
    assert first == expected == directory_fingerprint(tmp_path)  # the second from the memo
    (tmp_path / "tokenizer.json").write_text('{"model": 22}')  # another size and time: read again
    assert directory_fingerprint(tmp_path) == hashlib.sha256(b"config.json{}tokenizer.json"
                                                             + b'{"model": 22}').hexdigest()
