"""`ontolink make-pairs`: pseudo-labeled mention–entity pairs (docs/methods.md: pseudo pairs).

P1 (source "name"): m ≡ n(e) for any entity; P2 ("alias"): m ≡ a kept alias
of e; P_Syn ("synonym"): m ≡ a curated synonym of e. Matching is on
normalised text. A mention matched to several entities by the most reliable
source that matches it (name, then synonym, then alias) is ambiguous: it is
reported and dropped, never silently assigned.

"concept" pairs a corpus labeled in another vocabulary (MeSH ids of BC5CDR,
say) with the ontology: a concept whose mentions that name an entity agree on
it lends that entity all its mentions, in the words the corpus's annotators
found (``concept_bridge``). It applies to mentions no string source paired.

"ontology" needs no corpus: every synonym of the ontology becomes a mention
of its entity (``ontology_pairs``), the self-alignment pairs SapBERT learns
from: a retriever trained on them learns the ontology's own ways of naming
its entities.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ontolink.aliases.options import MakePairsOptions
from ontolink.core.errors import InputError, UsageError
from ontolink.core.options import DEFAULT_SEED
from ontolink.ontology import normalize
from ontolink.core.io import RecordWriter, display_name, read_records, warn
from ontolink.core.progress import counting
from ontolink.core.records import alias_record_validator, validate_mention

if TYPE_CHECKING:
    from ontolink.ontology.model import Ontology

SOURCES = ("name", "synonym", "alias", "concept", "ontology")  # precedence order (ontology: no corpus mention)
# the sources make-pairs reads unless --sources says otherwise, as build_matcher takes them
DEFAULT_SOURCES = tuple(MakePairsOptions.sources.split(","))
CONCEPT_MIN_VOTES = MakePairsOptions.concept_min_votes  # a concept's mentions that must name the entity it is bridged to
CONCEPT_MARGIN = 4  # ... at least this many times as often as any other entity


class PairStats:
    def __init__(self):
        self.mentions = 0
        self.by_source = Counter()
        self.ambiguous = 0
        self.unmatched = 0
        self.ontology_sampled_from = None  # the ontology pairs a sample was drawn from (--ontology-pairs)
        self.repeats = None  # pairs --distinct left out (None: not asked)

    def summary(self):
        made = sum(self.by_source.values())
        by_source = ", ".join(f"{source} {self.by_source[source]}" for source in SOURCES if self.by_source[source])
        if self.ontology_sampled_from is not None:
            by_source += f", a sample of {self.ontology_sampled_from}"
        written = "" if self.repeats is None else f", {made - self.repeats} written ({self.repeats} repeats left out)"
        return (f"{made} pairs from {self.mentions} mentions ({by_source or 'none'}){written}; "
                f"{self.ambiguous} ambiguous mentions dropped, {self.unmatched} unmatched")


def build_matcher(ontology: Ontology, alias_records: Iterable[dict[str, Any]] | None,
                  sources: Sequence[str] = DEFAULT_SOURCES,
                  source_name: str = "<stdin>") -> dict[str, dict[str, dict[str, str]]]:
    """normalised text -> source -> {entity id: matched string}, from the ``sources`` (default: make-pairs' own)."""
    unknown = set(sources) - set(SOURCES)
    if unknown:
        raise InputError(f"unknown pair source(s) {', '.join(sorted(unknown))} (known: {', '.join(SOURCES)})")
    table: dict[str, dict[str, dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
    for entity in ontology:
        if "name" in sources:
            table[normalize(entity.name)]["name"].setdefault(entity.id, entity.name)
        if "synonym" in sources:
            for text, scope in entity.synonyms:
                if scope in ontology.synonym_scopes:
                    table[normalize(text)]["synonym"].setdefault(entity.id, text)
    if "alias" in sources:
        for record in alias_records or ():
            if record["id"] not in ontology:
                raise InputError(f"alias record for {record['id']!r}, which is not in ontology {ontology.label}",
                                 source_name)
            for alias in record.get("aliases") or []:
                if normalize(alias):
                    table[normalize(alias)]["alias"].setdefault(record["id"], alias)
    return table


def mention_concept(mention):
    """The one concept id a labeled mention carries, else None (unlabeled, or several ids)."""
    gold = mention.get("gold") or []
    return gold[0] if len(gold) == 1 else None


def concept_bridge(mentions: Iterable[dict[str, Any]], ontology: Ontology,
                   min_votes: int = CONCEPT_MIN_VOTES) -> dict[str, tuple[str, str]]:
    """{concept id: (entity id, the name most of them matched)}: each concept of labeled ``mentions`` whose
    mentions that are the name or a synonym of exactly one entity agree on it, at least ``min_votes`` of them
    and ``CONCEPT_MARGIN`` times as many as for any other entity (BC5CDR's MeSH D012640, "seizures" ... ->
    HPO's Seizure)."""
    matcher = build_matcher(ontology, (), ("name", "synonym"))
    # concept -> entity id -> its mentions that name the entity
    votes: defaultdict[str, Counter[str]] = defaultdict(Counter)
    # (concept, entity id) -> the names those mentions matched
    names: defaultdict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for mention in mentions:
        concept = mention_concept(mention)
        by_source = matcher.get(normalize(mention["mention"])) if concept is not None else None
        if by_source:
            entities = by_source.get("name") or by_source["synonym"]
            if len(entities) == 1:
                (entity_id, name), = entities.items()
                votes[concept][entity_id] += 1
                names[concept, entity_id][name] += 1
    bridge = {}
    for concept, counts in votes.items():
        (entity_id, count), *others = counts.most_common()
        if count >= min_votes and all(count >= CONCEPT_MARGIN * other for _, other in others):
            bridge[concept] = (entity_id, names[concept, entity_id].most_common(1)[0][0])
    return bridge


def make_pairs(mentions: Iterable[dict[str, Any]], matcher: dict[str, dict[str, dict[str, str]]], stats: Any = None,
               on_ambiguous: Callable[[dict[str, Any], str | None, list[str]], Any] | None = None,
               concepts: dict[str, tuple[str, str]] | None = None) -> Iterator[dict[str, Any]]:
    """Yield one Pair record per matched, unambiguous mention; ``concepts`` (``concept_bridge``) pairs the
    labeled mentions that no string source paired."""
    stats = stats if stats is not None else PairStats()
    for mention in mentions:
        stats.mentions += 1
        by_source = matcher.get(normalize(mention["mention"]))
        source = next((source for source in SOURCES if by_source and by_source.get(source)), None)
        entities = by_source[source] if by_source and source else {}
        if len(entities) != 1:
            bridged = concepts.get(mention_concept(mention)) if concepts else None
            if bridged is not None:
                stats.by_source["concept"] += 1
                yield {**mention, "entity_id": bridged[0], "source": "concept", "alias": bridged[1]}
            elif not entities:
                stats.unmatched += 1
            else:
                stats.ambiguous += 1
                if on_ambiguous is not None:
                    on_ambiguous(mention, source, sorted(entities))
            continue
        (entity_id, matched), = entities.items()
        also = [other for other in SOURCES if other != source and entity_id in (by_source or {}).get(other, {})]
        stats.by_source[source] += 1
        yield {**mention, "entity_id": entity_id, "source": source, "alias": matched,
               **({"also_matched_by": also} if also else {})}


def ontology_pairs(ontology: Ontology, stats: Any = None,
                   on_ambiguous: Callable[[dict[str, Any], str | None, list[str]], Any] | None = None,
                   limit: int | None = None, seed: int = DEFAULT_SEED) -> list[dict[str, Any]]:
    """A Pair record for each synonym of each entity (in ``ontology.synonym_scopes``): the synonym is the
    mention, "source": "ontology". A synonym that is its own entity's name, or another of its synonyms, once
    normalised teaches nothing and is skipped; one that names another entity too is ambiguous and dropped.
    ``limit``: at most that many, a sample drawn with ``seed`` and kept in the ontology's order (a CPU trains
    on all of HPO's 21,472 for a quarter of an hour)."""
    stats = stats if stats is not None else PairStats()
    pairs = list(_synonym_pairs(ontology, stats, on_ambiguous))
    if limit is not None and limit < len(pairs):
        stats.ontology_sampled_from = len(pairs)
        pairs = [pairs[position] for position in sorted(random.Random(seed).sample(range(len(pairs)), limit))]
    stats.by_source["ontology"] += len(pairs)
    return pairs


def _synonym_pairs(ontology, stats, on_ambiguous):
    matcher = build_matcher(ontology, (), ("name", "synonym"))
    for entity in ontology:
        seen = {normalize(entity.name)}
        for number, (text, scope) in enumerate(entity.synonyms):
            key = normalize(text)
            if scope not in ontology.synonym_scopes or key in seen:
                continue
            seen.add(key)
            stats.mentions += 1
            pair = {"id": f"{entity.id}#synonym{number}", "mention": text, "entity_id": entity.id,
                    "source": "ontology", "alias": text}
            named = set(matcher[key].get("name", {})) | set(matcher[key].get("synonym", {}))
            if named != {entity.id}:
                stats.ambiguous += 1
                if on_ambiguous is not None:
                    on_ambiguous(pair, "ontology", sorted(named))
                continue
            yield pair


def distinct_pairs(pairs: Iterable[dict[str, Any]], stats: PairStats | None = None) -> Iterator[dict[str, Any]]:
    """The first pair of each (normalised mention, entity): repeats of a mention add weight, not queries
    (``stats.repeats`` counts those left out)."""
    seen = set()
    if stats is not None:
        stats.repeats = 0
    for pair in pairs:
        key = (normalize(pair["mention"]), pair["entity_id"])
        if key not in seen:
            seen.add(key)
            yield pair
        elif stats is not None:
            stats.repeats += 1


def make_pairs_files(options: MakePairsOptions) -> PairStats:
    """`ontolink make-pairs`: pair the mentions of ``options.mentions_path`` with entities, write the Pair
    records to ``options.output_path`` (the ambiguous mentions to ``options.ambiguous_path`` when given) and a
    summary to stderr; return the counts."""
    loaded = options.ontology.load()
    chosen = tuple(part.strip() for part in options.sources.split(",") if part.strip())
    from_corpus = [source for source in chosen if source != "ontology"]  # the sources that read --mentions
    if from_corpus and options.mentions_path is None:
        raise UsageError(f"--sources {','.join(from_corpus)} pairs the mentions of a corpus: give --mentions "
                         "(--sources ontology alone needs none)")
    if options.input_path == "-" and options.mentions_path == "-":
        raise UsageError("stdin can feed either the aliases (-i) or --mentions, not both")
    alias_records = read_records(options.input_path, validate=alias_record_validator(loaded, resolved=False),
                                 skip_invalid=options.skip_invalid, check_duplicate_ids=True) if "alias" in chosen else ()
    matcher = build_matcher(loaded, alias_records, from_corpus, source_name=display_name(options.input_path))
    stats = PairStats()
    ambiguous_writer = RecordWriter(options.ambiguous_path) if options.ambiguous_path else None
    shown: list[str] = []

    def report(mention, source, entity_ids):
        example = f"{mention['mention']!r} ({source}: {', '.join(entity_ids)})"
        if len(shown) < 3 and example not in shown:  # a synonym shared by entities is met once per entity
            shown.append(example)
        if ambiguous_writer is not None:
            ambiguous_writer.write({**mention, "source": source, "entity_ids": entity_ids})

    pairs: Iterable[dict[str, Any]] = ()
    if from_corpus:
        mentions: Iterable[dict[str, Any]] = counting(read_records(options.mentions_path, validate=validate_mention,
                                                                    skip_invalid=options.skip_invalid,
                                                                    check_duplicate_ids=True),
                                                       "make-pairs", "mention")
        concepts = None
        if "concept" in chosen:  # the votes need every mention before the first pair
            mentions = list(mentions)
            concepts = concept_bridge(mentions, loaded, options.concept_min_votes)
            labeled = {mention_concept(mention) for mention in mentions} - {None}
            warn(f"make-pairs: {len(concepts)} of {len(labeled)} concepts bridged to {loaded.label}")
        pairs = make_pairs(mentions, matcher, stats, on_ambiguous=report, concepts=concepts)
    if "ontology" in chosen:  # after the corpus's pairs, which it does not read
        pairs = itertools.chain(pairs, ontology_pairs(loaded, stats, on_ambiguous=report,
                                                      limit=options.ontology_pairs, seed=options.seed))
    try:
        with RecordWriter(options.output_path) as writer:
            writer.write_all(distinct_pairs(pairs, stats) if options.distinct else pairs)
    finally:
        if ambiguous_writer is not None:
            ambiguous_writer.close()
    if shown:
        warn(f"ambiguous mentions dropped, e.g. {'; '.join(shown)}")
    warn(f"make-pairs: {stats.summary()}")
    return stats
