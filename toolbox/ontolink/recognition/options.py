"""The options of `ontolink annotate`, one typed object with each default given here once: the command line shows
these defaults and passes the object to ``ontolink.recognition.annotate.annotate_files``. Cheap to import: `--help`
reads it without building a matcher or loading an index."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ontolink.core.options import AUTO_DEVICE, STDIO
from ontolink.recognition.ngrams import MAX_WORDS

if TYPE_CHECKING:
    from ontolink.ontology import OntologySource


@dataclass(frozen=True, kw_only=True)
class AnnotateOptions:
    """Everything `ontolink annotate` is asked, each default given here once."""

    ontology: OntologySource  # whose names are looked for
    input_path: str = STDIO
    skip_invalid: bool = False
    output_path: str = STDIO
    source_format: str | None = None  # the document format; None: from the file name, stdin: text
    roots: str | None = None  # comma-separated ids: only these entities and their descendants
    entities_path: str | None = None  # a file of ids: only these entities (on top of roots)
    where: tuple[str, ...] = ()  # FIELD=VALUE,...: only the entities with one of these values (ontology.subsets)
    min_chars: int = 3  # names shorter than this (after folding) are not looked for
    nesting: str = "ancestor"  # none, all or ancestor (recognition.matcher.NESTING_RULES)
    nested: bool = False  # the same as nesting "all"
    any_order: bool = True
    word_forms: bool = True
    max_gaps: int = 0
    optional_modifiers: bool = False
    equivalent_words: bool = True
    wordnet_dir: str | None = None  # a WordNet database: its pertainyms are equivalent words too
    alias_files: tuple[str, ...] = ()  # Aliases JSONL: each alias is a name of its entity too
    shared_names: str = "general"  # general or all (recognition.matcher.SHARED_NAMES)
    coordination: bool = True
    abbreviations: bool = False
    text_field: str = "text"  # JSON Lines documents: the field holding the text
    entity_type: str | None = None  # the "type" of every mention; None: its entity's type, else "Entity"
    index_dir: str | None = None  # also ask this index about word n-grams the dictionary missed
    dense_threshold: float = 0.9
    span_scorer_dir: str | None = None  # with index_dir: only the n-grams this span scorer passes are asked
    max_words: int = MAX_WORDS
    # context on each side of a mention: a window (recognition.annotate.DEFAULT_CONTEXT, whose module this one does
    # not import: --help stays cheap); 0: the whole document for every mention
    context_chars: int = 5_000
    batch_size: int = 32  # documents per batch sent to a worker (engine other than local)
    device: str = AUTO_DEVICE
    start_engine: Callable[..., Any] | None = None  # opens the engine (cli.options.engine_options); None: local
