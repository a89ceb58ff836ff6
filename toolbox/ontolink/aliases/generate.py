"""Alias generation (docs/methods.md): ask an instruction LLM for the names of an entity from its definition.

One prompt per selected ENTITY (never per mention). The prompt shows the
entity's definition only, never its name, plus three in-context
(definition -> name) examples drawn from the same ontology. Replies are parsed
into a list of aliases. Every completion goes through a persistent response
cache (``ontolink.aliases.llm.response_cache``), so a rerun costs no LLM call
and an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import itertools
import random
import re
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ontolink.core.errors import UsageError
from ontolink.core.io import warn, ReadStats, RecordWriter, read_records
from ontolink.ontology.model import normalize
from ontolink.aliases.llm import load_backend, LLM_BACKENDS
from ontolink.aliases.llm.response_cache import cache_key, ResponseCache
from ontolink.core.progress import counting
from ontolink.core.records import validate_selected_entity
from ontolink.engines import open_engine
from ontolink.core.options import DEFAULT_SEED
from ontolink.aliases.options import GenAliasesOptions

if TYPE_CHECKING:
    from ontolink.engines import Engine
    from ontolink.aliases.llm.base import LLMBackend
    from ontolink.ontology.model import Ontology

# "You are a specialist in {domain} terminology": HPO, MEDIC, MeSH, CMO, VT and LPT all read well as
# "biomedical"; a narrower domain ("human phenotype", "livestock trait") can be given with --domain.
DEFAULT_DOMAIN = GenAliasesOptions.domain
DEFAULT_EXAMPLES = 3

SYSTEM_TEMPLATE = (
    "You are a specialist in {domain} terminology. Given an entity's definition, generate a scientifically "
    "accurate name that best represents its meaning."
)
GUIDELINES = (
    "Guidelines:\n"
    "- The name must reflect the meaning of the definition.\n"
    "- Use standard {domain} terminology."
)
EXAMPLE_TEMPLATE = "Definition: {definition}\nName: {name}"
USER_TEMPLATE = (
    "Definition: {definition} Return all possible names for this definition, separated by commas. "
    "Do not include any additional text."
)

# Longer example definitions add prompt tokens without helping; they are used only when too few short ones exist.
EXAMPLE_DEFINITION_MAX_CHARS = 400
# Parsed aliases longer than this are sentences, not names.
ALIAS_MAX_CHARS = 100
ALIAS_MAX_WORDS = 12


# ---------------------------------------------------------------------------------------------- records


# ---------------------------------------------------------------------------------------------- prompt


class ExamplePool:
    """Draws the in-context (definition -> name) examples from one ontology.

    Only entities with a definition are used, never the entity being asked
    about (by id, alt id or name), and never one whose name contains the asked
    entity's name or the reverse, so the answer does not leak through an
    example. The draw for an entity depends only on ``seed`` and the entity's
    id: the same seed gives the same prompts whatever the input order, batch
    size, or where an interrupted run resumed.
    """

    def __init__(self, ontology, seed=DEFAULT_SEED, count=DEFAULT_EXAMPLES):
        self.seed = seed
        self.count = count
        candidates = sorted((entity for entity in ontology if (entity.definition or "").strip() and entity.name),
                            key=lambda entity: entity.id)
        short = [entity for entity in candidates if len(entity.definition) <= EXAMPLE_DEFINITION_MAX_CHARS]
        self.pool = short if len(short) >= 10 * count else candidates

    def draw(self, record):
        asked_ids = {record.get("id")} | set(record.get("alt_ids") or [])
        asked_name = normalize(record.get("name") or "")
        rng = random.Random(f"{self.seed}:{record.get('id')}")
        chosen = []
        if not self.pool:
            return chosen
        # Random probes, then (lazily) a sweep from a random start, for small or mostly excluded pools.
        size = len(self.pool)
        random_probes = [rng.randrange(size) for _ in range(20 * self.count)]
        start = rng.randrange(size)
        probes = itertools.chain(random_probes, ((start + offset) % size for offset in range(size)))
        taken = set()
        for index in probes:
            if len(chosen) == self.count:
                break
            if index in taken:
                continue
            taken.add(index)
            entity = self.pool[index]
            name = normalize(entity.name)
            if entity.id in asked_ids or asked_ids & set(entity.alt_ids):
                continue
            if asked_name and (asked_name in name or name in asked_name
                               or asked_name in normalize(entity.definition)):
                continue
            chosen.append((" ".join(entity.definition.split()), entity.name.strip()))
        return chosen


def build_messages(definition, examples, domain=DEFAULT_DOMAIN):
    """The chat of alias generation (docs/methods.md): system (task, guidelines, examples) and user (the definition)."""
    parts = [SYSTEM_TEMPLATE.format(domain=domain), GUIDELINES.format(domain=domain)]
    if examples:
        parts.append("Examples:\n\n" + "\n\n".join(EXAMPLE_TEMPLATE.format(definition=d, name=n)
                                                   for d, n in examples))
    return [
        {"role": "system", "content": "\n\n".join(parts)},
        {"role": "user", "content": USER_TEMPLATE.format(definition=" ".join(definition.split()))},
    ]


# ---------------------------------------------------------------------------------------------- parsing

# Commas (not one between digits: "2,4-dinitrophenol"), semicolons, newlines, " | " and sentence ends (". " before a
# capital letter).
_SPLIT = re.compile(r"[;\n]|(?<!\d),|,(?!\d)|\s+\|\s+|(?<=[a-z0-9)])\.\s+(?=[A-Z])")
_LABEL = re.compile(r"^(?:(?:possible |alternative |other )?names?|aliases?|synonyms?|answer|definition)\s*:\s*",
                    re.IGNORECASE)
_BULLET = re.compile(r"^(?:[-*•·‣–—>]+|\(?\d{1,3}[.)]|\(?[a-z][.)](?=\s))\s*", re.IGNORECASE)
_CONJUNCTION = re.compile(r"^(?:and|or|and/or)\s+", re.IGNORECASE)
_QUOTES = "\"'`“”‘’«»"
# Pieces that are list glue or a label, never a name.
_NOT_NAMES = {"and", "or", "etc", "e.g", "i.e", "including", "such as", "definition", "definitions", "name", "names",
              "alias", "aliases", "synonym", "synonyms", "none", "n/a", "unknown"}
# A reply that echoes the instruction ("Return all possible names ..., separated by commas") is not a name.
_INSTRUCTION = " ".join(USER_TEMPLATE.format(definition="").lower().replace(",", " ").replace(".", " ").split())
_INSTRUCTION_WORDS = set(_INSTRUCTION.split()) | {"name", "definitions"}
# Words that make a piece a sentence or meta-talk, never an ontology name (none of HPO's 40,508 names and
# synonyms has one).
_SENTENCE_WORDS = {"is", "was", "refers", "means", "this", "definition", "definitions"}


# A name quoted after a lead-in that names it ('Same as "ovarian neoplasia"', 'also called “X”'): the name is the
# quoted part. Quotes elsewhere stay (a name may quote a word: 'Ovarian "benign" tumor'; single quotes are
# apostrophes: "Crohn's disease")
_QUOTED = re.compile(r"^(?:same as|also (?:called|known as)|known as|called|termed|named|a\.?k\.?a\.?|i\.e\.|"
                     r"e\.g\.)\s*[:,]?\s*[\"“«]([^\"“”«»]*[^\s\"“”«»][^\"“”«»]*)[\"”»]\W*$", re.IGNORECASE)


def _clean(piece):
    text = piece.replace("**", "").replace("__", "").strip()  # markdown bold
    quoted = _QUOTED.match(text)
    if quoted is not None:
        text = quoted.group(1)
    for _ in range(4):  # '1. "Name".' needs several passes
        before = text
        text = _LABEL.sub("", text)
        text = _BULLET.sub("", text)
        text = text.strip().strip(_QUOTES).strip()
        text = text.rstrip(".").strip()
        text = _CONJUNCTION.sub("", text)
        if text == before:
            break
    return " ".join(text.split())


def parse_aliases(text: str, name: str | None = None, exclude: Iterable[str] = (), definition: str | None = None,
                  max_chars: int = ALIAS_MAX_CHARS, max_words: int = ALIAS_MAX_WORDS, cut: bool = False) -> list[str]:
    """Aliases from an LLM reply (``cut``: one the token limit stopped, whose last piece is dropped: it stops
    mid-name, "Inflamed artic").

    Split on commas, semicolons, newlines and sentence ends; strip quotes, bullets, numbering
    ("1.", "2)"), labels ("Names:"), a leading "and"/"or", trailing periods and
    whitespace. Drop empties, duplicates (normalised: lowercase, collapsed
    whitespace), the entity's own ``name``, any name in ``exclude`` (the
    in-context examples, which a small model tends to copy), the definition or
    the instruction echoed back, sentences and meta-talk ("... is ...",
    "this definition"), text ending in ':' (a preamble), and strings too long
    to be a name (over ``max_chars`` characters or ``max_words`` words).
    """
    seen = {normalize(name)} if name else set()
    seen |= {normalize(item) for item in exclude}
    echoed = normalize(definition).rstrip(".").strip() if definition else None
    aliases = []
    pieces = _SPLIT.split(text or "")
    for piece in pieces[:-1] if cut else pieces:
        if piece.strip().endswith(":"):
            continue
        alias = _clean(piece)
        key = normalize(alias)
        if not key or key in seen or key in _NOT_NAMES or key == echoed:
            continue
        if len(alias) > max_chars or len(alias.split()) > max_words:
            continue
        if not any(character.isalpha() for character in alias):
            continue
        words = key.replace(".", " ").split()
        if len(words) >= 2 and " ".join(words) in _INSTRUCTION:
            continue
        if len(words) >= 3 and sum(word in _INSTRUCTION_WORDS for word in words) >= 0.75 * len(words):
            continue  # the instruction paraphrased ("Return all possible name names for the definition")
        if _SENTENCE_WORDS & set(words):
            continue
        seen.add(key)
        aliases.append(alias)
    return aliases


# ---------------------------------------------------------------------------------------------- step


class GenerationStats:
    """What a run did, for the one-line summary."""

    def __init__(self):
        self.prompted = 0
        self.skipped_no_definition = 0
        self.calls = 0
        self.cached = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.seconds = 0.0
        self.empty_replies = 0
        self.cut_replies = 0
        self.mention_calls = 0
        self.mention_counts_seen = 0
        self.started = time.perf_counter()

    def summary(self):
        wall = time.perf_counter() - self.started
        parts = [f"prompted {self.prompted} entities"]
        parts.append(f"skipped {self.skipped_no_definition} without definition")
        parts.append(f"{self.calls} LLM calls ({self.prompt_tokens} prompt + {self.completion_tokens} completion "
                     f"tokens, {self.seconds:.1f} s of generation)")
        parts.append(f"{self.cached} cached")
        parts.append(f"{self.empty_replies} replies without alias")
        if self.cut_replies:
            parts.append(f"{self.cut_replies} cut at --max-new-tokens (their unfinished last alias dropped)")
        if self.mention_counts_seen:
            parts.append(f"a per-mention approach would need {self.mention_calls} calls")
        else:
            parts.append("per-mention baseline unknown (no mention_count in the input)")
        return "gen-aliases: " + "; ".join(parts) + f"; {wall:.1f} s in all"


class CompleteBatches:
    """Completions of a batch of conversations, in order: what an engine's worker runs for gen-aliases.

    Pickled (sent to a Ray actor) it keeps the backend's registered name and options, and loads the
    model there on the first batch that needs a call, once per worker.
    """

    def __init__(self, backend, backend_name, options):
        self.backend = backend
        self.backend_name = backend_name
        self.options = options

    def __getstate__(self):
        return {"backend": None, "backend_name": self.backend_name, "options": self.options}

    def __call__(self, conversations):
        if not conversations:
            return []
        if self.backend is None:
            self.backend = load_backend(self.backend_name, **self.options)
        completions = [None] * len(conversations)
        for index, completion in self.backend.stream(conversations):
            completions[index] = completion
        return completions


def generate_aliases(records: Iterable[dict[str, Any]], ontology: Ontology, backend: LLMBackend, *, cache: Any = None,
                     domain: str = DEFAULT_DOMAIN, seed: int = DEFAULT_SEED, examples: int = DEFAULT_EXAMPLES,
                     batch_size: int | None = None, stats: Any = None, on_batch: Callable[..., Any] | None = None,
                     engine: Engine | None = None,
                     backend_options: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
    """Yield each Selected-entity record that has a definition with ``aliases`` and ``llm`` added.

    ``backend`` is an ``LLMBackend`` (ontolink.aliases.llm); ``cache`` a
    ``ResponseCache`` or None. Records without a definition are skipped and
    counted in ``stats``. Completions are committed to the cache as they come
    (an interrupted run loses at most the calls in flight); records are yielded
    batch by batch, in input order, and ``on_batch()`` is called after each
    batch (the command flushes its output there).

    With an ``engine`` that runs elsewhere (Ray), the calls a batch needs go to its workers, each
    loading the backend from ``backend_options`` once; this process keeps the cache (its only
    writer) and the counts. Batches in flight together are looked up in the cache before any of
    them is answered, so a prompt repeated across them is asked more than once.
    """
    stats = stats if stats is not None else GenerationStats()
    pool = ExamplePool(ontology, seed=seed, count=examples)
    if len(pool.pool) <= examples:
        warn(f"the ontology has only {len(pool.pool)} entities with a definition: prompts carry fewer than "
             f"{examples} in-context examples")
    batch_size = batch_size or backend.default_batch_size
    options = backend.describe()

    def look_up(batch):
        """(key -> (completion, cached) found in the cache, key -> messages to ask)."""
        keys = {}
        todo = {}
        for item in batch:
            key = cache_key(backend.name, backend.model_id, item["messages"], options)
            item["key"] = key
            if key in keys:
                continue
            hit = cache.get(key) if cache is not None else None
            if hit is not None:
                keys[key] = (hit, True)
            else:
                todo[key] = item["messages"]
        return keys, todo

    def finish(batch, keys, todo, completions):
        """Store ``completions`` ((index into todo, Completion) pairs), then yield the batch's records."""
        pending = list(todo)
        for index, completion in completions:
            key = pending[index]
            keys[key] = (completion, False)
            stats.calls += 1
            stats.prompt_tokens += completion.prompt_tokens or 0
            stats.completion_tokens += completion.completion_tokens or 0
            stats.seconds += completion.seconds or 0.0
            if cache is not None:
                cache.put(key, backend.name, backend.model_id, completion)
        for item in batch:
            completion, cached = keys[item["key"]]
            if cached:
                stats.cached += 1
            record = item["record"]
            # a reply the token limit stopped ends mid-name: its last piece is not kept
            cut = completion.completion_tokens is not None and completion.completion_tokens >= backend.max_new_tokens
            aliases = parse_aliases(completion.text, name=record.get("name"),
                                    exclude=[name for _, name in item["examples"]],
                                    definition=record.get("definition"), cut=cut)
            stats.cut_replies += cut
            if not aliases:
                stats.empty_replies += 1
            output = dict(record)
            output["aliases"] = aliases
            output["llm"] = {
                "backend": backend.name,
                "model": backend.model_id,
                "prompt_tokens": completion.prompt_tokens,
                "completion_tokens": completion.completion_tokens,
                "seconds": round(completion.seconds, 4) if completion.seconds is not None else None,
                "cached": cached,
            }
            yield output

    def prompted_batches():
        batch = []
        for record in records:
            count = record.get("mention_count")
            if isinstance(count, int):
                stats.mention_calls += count
                stats.mention_counts_seen += 1
            definition = (record.get("definition") or "").strip()
            if not definition:
                stats.skipped_no_definition += 1
                continue
            stats.prompted += 1
            chosen = pool.draw(record)
            batch.append({"record": record, "examples": chosen,
                          "messages": build_messages(definition, chosen, domain=domain)})
            if len(batch) >= batch_size:
                yield batch
                batch = []
        if batch:
            yield batch

    if engine is None or engine.in_process:
        for batch in prompted_batches():
            keys, todo = look_up(batch)
            yield from finish(batch, keys, todo, backend.stream(list(todo.values())) if todo else ())
            if on_batch is not None:
                on_batch()
    else:
        in_flight: deque[Any] = deque()

        def conversations():
            for batch in prompted_batches():
                keys, todo = look_up(batch)
                in_flight.append((batch, keys, todo))
                yield list(todo.values())

        complete = CompleteBatches(backend, LLM_BACKENDS.name_of(type(backend)), backend_options or {})
        for completions in engine.map(complete, conversations()):
            batch, keys, todo = in_flight.popleft()
            yield from finish(batch, keys, todo, enumerate(completions))
            if on_batch is not None:
                on_batch()
    if stats.skipped_no_definition:
        warn(f"{stats.skipped_no_definition} entities have no definition and cannot be prompted: skipped "
             "(not written)")


def backend_options(options: GenAliasesOptions) -> dict[str, Any]:
    """The keywords of ``options.backend``'s constructor that ``options`` set (each backend takes its own)."""
    chosen: dict[str, Any] = {"model": options.model, "max_new_tokens": options.max_new_tokens}
    if options.backend == "transformers":
        chosen.update(device=options.device, repetition_penalty=options.repetition_penalty,
                      no_repeat_ngram_size=options.no_repeat_ngram_size)
    elif options.backend == "vllm":
        chosen.update(repetition_penalty=options.repetition_penalty, seed=options.seed,
                      gpu_memory_utilization=options.gpu_memory_utilization, max_model_len=options.max_model_len)
    else:
        chosen.update(base_url=options.base_url, api_key_env=options.api_key_env, concurrency=options.concurrency,
                      retries=options.retries, timeout=options.timeout, run_timeout=options.run_timeout,
                      run_ends_at=time.time() + options.run_timeout if options.run_timeout else None,
                      seed=options.seed)
    return chosen


def generate_aliases_files(options: GenAliasesOptions) -> GenerationStats:
    """Read Selected-entity records, ask the LLM for each entity's aliases (cached replies reused) and write the
    Aliases records as they come, with progress and a summary line on stderr; returns the counts."""
    if options.backend == "openai" and not options.model:
        raise UsageError("--backend openai needs --model (the name the endpoint serves)")
    loaded = options.ontology.load()
    chosen = backend_options(options)
    read_stats = ReadStats()
    stats = GenerationStats()
    records = read_records(options.input_path, validate=validate_selected_entity, skip_invalid=options.skip_invalid,
                           stats=read_stats, check_duplicate_ids=True)
    records = read_first(records)  # the first record read before a model loads: bad input fails fast
    llm = load_backend(options.backend, **chosen)
    cache = None if options.no_cache else ResponseCache()

    start_engine = options.start_engine or (lambda device: open_engine(device=device))
    try:
        with start_engine(options.device) as engine, RecordWriter(options.output_path) as writer:
            for record in counting(generate_aliases(records, loaded, llm, cache=cache, domain=options.domain,
                                                    seed=options.seed, batch_size=options.batch_size, stats=stats,
                                                    on_batch=writer.flush, engine=engine, backend_options=chosen),
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
    return stats


def read_first(records: Iterable[Any]) -> Iterator[Any]:
    """The same records, the first one already read (so its errors surface now)."""
    iterator = iter(records)
    try:
        first = next(iterator)
    except StopIteration:
        return iter(())
    return itertools.chain([first], iterator)
