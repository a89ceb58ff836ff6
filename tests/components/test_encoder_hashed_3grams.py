"""The tests' hashed character 3-gram encoder (tests/ngram_encoder.py): deterministic, normalised,
batch-independent, and a dense index built with it links."""

import json

import numpy as np
from conftest import jsonl, parse_jsonl, run

from ontolink.encoders import ENCODERS


def test_hashed_encoder_is_deterministic_and_normalised():
    encoder = ENCODERS.get("hashed-3grams")()
    texts = ["Seizure", "seizures", "Hypertelorism", "Seizure"]
    vectors = encoder.encode(texts)
    assert vectors.shape == (4, encoder.dimension) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert np.array_equal(vectors[0], vectors[3])
    assert np.array_equal(vectors[:2], encoder.encode(texts[:2]))  # batch-independent
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > similarity[0, 2]


def test_dense_index_with_the_test_encoder_links(hashed_index, tmp_path):
    manifest = json.loads((hashed_index / "manifest.json").read_text())
    assert manifest["index"]["encoder"]["runtime"] == "hashed-3grams"
    result = run("link", "--index", hashed_index, "--top-k", 3, input=jsonl([{"id": "m1", "mention": "seizures"}]))
    assert result.exit_code == 0, result.output
    assert parse_jsonl(result.stdout)[0]["candidates"][0]["id"] == "HP:0001250"
