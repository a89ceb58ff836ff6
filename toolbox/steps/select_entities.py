"""`ontolink select-entities`: the few entities worth asking an LLM about (METHODS.md §1.1).

E_EM: entities whose name equals some mention (normalised); E_BT: the top-1
entity of a pretrained index for each mention. Aliases are then made per
selected entity, never per mention, which bounds the LLM cost.
"""

from collections import Counter, defaultdict

from toolbox.ontology import normalize

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


def select_entities(mentions, ontology, loaded_index=None, batch_size=256):
    """Return a ``Selection`` for an iterable of Mention records.

    Mention texts are counted first (memory grows with distinct texts, not
    mentions), so each distinct text is matched and searched once.
    """
    selection = Selection(ontology)
    text_counts = Counter()
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
        from toolbox.steps.link import Linker

        from toolbox.progress import progress_bar

        linker = Linker(loaded_index, top_k=1, cache_size=0)
        texts = sorted(text_counts)
        with progress_bar(total=len(texts), desc="select-entities (top-1 of the index)", unit="text") as progress:
            for start in range(0, len(texts), batch_size):
                chunk = texts[start:start + batch_size]
                for text, candidates in zip(chunk, linker.search(chunk)):
                    if candidates:
                        entity_id = candidates[0]["id"]
                        selection.reasons[entity_id].add(BIENCODER)
                        pointed[text].add(entity_id)
                progress.update(len(chunk))

    for text, entity_ids in pointed.items():
        for entity_id in entity_ids:
            selection.mention_counts[entity_id] += text_counts[text]
    selection.without_definition = sum(1 for entity_id in selection.reasons
                                       if not ontology[entity_id].definition.strip())
    return selection
