"""`ontolink select-entities`: the few entities worth asking an LLM about (docs/methods.md: entity selection).

E_EM: entities whose name equals some mention (normalised); E_BT: the top-1
entity of a pretrained index for each mention. Aliases are then made per
selected entity, never per mention, which bounds the LLM cost.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ontolink.core.errors import InputError
from ontolink.ontology import normalize
from ontolink.linking.link import LinkBatches
from ontolink.core.device import release_gpu_memory
from ontolink.core.io import ReadStats, RecordWriter, read_records, warn
from ontolink.core.progress import counting
from ontolink.core.records import validate_mention
from ontolink.engines import ENGINES, open_engine
from ontolink.indexes.artifact import load_index
from ontolink.core.options import AUTO_DEVICE

if TYPE_CHECKING:
    from ontolink.indexes.artifact import LoadedIndex
    from ontolink.engines import Engine
    from ontolink.aliases.options import SelectEntitiesOptions
    from ontolink.ontology.model import Ontology

EXACT, BIENCODER = "exact", "biencoder"


class Selection:
    """Selected entities with their reasons and mention counts, plus the summary figures."""

    def __init__(self, ontology):
        self.ontology = ontology
        self.reasons = defaultdict(set)
        self.mention_counts = Counter()
        self.mentions = 0
        self.distinct_mentions = 0
        self.without_definition = 0

    def count(self, reason):
        return sum(1 for reasons in self.reasons.values() if reason in reasons)

    def records(self):
        """Entity records + selected_by + mention_count, most-mentioned first; undefined ones skipped."""
        order = sorted(self.reasons, key=lambda entity_id: (-self.mention_counts[entity_id], entity_id))
        for entity_id in order:
            entity = self.ontology[entity_id]
            if not entity.definition.strip():
                continue
            yield {**entity.to_record(self.ontology.synonym_scopes),
                   "selected_by": sorted(self.reasons[entity_id]),
                   "mention_count": self.mention_counts[entity_id]}

    def summary(self):
        union = len(self.reasons)
        share = union / max(1, len(self.ontology))
        return (f"{self.mentions} mentions ({self.distinct_mentions} distinct); |E_EM| = {self.count(EXACT)}, "
                f"|E_BT| = {self.count(BIENCODER)}, union {union} = {share:.2%} of {len(self.ontology)} entities; "
                f"{self.without_definition} without a definition skipped (cannot be prompted)")


class BestEntities(LinkBatches):
    """The best entity id (None if none) of each text of a batch: what an engine runs for E_BT."""

    def __init__(self, loaded_index, device=AUTO_DEVICE):
        super().__init__(loaded_index, top_k=1, device=device)

    def __call__(self, texts):
        return [candidates[0]["id"] if candidates else None for candidates in self._loaded_linker().search(texts)]


def select_entities(mentions: Iterable[dict[str, Any]], ontology: Ontology,
                    loaded_index: LoadedIndex | Callable[[], LoadedIndex] | None = None, batch_size: int = 256,
                    engine: Engine | None = None, device: str = AUTO_DEVICE) -> Selection:
    """Return a ``Selection`` for an iterable of Mention records.

    Mention texts are counted first (memory grows with distinct texts, not
    mentions), so each distinct text is matched and searched once; the
    searches go through ``engine`` (default: here), whose workers load the
    index on ``device``. ``loaded_index`` may be a function that loads it: it is
    called once the mentions are read, and the index let go (its GPU memory
    with it) before this returns, so the next step of a pipe finds the GPU free.
    """
    selection = Selection(ontology)
    text_counts: Counter[str] = Counter()
    for record in mentions:
        text_counts[normalize(record["mention"])] += 1
    selection.mentions = sum(text_counts.values())
    selection.distinct_mentions = len(text_counts)

    by_name = defaultdict(list)
    for entity in ontology:
        by_name[normalize(entity.name)].append(entity.id)
    pointed = defaultdict(set)  # mention text -> entities it selects
    for text in text_counts:
        for entity_id in by_name.get(text, ()):
            selection.reasons[entity_id].add(EXACT)
            pointed[text].add(entity_id)

    if loaded_index is not None:
        loads_its_own = callable(loaded_index) and not hasattr(loaded_index, "name_index")
        if loads_its_own:
            loaded_index = loaded_index()  # type: ignore[operator]  # a function that loads it

        texts = sorted(text_counts)
        chunks = [texts[start:start + batch_size] for start in range(0, len(texts), batch_size)]
        best = (engine.map if engine is not None else map)(BestEntities(loaded_index, device=device), chunks)
        for chunk, entity_ids in counting(zip(chunks, best), "select-entities (top-1 of the index)", "batch",
                                          total=len(chunks)):
            for text, entity_id in zip(chunk, entity_ids):
                if entity_id is not None:
                    selection.reasons[entity_id].add(BIENCODER)
                    pointed[text].add(entity_id)
        if loads_its_own:
            del best, loaded_index
            release_gpu_memory()

    for text, entity_ids in pointed.items():
        for entity_id in entity_ids:
            selection.mention_counts[entity_id] += text_counts[text]
    selection.without_definition = sum(1 for entity_id in selection.reasons
                                       if not ontology[entity_id].definition.strip())
    return selection


def select_entities_files(options: SelectEntitiesOptions) -> Selection:
    """Read Mention records from ``options.input_path``, write the Selected-entity records to
    ``options.output_path`` and a one-line summary to stderr; return the ``Selection``."""
    loaded = options.ontology.load()
    engine_name = getattr(options.start_engine, "name", "local")

    def named_index() -> Any:
        return load_index(str(options.index_dir), ontology=loaded, device=options.device)

    # loaded once the mentions are read, and let go before the output is written (a pipe's GPU)
    index = named_index if options.index_dir else None
    if not options.index_dir:
        if not ENGINES.get(engine_name).in_process:
            raise InputError(f"--engine {engine_name} searches --index in parallel: give --index")
        warn("no --index: selecting by exact name match only (E_EM)")
    stats = ReadStats()
    mentions = read_records(options.input_path, validate=validate_mention, skip_invalid=options.skip_invalid,
                            stats=stats, check_duplicate_ids=True)
    start_engine = options.start_engine or (lambda device: open_engine(device=device))
    with start_engine(options.device) as engine:
        selection = select_entities(mentions, loaded, loaded_index=index, engine=engine, device=options.device)
    with RecordWriter(options.output_path) as writer:
        writer.write_all(selection.records())
    warn(f"selected {writer.count} entities: {selection.summary()}")
    return selection
