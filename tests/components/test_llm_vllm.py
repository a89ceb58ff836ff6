"""The vLLM backend of gen-aliases: its missing-extra message, and the calls it makes (vLLM's documented API,
with a stand-in module: CI has no GPU)."""

import sys
import types

from click.testing import CliRunner
from conftest import HYPERTELORISM, SEIZURE, jsonl, parse_jsonl, selected

from ontolink.cli.main import cli


def test_vllm_missing_message(hpo, onto, cache_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # as if not installed, even on a GPU machine
    result = CliRunner().invoke(cli, ["gen-aliases", "--ontology", onto, "--backend", "vllm"],
                                input=jsonl(selected(hpo, SEIZURE)))
    assert result.exit_code == 1
    message = result.stderr.strip().splitlines()[-1]
    assert message == ("ontolink: error: the vllm backend needs vLLM, which is not installed: "
                       "pip install 'ontolink[gpu]' (on a CUDA machine)")


def test_vllm_backend_speaks_the_vllm_api(hpo, onto, cache_path, monkeypatch):
    """vllm.LLM(...).chat(conversations, SamplingParams(...)) as vLLM documents it, with a stand-in module
    (CI has no GPU): one batched call, greedy decoding, token counts taken from the outputs."""
    calls = {"llm": [], "chat": [], "sampling": []}

    class SamplingParams:
        def __init__(self, **options):
            calls["sampling"].append(options)

    class LLM:
        def __init__(self, **options):
            calls["llm"].append(options)

        def chat(self, conversations, sampling_params, use_tqdm=True):
            calls["chat"].append(conversations)
            return [types.SimpleNamespace(prompt_token_ids=list(range(40 + n)), outputs=[types.SimpleNamespace(
                text=" 1. fits\n2. convulsions ", token_ids=[1, 2, 3])]) for n, _ in enumerate(conversations)]

    monkeypatch.setitem(sys.modules, "vllm", types.SimpleNamespace(LLM=LLM, SamplingParams=SamplingParams,
                                                                   __version__="0.6.2"))
    result = CliRunner().invoke(cli, ["gen-aliases", "--ontology", onto, "--backend", "vllm", "--seed", "3",
                                      "--gpu-memory-utilization", "0.5", "--max-model-len", "2048"],
                                input=jsonl(selected(hpo, SEIZURE, HYPERTELORISM)))
    assert result.exit_code == 0, result.stderr
    out = parse_jsonl(result.stdout)
    assert [record["aliases"] for record in out] == [["fits", "convulsions"]] * 2
    assert [record["llm"]["prompt_tokens"] for record in out] == [40, 41]
    assert all(record["llm"]["completion_tokens"] == 3 and record["llm"]["model"] ==
               "meta-llama/Llama-3.2-3B-Instruct" for record in out)
    assert calls["llm"][0]["model"] == "meta-llama/Llama-3.2-3B-Instruct" and calls["llm"][0]["seed"] == 3
    assert (calls["llm"][0]["gpu_memory_utilization"], calls["llm"][0]["max_model_len"]) == (0.5, 2048)
    assert calls["sampling"][0]["temperature"] == 0
    assert len(calls["chat"]) == 1 and len(calls["chat"][0]) == 2  # both entities in one batch
    assert all(message["role"] in ("system", "user", "assistant") for message in calls["chat"][0][0])
