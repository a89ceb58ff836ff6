"""`ontolink annotate`: find mentions of an ontology's names in raw documents.

The dictionary step is ``recognition.matcher.ConceptMatcher``: a name is found when its content
words occur close together in one clause, in any order and any word form ("absence of speech"
for "Absent speech"); overlapping matches keep the one covering more words, and a name inside it
stays when its entity is the outer entity's ancestor ("colitis" in "ulcerative colitis"). A dense
index can add spans the dictionary misses: word n-grams whose best name scores at least a
threshold.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ontolink.core.encoder_inputs import CONTEXT_CHARACTERS as CONTEXT
from ontolink.formats import (document_text, Counted, Problems, document_format, duplicate_ids_said,
                              resolve_format)
from ontolink.recognition.matcher import ConceptMatcher
from ontolink.recognition.ngrams import MAX_WORDS, candidate_spans
from ontolink.core.errors import InputError, UsageError
from ontolink.core.gc_pause import collection_paused
from ontolink.core.io import RecordWriter, display_name, plural, warn
from ontolink.core.progress import counting
from ontolink.recognition.equivalents import read_pertainyms
from ontolink.recognition.extra_names import read_extra_names
from ontolink.ontology.subsets import EntitySubset, types_of
from ontolink.core.options import AUTO_DEVICE
from ontolink.recognition.options import AnnotateOptions

if TYPE_CHECKING:
    from bioc import BioCDocument

    from ontolink.indexes.artifact import LoadedIndex
    from ontolink.ontology.model import Ontology
    from ontolink.recognition.span_scorer import SpanScorer

# characters of context kept on each side of a mention by default: a window, so that the output grows with the
# mentions, not with mentions times the document (the whole text for each of 3,000 mentions of a 100,000-character
# document is 600 MB); an abstract fits in it whole. 0 asks for the whole document.
DEFAULT_CONTEXT = AnnotateOptions.context_chars
DENSE_BLOCK = 4_096  # n-grams asked of the index at once (as `link` asks its mentions)


def annotate_documents(documents: Iterable[BioCDocument | tuple[str, str]], matcher: ConceptMatcher,
                       entity_type: str | None = None, nesting: str = AnnotateOptions.nesting,
                       coordination: bool = AnnotateOptions.coordination,
                       abbreviations: bool = AnnotateOptions.abbreviations, dense: LoadedIndex | None = None,
                       dense_threshold: float = AnnotateOptions.dense_threshold, max_words: int = MAX_WORDS,
                       context_characters: int = DEFAULT_CONTEXT, stats: Any = None,
                       span_scorer: SpanScorer | None = None) -> Iterator[dict[str, Any]]:
    """Yield a Mention record per name found in each document (no gold: these are predictions).

    ``matcher`` is a ``ConceptMatcher``; a mention's "type" is ``entity_type``, or (None) its entity's type in
    the ontology (``Entity.type``: a type column or field), "Entity" when it has none; ``nesting`` its rule for
    names inside a longer match,
    ``coordination`` and ``abbreviations`` whether coordinated names and short forms defined in
    the document are found too (``matched_by`` says which found a mention). ``stats`` (a dict)
    counts the documents without text under "empty". Each mention keeps ``context_characters`` of
    context on each side (``DEFAULT_CONTEXT``; 0: the whole document, which costs the document's
    length for every mention).
    ``dense`` (a loaded index) adds n-gram spans outside the dictionary's
    matches whose best name scores at least ``dense_threshold``; with ``span_scorer``
    (``recognition.span_scorer.SpanScorer``) only the n-grams it passes are asked about. ``documents`` are BioC documents
    or (id, text) pairs.
    """
    linker = None
    if dense is not None:
        from ontolink.linking.linker import Linker  # late: loads numpy

        # with roots, the best candidate inside them: the nearest name may lie outside ("affected")
        linker = Linker(dense, top_k=1 if matcher.allowed is None else 20)
    kind_of = (lambda ids: entity_type) if entity_type is not None else _type_of(matcher)
    for document in documents:
        doc_id, text = document if isinstance(document, tuple) else (document.id, document_text(document))
        if not text.strip():
            if stats is not None:
                stats["empty"] = stats.get("empty", 0) + 1
            continue
        keep = context_characters
        found = matcher.spans(text, nesting=nesting, coordination=coordination, abbreviations=abbreviations)
        if linker is not None:
            found += _dense_spans(text, found, linker, dense, dense_threshold, max_words, matcher.allowed,
                                  span_scorer)
        for start, end, ids, source, expansion in sorted(found, key=lambda span: span[:4] + (span[4] or "",)):
            if keep:  # sliced to the context kept, not copied whole first: that was quadratic in a long document
                left, right = text[max(0, start - keep):start], text[end:end + keep]
            else:
                left, right = text[:start], text[end:]
            record = {"id": f"{doc_id}:{start}-{end}", "doc_id": doc_id, "start": start, "end": end,
                      "mention": text[start:end], "context_left": left, "context_right": right, "type": kind_of(ids),
                      "matched_by": source, "matched_ids": ids}
            if expansion:
                record["expansion"] = expansion  # what `link` searches: "palmar pits" for "palmar and plantar pits"
            yield record


DEFAULT_TYPE = "Entity"  # a mention's type when its entity has none and --type is not given


def _type_of(matcher: ConceptMatcher) -> Any:
    """ids -> the type of a mention of these entities: the first one's type in the matcher's ontology; for a
    mention of no entity (a coordination's words spread over one name), the type every entity looked for has
    when they share one (`--where type=Disease`); else DEFAULT_TYPE."""
    entities = matcher.ontology.entities
    looked_for = entities.values() if matcher.allowed is None else (entities[key] for key in matcher.allowed)
    shared = {entity.type for entity in looked_for}
    only = shared.pop() if len(shared) == 1 else None

    def kind(ids: list[str]) -> str:
        entity = entities.get(ids[0]) if ids else None
        return (entity.type if entity is not None else only) or DEFAULT_TYPE

    return kind


def _dense_spans(text, found, linker, loaded, threshold, max_words, allowed=None, span_scorer=None):
    taken = [False] * len(text)
    for start, end, *_ in found:
        taken[start:end] = [True] * (end - start)
    spans = candidate_spans(text, taken, max_words)
    scored = []
    # a block of n-grams at a time: the candidate lists of all of a long document's n-grams at once held 1 GB for
    # 768,000 characters (20 a span under --roots)
    for first in range(0, len(spans), DENSE_BLOCK):
        block = spans[first:first + DENSE_BLOCK]
        if span_scorer is not None:
            passed = span_scorer.scores([text[start:end] for start, end in block]) >= span_scorer.threshold
            block = [span for span, keep in zip(block, passed.tolist()) if keep]
        if not block:
            continue
        # the context an encoder reads, not the whole text around each n-gram: copied for each n-gram of a long
        # document, that was quadratic in its length
        queries = [loaded.query_text({"mention": text[start:end], "context_left": text[max(0, start - CONTEXT):start],
                                      "context_right": text[end:end + CONTEXT]}) for start, end in block]
        for (start, end), candidates in zip(block, linker.candidates(queries)):
            if allowed is not None:
                candidates = [candidate for candidate in candidates if candidate["id"] in allowed][:1]
            if candidates and candidates[0]["score"] >= threshold:
                scored.append((candidates[0]["score"], end - start, start, end, candidates[0]["id"]))
    chosen = []
    for score, _, start, end, entity_id in sorted(scored, key=lambda item: (-item[0], -item[1], item[2])):
        if any(taken[start:end]):
            continue
        taken[start:end] = [True] * (end - start)
        chosen.append((start, end, [entity_id], "dense", None))
    return chosen


class AnnotateBatches:
    """Annotates one batch of (id, text) documents: the function an engine runs on each batch; returns
    (Mention records, counts as ``annotate_documents`` keeps them).

    Pickled (sent to a Ray actor) it keeps only the ontology's source, the matcher's options and
    where the dense index is, and builds the matcher (loads the index) on its first batch there,
    once per worker.
    """

    def __init__(self, source, matcher_options, options, index_dir=None, device=AUTO_DEVICE, matcher=None, dense=None,
                 span_scorer_dir=None, span_scorer=None):
        self.source, self.matcher_options, self.options = source, matcher_options, options
        self.index_dir, self.device, self.span_scorer_dir = index_dir, device, span_scorer_dir
        self.matcher, self.dense, self.span_scorer = matcher, dense, span_scorer

    def __getstate__(self):
        return {key: value for key, value in self.__dict__.items() if key not in ("matcher", "dense", "span_scorer")}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.matcher = self.dense = self.span_scorer = None

    def __call__(self, batch):
        if self.matcher is None:
            loaded = self.source.load()
            self.matcher = ConceptMatcher(loaded, **self.matcher_options)
            if self.index_dir:
                from ontolink.indexes.artifact import load_index  # late: loads numpy

                self.dense = load_index(self.index_dir, ontology=loaded, device=self.device)
            if self.span_scorer_dir:
                from ontolink.recognition.span_scorer_artifact import load_span_scorer  # late: loads numpy

                self.span_scorer = load_span_scorer(self.span_scorer_dir)
        stats = {}
        records = list(annotate_documents(batch, self.matcher, dense=self.dense, stats=stats,
                                          span_scorer=self.span_scorer, **self.options))
        return records, stats


def document_batches(documents, size):
    """(id, text) pairs of BioC ``documents``, ``size`` at a time."""
    batch = []
    for document in documents:
        batch.append((document.id, document_text(document)))
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _matcher_options(options: AnnotateOptions, loaded: Ontology) -> dict[str, Any]:
    """The ConceptMatcher's keywords from annotate's options (the --roots checked against ``loaded``, the
    --entities and --where subset chosen from it)."""
    root_ids = [part.strip() for part in options.roots.split(",") if part.strip()] if options.roots else None
    if root_ids:
        missing = [root for root in root_ids if root not in loaded]
        if missing:
            raise InputError(f"--roots: {', '.join(missing)} not in the ontology {loaded.label}")
    subset = EntitySubset(options.entities_path, options.where).choose(
        list(loaded.entities), types_of(loaded), f"the ontology {loaded.label}")
    return dict(roots=root_ids, subset=subset, min_characters=options.min_chars, max_gaps=options.max_gaps,
                word_forms=options.word_forms, any_order=options.any_order,
                optional_modifiers=options.optional_modifiers, shared_names=options.shared_names,
                equivalents=options.equivalent_words)


def annotate_files(options: AnnotateOptions) -> int:
    """`ontolink annotate`: find the names of ``options.ontology`` in the documents of ``options.input_path``,
    write Mention records to ``options.output_path`` as the documents stream and a one-line summary to stderr;
    returns the number of mentions written."""
    import time

    source_format = options.source_format
    if source_format is None and options.input_path == "-":
        source_format = "text"
    with collection_paused(freeze=True):  # what is loaded lives until the end: out of the collector's walks
        loaded = options.ontology.load()
    matcher_options = _matcher_options(options, loaded)
    started = time.perf_counter()
    if options.wordnet_dir:
        matcher_options["pertainyms"] = read_pertainyms(options.wordnet_dir)
    if options.alias_files:
        matcher_options["extra_names"] = read_extra_names(options.alias_files, loaded)
    nesting = "all" if options.nested else options.nesting
    found_options: dict[str, Any] = dict(entity_type=options.entity_type, nesting=nesting,
                                         coordination=options.coordination, abbreviations=options.abbreviations,
                                         dense_threshold=options.dense_threshold, max_words=options.max_words,
                                         context_characters=options.context_chars)
    if options.span_scorer_dir and not options.index_dir:
        raise UsageError("--span-scorer chooses the n-grams asked of an --index: give both")
    span_scorer = None
    if options.span_scorer_dir:
        from ontolink.recognition.span_scorer_artifact import load_span_scorer  # late: loads numpy

        span_scorer = load_span_scorer(options.span_scorer_dir)
    with collection_paused(freeze=True):
        matcher = ConceptMatcher(loaded, **matcher_options)
        dense = None
        if options.index_dir:
            from ontolink.indexes.artifact import load_index  # late: loads numpy

            dense = load_index(options.index_dir, ontology=loaded, device=options.device)
    problems = Problems(options.skip_invalid)
    reader = document_format(resolve_format(options.input_path, source_format))
    if hasattr(reader, "text_field"):  # JSON Lines documents
        reader.text_field = options.text_field
    stats: dict[str, int] = {}
    # a bar per document (on a terminal): with --index the dense spans take seconds a document
    documents = Counted(counting(duplicate_ids_said(reader.read(options.input_path, problems),
                                                    display_name(options.input_path)), "annotate", "document"))
    with RecordWriter(options.output_path) as writer:
        start_engine = options.start_engine
        if start_engine is None or getattr(start_engine, "name", "local") == "local":
            writer.write_all(annotate_documents(documents, matcher, dense=dense, stats=stats, span_scorer=span_scorer,
                                                **found_options), flush_every=1)
        else:
            annotate = AnnotateBatches(options.ontology, matcher_options, found_options, options.index_dir,
                                       options.device, matcher, dense, options.span_scorer_dir, span_scorer)
            with start_engine(options.device) as engine:
                for records, counts in engine.map(annotate, document_batches(documents, options.batch_size)):
                    writer.write_all(records, flush_every=1)
                    for key, count in counts.items():
                        stats[key] = stats.get(key, 0) + count
    _summary(loaded, matcher, matcher_options, writer.count, documents.count, problems.skipped, stats,
             time.perf_counter() - started)
    return writer.count


def _summary(loaded, matcher, matcher_options, mentions, documents, skipped_lines, stats, seconds):
    skipped = f"; {plural(skipped_lines, 'invalid line')} skipped" if skipped_lines else ""
    if stats.get("empty"):
        skipped += f"; {plural(stats['empty'], 'document')} without text"
    # the names counted as `index` counts them (every name and synonym of the entities looked for), then the
    # distinct forms they fold to, which is what the matcher holds
    looked_for = [entity for entity in loaded if matcher.allowed is None or entity.id in matcher.allowed]
    names = sum(len(loaded.named(entity)) for entity in looked_for)
    extra_names = matcher_options.get("extra_names", {})
    aliases = sum(len(extra_names.get(entity.id, ())) for entity in looked_for)
    with_aliases = f" and {plural(aliases, 'alias', 'aliases')}" if aliases else ""
    warn(f"found {plural(mentions, 'mention')} in {plural(documents, 'document')} ({plural(names, 'name')} "
         f"of {plural(len(looked_for), 'entity', 'entities')}{with_aliases}, "
         f"{matcher.size} distinct once folded"
         f"{f', {matcher.variants} more with equivalent words' if matcher.variants else ''}) in {seconds:.1f} s"
         f"{skipped}")
