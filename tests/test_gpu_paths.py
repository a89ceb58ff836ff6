"""The GPU paths, checked on a CPU (issue 45): what each library accepts (vLLM's batched chat, transformers'
dtype keyword, faiss-gpu's clone options and k limit), an artifact moving between GPU and CPU machines, the
memory a pipe's steps leave each other on one GPU, and bf16. The GPU run itself is benchmarks/gpu_check.py."""

import re
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import jsonl, run
from ontolink.core.device import portable_precision, resolve_precision, training_precision
from ontolink.core.errors import OntolinkError
from ontolink.ontology import load_ontology

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def slice_ontology(small_ontology_path):
    return load_ontology(small_ontology_path)


def floor(requirement_prefix, group=None):
    """The lowest version pyproject.toml allows for a requirement (in the core list or an extra)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    requirements = project["optional-dependencies"][group] if group else project["dependencies"]
    (requirement,) = [r for r in requirements if re.match(rf"{re.escape(requirement_prefix)}\s*>=", r)]
    return requirement.split(">=")[1].strip()


# -- precision: one resolver for every artifact loader, bf16 -------------------------------------------------

def test_an_artifact_moves_between_gpu_and_cpu_through_one_resolver():
    assert portable_precision("fp16", "cpu") == "fp32"  # written on a GPU, read on a CPU
    assert portable_precision("bf16", "cpu") == "fp32"
    assert portable_precision("int8", "cuda") == "fp16"  # written on a CPU, read on a GPU
    assert portable_precision("int8", "cuda:1") == "fp16"
    assert portable_precision("bf16", "cuda", bf16=False) == "fp16"  # an A100's artifact on a T4
    assert portable_precision("bf16", "cuda", bf16=True) == "bf16"
    for same, device in (("int8", "cpu"), ("fp32", "cpu"), ("fp16", "cuda"), ("fp32", "cuda")):
        assert portable_precision(same, device) == same


def test_bf16_is_asked_for_where_the_device_has_it():
    with pytest.raises(OntolinkError, match="--precision bf16 needs a CUDA device"):
        resolve_precision("bf16", "cpu")
    assert resolve_precision("auto", "cuda") == "fp16"  # encoding keeps fp16's mantissa unless asked
    assert training_precision("auto", "cuda", bf16=True) == "bf16"
    assert training_precision("auto", "cuda", bf16=False) == "fp16"
    assert training_precision("auto", "cpu") == "fp32"
    with pytest.raises(OntolinkError, match="bf16 needs a GPU with native bfloat16"):
        training_precision("bf16", "cuda", bf16=False)
    with pytest.raises(OntolinkError, match="trains on a CUDA device"):
        training_precision("fp16", "cpu")


def test_bf16_training_runs_without_a_grad_scaler():
    from ontolink.training.loop import mixed_precision

    assert mixed_precision("auto", "cuda", bf16=True) == (torch.bfloat16, False)
    assert mixed_precision("auto", "cuda", bf16=False) == (torch.float16, True)
    assert mixed_precision("auto", "cpu") == (None, False)
    # what autocast does with the dtype chosen: bf16 matmuls where it is asked (CPU autocast takes bf16 too)
    dtype, _ = mixed_precision("auto", "cuda", bf16=True)
    with torch.autocast("cpu", dtype=dtype):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.bfloat16


# -- vLLM: the floor, the memory options, the message ----------------------------------------------------------

def test_vllm_releases_before_batched_chat_are_refused():
    from ontolink.aliases.llm.vllm_offline import BATCHED_CHAT, check_version, release

    assert release("0.6.1.post2") == (0, 6, 1) and release("0.6.2+cu124") == (0, 6, 2)
    assert release("0.10.1rc1") == (0, 10, 1) and release("0.6.3.dev45+g1a2b") == (0, 6, 3)
    with pytest.raises(OntolinkError, match=r"needs vLLM 0\.6\.2 or later .*vLLM 0\.6\.1\.post2 is installed"):
        check_version("0.6.1.post2")
    for accepted in ("0.6.2", "0.6.3.post1", "0.10.1rc1", "0.11.0"):
        check_version(accepted)
    # the gpu extra installs no release the backend refuses
    assert release(floor("vllm", "gpu")) >= BATCHED_CHAT


def test_gen_aliases_takes_vllm_memory_options(tmp_path, hpo):
    help_text = run("gen-aliases", "--help").stdout
    assert "--gpu-memory-utilization" in help_text and "--max-model-len" in help_text
    bad = run("gen-aliases", "--backend", "vllm", "--gpu-memory-utilization", "1.5", input="")
    assert bad.exit_code == 2 and "--gpu-memory-utilization" in bad.stderr
    assert run("gen-aliases", "--backend", "vllm", "--max-model-len", "0", input="").exit_code == 2
    # the options reach the backend; without vLLM (not installable on a CPU machine) it says what to install
    import importlib.util

    if importlib.util.find_spec("vllm") is not None:
        return
    entity = next(entity for entity in hpo if entity.definition)
    record = {"id": entity.id, "name": entity.name, "definition": entity.definition}
    result = run("gen-aliases", "--ontology", "hpo", "--backend", "vllm", "--gpu-memory-utilization", "0.5",
                 "--max-model-len", "2048", "--no-cache", input=jsonl([record]))
    assert result.exit_code != 0 and "pip install 'ontolink[gpu]'" in result.stderr
    assert "Traceback" not in result.stderr


def test_vllm_memory_options_are_checked_before_anything_loads():
    from ontolink.aliases.llm.vllm_offline import VLLMBackend

    with pytest.raises(OntolinkError, match=r"--gpu-memory-utilization 0 must be in \(0, 1\]"):
        VLLMBackend(gpu_memory_utilization=0)
    with pytest.raises(OntolinkError, match="--max-model-len -1 must be a positive"):
        VLLMBackend(max_model_len=-1)


def test_too_little_free_gpu_memory_says_who_holds_it_and_what_to_lower():
    from ontolink.aliases.llm.vllm_offline import GIB, gpu_holders, memory_shortfall

    listing = "4242, python, 9000\n77, /usr/bin/vllm serve, 12000\n[N/A], [Not Supported], [N/A]\n"
    holders = gpu_holders(listing)
    assert holders == [(77, "/usr/bin/vllm serve", 12000), (4242, "python", 9000)]
    message = memory_shortfall(10 * GIB, 24 * GIB, 0.85, 4096, holders)
    assert "asks for 0.85 of cuda:0's 24.0 GiB (20.4 GiB) but 10.0 GiB is free" in message
    assert "pid 77 /usr/bin/vllm serve 12000 MiB, pid 4242 python 9000 MiB" in message
    assert "lower --gpu-memory-utilization to 0.40 or less" in message and "--max-model-len (now 4096" in message
    assert memory_shortfall(21 * GIB, 24 * GIB, 0.85, 4096) is None
    assert "free the GPU first" in memory_shortfall(0.5 * GIB, 24 * GIB, 0.5, 2048)


def test_filter_loads_its_encoder_when_the_first_record_arrives(slice_ontology, default_encoder):
    """In `select-entities | gen-aliases --backend vllm | filter`, filter's encoder takes GPU memory only after
    gen-aliases has written (vLLM has its share by then)."""
    from ontolink.aliases.filter import filter_aliases

    arrived = []

    def records():
        arrived.append(True)
        yield {"id": "HP:0001250", "aliases": ["epileptic fits"]}

    def loader():
        assert arrived, "the encoder loaded before any record arrived"
        return default_encoder

    (record,) = filter_aliases(records(), slice_ontology, loader, tau=0.0)
    assert [decision["alias"] for decision in record["decisions"]] == ["epileptic fits"]
    assert list(filter_aliases(iter(()), slice_ontology, lambda: pytest.fail("loaded for no input"))) == []


def test_select_entities_loads_its_index_once_the_mentions_are_read(slice_ontology, tfidf_index):
    from ontolink.aliases.select import select_entities
    from ontolink.indexes.artifact import load_index

    read = []

    def mentions():
        for name in ("seizure", "Seizures"):
            read.append(name)
            yield {"id": name, "mention": name}

    def loader():
        assert len(read) == 2, "the index loaded before the mentions were read"
        return load_index(tfidf_index, ontology=slice_ontology, device="cpu")

    lazily = select_entities(mentions(), slice_ontology, loaded_index=loader, device="cpu")
    read.clear()
    loaded = load_index(tfidf_index, ontology=slice_ontology, device="cpu")
    at_once = select_entities(mentions(), slice_ontology, loaded_index=loaded, device="cpu")
    assert list(lazily.records()) == list(at_once.records()) and list(lazily.records())


# -- transformers: the dtype keyword of the floor and of the installed release --------------------------------

def test_the_llm_dtype_reaches_from_pretrained_in_every_allowed_transformers(tmp_path):
    import transformers

    from ontolink.aliases.llm.transformers_local import dtype_argument, dtype_keyword

    # 4.56 renamed torch_dtype to dtype; before it a dtype keyword was ignored (the weights loaded in float32)
    assert dtype_keyword(floor("transformers")) == "torch_dtype"
    assert dtype_keyword("4.55.4") == "torch_dtype" and dtype_keyword("4.56.0") == "dtype"
    assert dtype_keyword("5.0.0rc1") == "dtype"
    # the installed release honours the keyword chosen for it: a float32 checkpoint loads in bfloat16
    config = transformers.LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=32)
    transformers.LlamaForCausalLM(config).save_pretrained(tmp_path)
    model = transformers.AutoModelForCausalLM.from_pretrained(tmp_path, **dtype_argument(torch.bfloat16))
    assert {parameter.dtype for parameter in model.parameters()} == {torch.bfloat16}


# -- faiss-gpu: clone options and the k limit --------------------------------------------------------------

def test_ivfpq_with_many_sub_quantisers_clones_with_float16_lookup_tables():
    from ontolink.indexes.dense import GPU_MAX_K, gpu_clone_settings, make_faiss_index

    assert gpu_clone_settings("flat") == {}
    assert gpu_clone_settings("ivfpq", 48, 16) == {"useFloat16LookupTables": False}  # 48 KiB of float32 tables
    for pq_m in (56, 64, 96):
        assert gpu_clone_settings("ivfpq", pq_m, 16) == {"useFloat16LookupTables": True}
    assert gpu_clone_settings("ivfpq", 6, 16) is None  # no GPU kernel for 6-byte codes: stays on the CPU
    assert gpu_clone_settings("ivfpq", 64, GPU_MAX_K + 1) is None
    assert gpu_clone_settings("hnsw") is None and gpu_clone_settings("sq8") is None
    # read from a real IVF-PQ index as faiss_on_device reads it
    vectors = np.random.default_rng(0).standard_normal((1200, 128)).astype(np.float32)
    index, options = make_faiss_index(vectors, "ivfpq", pq_m=64)
    assert (index.pq.M, options["pq_m"]) == (64, 64)
    assert gpu_clone_settings("ivfpq", index.pq.M, index.nprobe) == {"useFloat16LookupTables": True}


def test_a_search_past_faiss_gpus_k_limit_runs_on_the_cpu_copy(dense_index):
    from ontolink.indexes.artifact import load_index
    from ontolink.indexes.dense import GPU_MAX_K, search_place

    assert search_place("flat", True, GPU_MAX_K) == "gpu"
    assert search_place("flat", True, GPU_MAX_K + 1) == "scan"
    assert search_place("ivfpq", True, 5000) == "cpu" and search_place("ivfpq", False, 10) == "cpu"
    assert search_place("flat", False, 10) == "scan"
    # the CPU path of a k over the limit answers as a small k does, in order
    name_index = load_index(dense_index, device="cpu").name_index
    scores, rows = name_index.search(["seizure"], GPU_MAX_K + 1)
    small_scores, small_rows = name_index.search(["seizure"], 5)
    assert rows.shape[1] == min(GPU_MAX_K + 1, len(name_index))
    assert list(rows[0][:5]) == list(small_rows[0]) and np.all(np.diff(scores[0]) <= 1e-6)
