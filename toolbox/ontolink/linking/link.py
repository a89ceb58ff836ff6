"""`ontolink link`: top-K entities for each mention, streamed in batches."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ontolink.core.gc_pause import collection_paused
from ontolink.core.io import record_batches
from ontolink.linking.linker import Linker
from ontolink.linking.options import LinkOptions, ranker_depth, trained_top_k
from ontolink.recognition.wordforms import fold, words
from ontolink.engines import open_engine
from ontolink.indexes.artifact import load_index
from ontolink.ranking.ranker import Ranker
from ontolink.recognition import wordforms
from ontolink.reranking.base import load_reranker
from ontolink.core.options import AUTO_DEVICE
from ontolink.ranking import AUTO_PRIOR

if TYPE_CHECKING:
    from ontolink.indexes.artifact import LoadedIndex
    from ontolink.engines import Engine

# `annotate` sources whose "matched_ids" are the entities of the name found over the mention's whole span
# (dense n-grams carry the index's own guess, which link makes again).
DICTIONARY_SOURCES = frozenset(("dictionary", "coordination", "abbreviation"))

# Mentions a batch: large batches give the encoder and the search large blocks (6,284 mentions linked 1.5x
# as fast at 4,096 as at 256); a cross-encoder reranker takes seconds a batch, so its progress shows per 256.
LINK_BATCH_SIZE = 4096
RERANK_BATCH_SIZE = 256


def folded_key(text, folded_words=None):
    """A name or mention with the light folding `annotate` applies to one-word names: its words folded
    (case except abbreviations, British spellings, plurals; recognition.wordforms.fold), joined by one space.
    ``folded_words``: a dict remembering each word's folding (a vocabulary repeats its words)."""
    if folded_words is None:
        return " ".join(fold(word) for word in words(text))
    keys = []
    for word in words(text):
        key = folded_words.get(word)
        if key is None:
            key = fold(word)
            if len(folded_words) < MAX_FOLDED_WORDS:
                folded_words[word] = key
        keys.append(key)
    return " ".join(keys)


MAX_FOLDED_WORDS = 1_000_000  # a long corpus brings ever new words: their foldings are remembered up to this
FOLDED_NAMES = "folded_names"  # the index's table of each name's folded_key (ontolink.indexes.artifact.TABLES_FILE)


@functools.lru_cache(maxsize=1)
def folding_digest():
    """What a stored folded-name table was made by: the folding's code (recognition.wordforms and
    ``folded_key``); an index built by other code gets its table made again at load."""
    import hashlib
    import inspect

    try:
        code = Path(wordforms.__file__).read_bytes() + inspect.getsource(folded_key).encode()
    except (OSError, TypeError):  # no source shipped: the table is always made here
        return None
    return hashlib.sha256(code).hexdigest()


def folded_names(names):
    """``folded_key`` of every name ("" for a name without a word)."""
    folded_words = {}
    with collection_paused():  # tens of thousands of small strings: see ontolink.core.gc_pause
        return [folded_key(name, folded_words) for name in names]


def name_tables():
    """The tables `index` stores for `link` ({table: (digest, maker)}; ``build_index``'s ``name_tables``)."""
    digest = folding_digest()
    return {FOLDED_NAMES: (digest, folded_names)} if digest is not None else {}


def searched_as(record):
    """``record`` as it is searched: a coordinated name by its ``expansion`` (`annotate` writes "palmar pits"
    for the mention "palmar and plantar pits"), any other by its mention."""
    expansion = record.get("expansion")
    if isinstance(expansion, str) and expansion.strip():
        return {**record, "mention": expansion}
    return record


class FoldedNames:
    """The index's names by ``folded_key``: which entities a mention names exactly, once folded.

    A dense or TF-IDF search ranks "astrocyte-restricted precursor" above "astrocyte" for "astrocytes";
    the entity whose name the mention is, after the folding `annotate` applies, comes first instead.
    """

    def __init__(self, loaded_index):
        self.index = loaded_index
        self.entity_ids = loaded_index.entity_ids
        self.names = loaded_index.names
        self.kinds = loaded_index.name_kinds
        self.method = loaded_index.method
        self.folded_words = {}  # a mention's words, each folded once
        self._rows_of = None
        self.entity_of_name = loaded_index.entity_of_name

    @property
    def rows_of(self):
        """{folded name: its name rows}, made on the first look-up from the table `index` stored (HPO's 40,508
        names folded took 0.3 s of CPU on every start), or from the names of an index without one."""
        if self._rows_of is None:
            digest = folding_digest()
            keys = (self.index.name_table(FOLDED_NAMES, digest, folded_names) if digest is not None
                    and hasattr(self.index, "name_table") else folded_names(self.names))
            rows_of = {}
            with collection_paused():  # tens of thousands of small lists: see ontolink.core.gc_pause
                for row, key in enumerate(keys):
                    if key:
                        rows_of.setdefault(key, []).append(row)
            self._rows_of = rows_of
        return self._rows_of

    def exact_rows(self, mention):
        """{entity id: the first of its name rows that is ``mention`` once folded}."""
        exact = {}
        for row in self.rows_of.get(folded_key(mention, self.folded_words), ()):
            exact.setdefault(self.entity_ids[self.entity_of_name[row]], row)
        return exact

    def _exact(self, candidate, row):
        matched = {"matched_name": self.names[row], "matched_by": "exact"}
        if self.kinds is not None:
            matched["matched_kind"] = self.kinds[row]
        return {**candidate, **matched}

    def candidates(self, mention, result, index, dictionary_ids=()):
        """The candidate records of one ``Linker.search_rows`` result (``Linker.candidate_list``'s, made in one
        pass) with "matched_by" ("exact": the matched name is the mention once folded, and is the one given;
        "annotate": one of ``dictionary_ids``, the entities whose name `annotate` found over the mention; else the
        index method), in four groups, each in the index's order: exact and found by annotate, exact, found by
        annotate, the rest.

        An exact name outranks annotate's order-free, word-form match of another entity (the index is sure
        of it); otherwise annotate's entity, found over the whole span, outranks a nearer vector ("lip pits"
        stays *Lip pit*, not *Commissural lip pit*)."""
        entity_ids, entity_names, names, kinds = index.entity_ids, index.entity_names, self.names, self.kinds
        exact = self.exact_rows(mention)
        groups = ([], [], [], [])
        entities, scores, rows = result
        for entity, score, row in zip(entities.tolist(), np.round(scores.astype(np.float64), 6).tolist(),
                                      rows.tolist()):
            entity_id = entity_ids[entity]
            exact_row = exact.get(entity_id) if exact else None
            found = entity_id in dictionary_ids
            matched = row if exact_row is None else exact_row
            candidate = {"id": entity_id, "name": entity_names[entity], "score": score,
                         "matched_name": names[matched]}
            if kinds is not None:
                candidate["matched_kind"] = kinds[matched]
            if exact_row is None:
                candidate["matched_by"] = "annotate" if found else self.method
                groups[2 if found else 3].append(candidate)
            else:
                candidate["matched_by"] = "exact"
                groups[0 if found else 1].append(candidate)
        return [candidate for group in groups for candidate in group]

    def mark(self, mention, candidates, dictionary_ids=(), exact_first=False):
        """``candidates`` in their order (a ranker's), marked as ``candidates`` marks them: those whose name is the
        mention once folded as new records with that name and "matched_by": "exact", those of ``dictionary_ids``
        with "matched_by": "annotate"; the list itself when there are none. ``exact_first``: in the four groups
        of ``candidates`` (exact and found by annotate, exact, found by annotate, the rest), each in the given
        order, as without a ranker: the default ranker learns from held-out synonyms, never from an exact name
        or annotate's dictionary."""
        exact = self.exact_rows(mention)
        if not exact and not dictionary_ids:
            return candidates
        groups = ([], [], [], [])
        for candidate in candidates:
            row = exact.get(candidate["id"])
            found = candidate["id"] in dictionary_ids
            if row is not None:
                candidate = self._exact(candidate, row)
            elif found:
                candidate = {**candidate, "matched_by": "annotate"}
            groups[(0 if row is not None else 2) + (0 if found else 1) if exact_first else 3].append(candidate)
        return [candidate for group in groups for candidate in group]


def dictionary_ids(record):
    """The entities `annotate`'s dictionary found over a Mention record's span (empty for other records)."""
    if record.get("matched_by") in DICTIONARY_SOURCES and isinstance(record.get("matched_ids"), list):
        return frozenset(entity for entity in record["matched_ids"] if isinstance(entity, str))
    return frozenset()


class BatchAhead(list):
    """A batch of Mention records and ``vectors``, {query text: vector} of those encoded ahead
    (``LinkBatches.prepare``)."""

    def __init__(self, records, vectors):
        super().__init__(records)
        self.vectors = vectors


class LinkBatches:
    """Links one batch of Mention records: the function an engine runs on each batch.

    Pickled (sent to a Ray actor) it keeps only where its index and reranker are and
    loads them on its first batch there, once per worker.
    """

    def __init__(self, loaded_index, top_k=None, reranker=None, device=AUTO_DEVICE, ranker=None, prior=AUTO_PRIOR,
                 with_features=LinkOptions.with_features, fold=True, annotate_ids=LinkOptions.annotate_ids,
                 exact_first=False):
        self.index_dir = str(loaded_index.directory)
        self.reranker_dir = str(reranker.directory) if reranker is not None else None
        self.ranker_dir = str(ranker.directory) if ranker is not None else None
        self.prior = prior
        self.with_features = with_features
        # no depth asked: `ontolink link`'s (10, or the depth a ranker or reranker was trained to order)
        self.top_k = trained_top_k(ranker, reranker) if top_k is None else top_k
        self.fold = fold
        self.annotate_ids = annotate_ids
        self.exact_first = exact_first
        self.device = device
        self.allowed_entities = getattr(loaded_index, "allowed_entities", None)  # a worker restricts its own copy
        self._load(loaded_index, reranker, ranker)

    def _load(self, loaded_index, reranker, ranker=None):
        self.index = loaded_index
        self.reranker = reranker
        self.linker = Linker(loaded_index, top_k=self.top_k)
        # a ranker orders the candidates itself (it weighs exact names): the folded names only mark them
        self.folded = FoldedNames(loaded_index) if self.fold else None
        self.ranker = ranker
        # a ranker orders at least the depth it was trained at; the first top_k are written
        self.ranked_depth = ranker_depth(ranker, self.top_k) if ranker is not None else self.top_k
        if ranker is not None and not ranker.bound_to(loaded_index, self.prior, self.ranked_depth):
            ranker.bind(loaded_index, prior=self.prior, top_k=self.ranked_depth)

    def __getstate__(self):
        return {key: value for key, value in self.__dict__.items()
                if key not in ("index", "reranker", "linker", "ranker", "folded")}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.linker = self.ranker = self.folded = None

    def _loaded_linker(self):
        if self.linker is None:
            reranker = None
            if self.reranker_dir:
                reranker = load_reranker(self.reranker_dir, device=self.device)
            ranker = None
            if self.ranker_dir:
                ranker = Ranker(self.ranker_dir)
            loaded = load_index(self.index_dir, device=self.device)
            loaded.allowed_entities = self.allowed_entities  # `link --entities / --where`, as in the parent
            self._load(loaded, reranker, ranker)
        return self.linker

    def prepare(self, batch):
        """``batch`` with the vectors of its query texts that the memo lacks computed now (a ``BatchAhead``): the
        in-process engine runs this on a second thread while the batch before is linked (ontolink.engines.ahead).
        An index that encodes nothing, or whose encoder depends on the batch, gets the batch as it is."""
        self._loaded_linker()
        encode_ahead = getattr(self.index.name_index, "encode_ahead", None)
        if encode_ahead is None:
            return batch
        # the searches go through the ranker's linker where there is one (its memo is the one that fills)
        memo = (self.ranker.features.linker if self.ranker is not None else self.linker).memo
        texts = [text for text in dict.fromkeys(self.index.query_text(searched_as(record)) for record in batch)
                 if text not in memo]
        return BatchAhead(batch, encode_ahead(texts))

    def __call__(self, batch):
        """The linked records of ``batch`` (a list of records, or ``prepare``'s ``BatchAhead`` of them)."""
        self._loaded_linker()
        ahead = batch.vectors if isinstance(batch, BatchAhead) else None
        searching = self.index.name_index.searching_with(ahead) if ahead else contextlib.nullcontext()
        with searching:
            searched = [searched_as(record) for record in batch]
            # a ranker searches itself (its features read what it finds); without one the linker's rows are made here
            results = None if self.ranker is not None else \
                self.linker.rows([self.index.query_text(record) for record in searched])
            return [out if query is record else {**out, "mention": record["mention"]}
                    for out, query, record in zip(self._link(searched, results), searched, batch)]

    def _link(self, batch, results):
        if self.ranker is not None:
            ranked = self.ranker.rank(batch, with_features=self.with_features)
            if self.folded is None:
                return list(ranked) if self.ranked_depth == self.top_k else \
                    [{**record, "candidates": record["candidates"][:self.top_k]} for record in ranked]
            marked = {}  # a repeated mention's records share one candidate list, and so one marked list
            linked = []
            for record in ranked:
                candidates = record["candidates"]
                found = dictionary_ids(record) if self.annotate_ids else frozenset()
                if (id(candidates), found) not in marked:
                    marked[id(candidates), found] = self.folded.mark(record["mention"], candidates, found,
                                                                     self.exact_first)[:self.top_k]
                linked.append({**record, "candidates": marked[id(candidates), found]})
            return linked
        texts = [self.index.query_text(record) for record in batch]
        # candidate records are made once per distinct mention of the batch, in one pass (exact names and
        # annotate's entities first), and copied for its repeats (the 6,284-mention corpus has 2,246 distinct):
        # made per record, then remade by the reordering, they were most of link's own work
        made = {}
        linked = []
        for record, text, result in zip(batch, texts, results):
            found = dictionary_ids(record) if self.folded is not None and self.annotate_ids else ()
            key = (text, record["mention"], found)
            candidates = made.get(key)
            if candidates is not None:
                candidates = [{**candidate} for candidate in candidates]  # each record its own dicts
            elif self.folded is None:
                candidates = made[key] = self.linker.candidate_list(result)
            else:
                candidates = made[key] = self.folded.candidates(record["mention"], result, self.index, found)
            linked.append({**record, "candidates": candidates})
        if self.reranker is not None:
            linked = self.reranker.rerank(linked, lambda entity_id: self.index.definitions.get(entity_id, ""))
        return linked


def link_mentions(records: Iterable[dict[str, Any]], loaded_index: LoadedIndex, top_k: int | None = None,
                  batch_size: int = LINK_BATCH_SIZE, reranker: Any = None, engine: Engine | None = None,
                  device: str = AUTO_DEVICE, ranker: Any = None, prior: Any = AUTO_PRIOR,
                  with_features: bool = LinkOptions.with_features, fold: bool = True,
                  annotate_ids: bool = LinkOptions.annotate_ids, exact_first: bool = False) -> Iterator[dict[str, Any]]:
    """Yield each Mention record with ``candidates`` added (unknown fields kept): ``top_k`` of them (default: as
    `ontolink link`, 10, or the depth the ``ranker`` or ``reranker`` was trained to order).

    With a ``reranker``, all top-K candidates are rescored by it and reordered; with a ``ranker`` (a
    ontolink.ranking.ranker.Ranker; ``prior`` and ``with_features`` are its options) they are ordered by
    its features. ``fold``: a candidate whose name is the mention once folded comes first (``FoldedNames``;
    with a ranker it is only marked "matched_by": "exact", and put first with ``exact_first``, as `link` does
    with the index's default ranker); ``annotate_ids``: then
    the entities `annotate`'s dictionary found over the mention (``FoldedNames.candidates``). Batches go through
    ``engine`` (an ``Engine``; default: in this process, one after
    another); its workers load the index on ``device``.
    """
    link_batch = LinkBatches(loaded_index, top_k=top_k, reranker=reranker, device=device, ranker=ranker,
                             prior=prior, with_features=with_features, fold=fold, annotate_ids=annotate_ids,
                             exact_first=exact_first)
    engine = engine or open_engine()
    for linked in engine.map(link_batch, record_batches(records, batch_size)):
        yield from linked


def link_inputs(paths: Sequence[str], read: Callable[[str, Any], Iterator[Any]], loaded_index: LoadedIndex,
                engine: Engine | None = None, stats: Any = None,
                **options: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(position, linked record)`` for the Mention records of each input of ``paths`` in turn
    (``position``: its index in ``paths``), as ``link_mentions`` links them (``options``: top_k, device,
    reranker, ranker, prior, with_features, fold, annotate_ids, exact_first). ``read(path, stats)`` yields an
    input's records in batches (``io.RecordBatchReader``); the engine may read files where its workers are (Ray: Ray Data tasks)."""
    link_batch = LinkBatches(loaded_index, **options)
    engine = engine or open_engine()
    for position, linked in engine.map_inputs(link_batch, paths, read, stats):
        for record in linked:
            yield position, record
