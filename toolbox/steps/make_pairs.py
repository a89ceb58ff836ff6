"""`ontolink make-pairs`: pseudo-labeled mention–entity pairs (METHODS.md §1.4).

P1 (source "name"): m ≡ n(e) for any entity; P2 ("alias"): m ≡ a kept alias
of e; P_Syn ("synonym"): m ≡ a curated synonym of e. Matching is on
normalised text. A mention matched to several entities by the most reliable
source that matches it (name, then synonym, then alias) is ambiguous: it is
reported and dropped, never silently assigned.
"""

from collections import Counter, defaultdict

from toolbox.errors import InputError
from toolbox.ontology import normalize

SOURCES = ("name", "synonym", "alias")  # precedence order


class PairStats:
    def __init__(self):
        self.mentions = 0
        self.by_source = Counter()
        self.ambiguous = 0
        self.unmatched = 0

    def summary(self):
        made = sum(self.by_source.values())
        by_source = ", ".join(f"{source} {self.by_source[source]}" for source in SOURCES if self.by_source[source])
        return (f"{made} pairs from {self.mentions} mentions ({by_source or 'none'}); "
                f"{self.ambiguous} ambiguous mentions dropped, {self.unmatched} unmatched")


def build_matcher(ontology, alias_records, sources=SOURCES, source_name="<stdin>"):
    """normalised text -> source -> {entity id: matched string}."""
    unknown = set(sources) - set(SOURCES)
    if unknown:
        raise InputError(f"unknown pair source(s) {', '.join(sorted(unknown))} (known: {', '.join(SOURCES)})")
    table = defaultdict(lambda: defaultdict(dict))
    for entity in ontology:
        if "name" in sources:
            table[normalize(entity.name)]["name"].setdefault(entity.id, entity.name)
        if "synonym" in sources:
            for text, scope in entity.synonyms:
                if scope in ontology.synonym_scopes:
                    table[normalize(text)]["synonym"].setdefault(entity.id, text)
    if "alias" in sources:
        for record in alias_records:
            if record["id"] not in ontology:
                raise InputError(f"alias record for {record['id']!r}, which is not in ontology {ontology.label}",
                                 source_name)
            for alias in record.get("aliases") or []:
                if normalize(alias):
                    table[normalize(alias)]["alias"].setdefault(record["id"], alias)
    return table


def make_pairs(mentions, matcher, stats=None, on_ambiguous=None):
    """Yield one Pair record per matched, unambiguous mention."""
    stats = stats if stats is not None else PairStats()
    for mention in mentions:
        stats.mentions += 1
        by_source = matcher.get(normalize(mention["mention"]))
        if not by_source:
            stats.unmatched += 1
            continue
        source = next(source for source in SOURCES if by_source.get(source))
        entities = by_source[source]
        if len(entities) > 1:
            stats.ambiguous += 1
            if on_ambiguous is not None:
                on_ambiguous(mention, source, sorted(entities))
            continue
        (entity_id, matched), = entities.items()
        also = [other for other in SOURCES if other != source and entity_id in by_source.get(other, {})]
        stats.by_source[source] += 1
        yield {**mention, "entity_id": entity_id, "source": source, "alias": matched,
               **({"also_matched_by": also} if also else {})}
