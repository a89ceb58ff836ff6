"""The options of the aliases commands (select-entities, ...), one typed object per command with each default given
here once: the command line shows these defaults and passes the object to the library function. Cheap to import:
`--help` reads it without loading what the commands run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ontolink.aliases.llm import DEFAULT_BACKEND
from ontolink.aliases.llm.base import DEFAULT_MAX_NEW_TOKENS
from ontolink.core.options import AUTO_DEVICE, DEFAULT_SEED, STDIO

if TYPE_CHECKING:
    from ontolink.ontology import OntologySource


@dataclass(frozen=True)
class SelectEntitiesOptions:
    """Everything `ontolink select-entities` is asked, each default given here once."""

    ontology: OntologySource
    index_dir: str | None = None  # without it, exact name matches only (E_EM)
    input_path: str = STDIO
    skip_invalid: bool = False
    output_path: str = STDIO
    device: str = AUTO_DEVICE
    start_engine: Callable[..., Any] | None = None  # opens the engine (cli.options.engine_options); None: here


@dataclass(frozen=True)
class GenAliasesOptions:
    """Everything `ontolink gen-aliases` is asked (``ontolink.aliases.generate.generate_aliases_files`` runs it)."""

    ontology: OntologySource  # the in-context examples are drawn from it
    input_path: str = STDIO
    skip_invalid: bool = False
    output_path: str = STDIO
    backend: str = DEFAULT_BACKEND  # a registered LLM backend (ontolink.aliases.llm.LLM_BACKENDS)
    model: str | None = None  # None: the backend's default (openai has none)
    domain: str = "biomedical"  # fills 'You are a specialist in {domain} terminology.'
    batch_size: int | None = None  # None: the backend's own
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    repetition_penalty: float = 1.0  # transformers, vllm
    no_repeat_ngram_size: int = 3  # transformers
    device: str = AUTO_DEVICE
    gpu_memory_utilization: float = 0.85  # vllm: the share of the GPU's total memory it claims
    max_model_len: int = 4096  # vllm: the longest prompt + reply it reserves KV cache for
    base_url: str | None = None  # openai; None: $OPENAI_BASE_URL, else https://api.openai.com/v1
    api_key_env: str = "OPENAI_API_KEY"  # openai
    concurrency: int = 4  # openai
    retries: int = 5  # openai
    timeout: float = 120.0  # openai: seconds each request (connecting, sending, the whole reply) may take
    run_timeout: float | None = None  # openai: seconds all requests of the run may take; None: no bound
    no_cache: bool = False  # neither read nor write the response cache
    seed: int = DEFAULT_SEED
    start_engine: Callable[..., Any] | None = None  # cli.options.engine_options; None: this process


@dataclass(frozen=True)
class FilterOptions:
    """Everything `ontolink filter` is asked, each default given here once."""

    ontology: OntologySource
    input_path: str = STDIO
    skip_invalid: bool = False
    output_path: str = STDIO
    model: str | None = None  # the sentence encoder; None: all-MiniLM-L6-v2 from its PyPI package
    tau: float = 0.9  # keep an alias only if its similarity to the entity's name is at least this
    neighbours: str = "n-plus"  # n-plus: parents, children and siblings; n: no siblings
    precision: str = "fp32"  # exact cosine similarities next to the tau threshold
    device: str = AUTO_DEVICE
    batch_size: int = 64


@dataclass(frozen=True)
class MakePairsOptions:
    """Everything `ontolink make-pairs` is asked, each default given here once."""

    ontology: OntologySource
    mentions_path: str | None = None  # the unlabeled Mention JSONL to pair ('-' is stdin); not for ontology
    input_path: str = STDIO  # Filtered-aliases records (read only for the alias source)
    skip_invalid: bool = False
    output_path: str = STDIO
    sources: str = "name,alias"  # comma-separated: name, alias, synonym, concept, ontology
    concept_min_votes: int = 2  # with concept: mentions of a concept that must name the entity it is bridged to
    distinct: bool = False  # one pair per (normalised mention, entity)
    ambiguous_path: str | None = None  # where the dropped ambiguous mentions go
    ontology_pairs: int | None = None  # with the ontology source: at most this many, a seeded sample (None: all)
    seed: int = DEFAULT_SEED
