"""`ontolink link`: top-K entities for each mention, streamed in batches."""

from collections import OrderedDict

import numpy as np

from toolbox.io import record_batches as batches


class Linker:
    """Search names, keep each entity's best name, return the top-K entities best first.

    Mention strings repeat a lot in real corpora, so results are memoised by
    text (bounded LRU): a repeat costs no encoding and no search.
    """

    def __init__(self, loaded_index, top_k=64, cache_size=100_000):
        self.index = loaded_index
        self.top_k = top_k
        self.cache = OrderedDict()
        self.row_cache = OrderedDict()
        self.cache_size = cache_size
        # Names per entity vary; searching this many names nearly always yields top_k entities.
        names_per_entity = len(loaded_index) / max(1, len(loaded_index.entity_ids))
        self.names_to_search = int(top_k * max(2.0, 2 * names_per_entity)) + 8

    def candidates(self, texts):
        """Candidate lists for ``texts``, from the memo where possible."""
        return self._memoised(texts, self.cache, self.search)

    def rows(self, texts):
        """``search_rows`` of ``texts`` (nothing held out), from a memo of its own."""
        return self._memoised(texts, self.row_cache, self.search_rows)

    def _memoised(self, texts, cache, search):
        missing = list(dict.fromkeys(text for text in texts if text not in cache))
        if missing:
            for text, found in zip(missing, search(missing)):
                cache[text] = found
                if len(cache) > self.cache_size:
                    cache.popitem(last=False)
        result = []
        for text in texts:
            cache.move_to_end(text)
            result.append(cache[text])
        return result

    def search(self, texts):
        """Candidate lists for distinct ``texts``, bypassing the memo."""
        entity_ids, entity_names = self.index.entity_ids, self.index.entity_names
        return [[{"id": entity_ids[entity], "name": entity_names[entity], "score": score}
                 for entity, score in zip(entities.tolist(), np.round(scores.astype(np.float64), 6).tolist())]
                for entities, scores, _ in self.search_rows(texts)]

    def search_rows(self, texts, exclude=None):
        """For each text, (entity rows, scores, best name rows) of its top-K entities, best first.

        ``exclude``: per text, name rows to leave out (a ranker's training queries hold their own name out).
        """
        k = min(len(self.index), self.names_to_search + max((len(rows) for rows in exclude or ()), default=0))
        fewest = -1
        while True:
            scores, rows = self.index.name_index.search(texts, k)
            found = [self._by_entity(score_row, name_row, exclude[position] if exclude else ())
                     for position, (score_row, name_row) in enumerate(zip(scores, rows))]
            shortest = min(len(entities) for entities, _, _ in found)
            # stop when full, when every name was asked for, or when asking for more found nothing
            # new (a token index returns only the names its token search reached)
            if shortest >= self.top_k or k >= len(self.index) or shortest == fewest:
                return found
            fewest = shortest
            k = min(len(self.index), k * 4)  # rare: many names of few entities at the top

    def _by_entity(self, scores, rows, excluded=()):
        """Each entity once, at its best name's score, best first (rows are sorted by score)."""
        valid = rows >= 0
        if len(excluded):
            valid &= ~np.isin(rows, list(excluded))
        rows, scores = rows[valid], scores[valid]
        entity_rows = self.index.entity_of_name[rows]
        _, first = np.unique(entity_rows, return_index=True)
        first = np.sort(first)[:self.top_k]
        return entity_rows[first], scores[first], rows[first]


class LinkBatches:
    """Links one batch of Mention records: the function an engine runs on each batch.

    Pickled (sent to a Ray actor) it keeps only where its index and reranker are and
    loads them on its first batch there, once per worker.
    """

    def __init__(self, loaded_index, top_k=64, reranker=None, device="auto", ranker=None, prior="auto",
                 with_features=False):
        self.index_dir = str(loaded_index.directory)
        self.reranker_dir = str(reranker.directory) if reranker is not None else None
        self.ranker_dir = str(ranker.directory) if ranker is not None else None
        self.prior = prior
        self.with_features = with_features
        self.top_k = top_k
        self.device = device
        self._load(loaded_index, reranker, ranker)

    def _load(self, loaded_index, reranker, ranker=None):
        self.index = loaded_index
        self.reranker = reranker
        self.linker = Linker(loaded_index, top_k=self.top_k)
        self.ranker = ranker
        if ranker is not None and not ranker.bound_to(loaded_index, self.prior, self.top_k):
            ranker.bind(loaded_index, prior=self.prior, top_k=self.top_k)

    def __getstate__(self):
        return {key: value for key, value in self.__dict__.items()
                if key not in ("index", "reranker", "linker", "ranker")}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.linker = self.ranker = None

    def _loaded_linker(self):
        if self.linker is None:
            from toolbox.artifacts.index import load_index

            reranker = None
            if self.reranker_dir:
                from toolbox.artifacts.reranker import load_reranker

                reranker = load_reranker(self.reranker_dir, device=self.device)
            ranker = None
            if self.ranker_dir:
                from toolbox.artifacts.ranker import Ranker

                ranker = Ranker(self.ranker_dir)
            self._load(load_index(self.index_dir, device=self.device), reranker, ranker)
        return self.linker

    def __call__(self, batch):
        self._loaded_linker()
        if self.ranker is not None:
            return list(self.ranker.rank(batch, with_features=self.with_features))
        texts = [self.index.query_text(record) for record in batch]
        linked = [{**record, "candidates": candidates}
                  for record, candidates in zip(batch, self.linker.candidates(texts))]
        if self.reranker is not None:
            linked = self.reranker.rerank(linked, lambda entity_id: self.index.definitions.get(entity_id, ""))
        return linked


def link_mentions(records, loaded_index, top_k=64, batch_size=256, reranker=None, engine=None, device="auto",
                  ranker=None, prior="auto", with_features=False):
    """Yield each Mention record with ``candidates`` added (unknown fields kept).

    With a ``reranker``, all top-K candidates are rescored by it and reordered; with a ``ranker`` (a
    toolbox.artifacts.ranker.Ranker; ``prior`` and ``with_features`` are its options) they are ordered by
    its features. Batches go through ``engine`` (an ``Engine``; default: in this process, one after
    another); its workers load the index on ``device``.
    """
    from toolbox.backends.engines import open_engine

    link_batch = LinkBatches(loaded_index, top_k=top_k, reranker=reranker, device=device, ranker=ranker,
                             prior=prior, with_features=with_features)
    engine = engine or open_engine()
    for linked in engine.map(link_batch, batches(records, batch_size)):
        yield from linked


def link_inputs(paths, read, loaded_index, engine=None, stats=None, **options):
    """``(position, linked record)`` for the Mention records of each input of ``paths`` in turn
    (``position``: its index in ``paths``), as ``link_mentions`` links them (``options``: top_k, device,
    reranker, ranker, prior, with_features). ``read(path, stats)`` yields an input's records in batches
    (``io.RecordBatchReader``); the engine may read files where its workers are (Ray: Ray Data tasks)."""
    from toolbox.backends.engines import open_engine

    link_batch = LinkBatches(loaded_index, **options)
    engine = engine or open_engine()
    for position, linked in engine.map_inputs(link_batch, paths, read, stats):
        for record in linked:
            yield position, record
