"""`ontolink link`: top-K entities for each mention, streamed in batches."""

from collections import OrderedDict

import numpy as np

from toolbox.errors import InputError


def batches(records, size):
    """Lists of up to ``size`` records. When reading fails (a bad line), the
    records read before it are still yielded, then the error propagates."""
    batch = []
    try:
        for record in records:
            batch.append(record)
            if len(batch) >= size:
                yield batch
                batch = []
    except InputError:
        if batch:
            yield batch
        raise
    if batch:
        yield batch


class Linker:
    """Search names, keep each entity's best name, return the top-K entities best first.

    Mention strings repeat a lot in real corpora, so results are memoised by
    text (bounded LRU): a repeat costs no encoding and no search.
    """

    def __init__(self, loaded_index, top_k=64, cache_size=100_000):
        self.index = loaded_index
        self.top_k = top_k
        self.cache = OrderedDict()
        self.cache_size = cache_size
        # Names per entity vary; searching this many names nearly always yields top_k entities.
        names_per_entity = len(loaded_index) / max(1, len(loaded_index.entity_ids))
        self.names_to_search = int(top_k * max(2.0, 2 * names_per_entity)) + 8

    def candidates(self, texts):
        """Candidate lists for ``texts``, from the memo where possible."""
        missing = list(dict.fromkeys(text for text in texts if text not in self.cache))
        if missing:
            for text, candidates in zip(missing, self.search(missing)):
                self.cache[text] = candidates
                if len(self.cache) > self.cache_size:
                    self.cache.popitem(last=False)
        result = []
        for text in texts:
            self.cache.move_to_end(text)
            result.append(self.cache[text])
        return result

    def search(self, texts):
        """Candidate lists for distinct ``texts``, bypassing the memo."""
        k = min(len(self.index), self.names_to_search)
        fewest = -1
        while True:
            scores, rows = self.index.name_index.search(texts, k)
            found = [self._by_entity(score_row, name_row) for score_row, name_row in zip(scores, rows)]
            shortest = min(len(candidates) for candidates in found)
            # stop when full, when every name was asked for, or when asking for more found nothing
            # new (a token index returns only the names its token search reached)
            if shortest >= self.top_k or k >= len(self.index) or shortest == fewest:
                return found
            fewest = shortest
            k = min(len(self.index), k * 4)  # rare: many names of few entities at the top

    def _by_entity(self, scores, rows):
        """Each entity once, at its best name's score, best first (rows are sorted by score)."""
        valid = rows >= 0
        entity_rows = self.index.entity_of_name[rows[valid]]
        _, first = np.unique(entity_rows, return_index=True)
        first = np.sort(first)[:self.top_k]
        entity_ids, entity_names = self.index.entity_ids, self.index.entity_names
        return [{"id": entity_ids[entity], "name": entity_names[entity], "score": score}
                for entity, score in zip(entity_rows[first].tolist(),
                                         np.round(scores[valid][first].astype(np.float64), 6).tolist())]


class LinkBatches:
    """Links one batch of Mention records: the function an engine runs on each batch.

    Pickled (sent to a Ray actor) it keeps only where its index and reranker are and
    loads them on its first batch there, once per worker.
    """

    def __init__(self, loaded_index, top_k=64, reranker=None, device="auto"):
        self.index_dir = str(loaded_index.directory)
        self.reranker_dir = str(reranker.directory) if reranker is not None else None
        self.top_k = top_k
        self.device = device
        self._load(loaded_index, reranker)

    def _load(self, loaded_index, reranker):
        self.index = loaded_index
        self.reranker = reranker
        self.linker = Linker(loaded_index, top_k=self.top_k)

    def __getstate__(self):
        return {key: value for key, value in self.__dict__.items() if key not in ("index", "reranker", "linker")}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.linker = None

    def _loaded_linker(self):
        if self.linker is None:
            from toolbox.artifacts.index import load_index

            reranker = None
            if self.reranker_dir:
                from toolbox.artifacts.reranker import load_reranker

                reranker = load_reranker(self.reranker_dir, device=self.device)
            self._load(load_index(self.index_dir, device=self.device), reranker)
        return self.linker

    def __call__(self, batch):
        self._loaded_linker()
        texts = [self.index.query_text(record) for record in batch]
        linked = [{**record, "candidates": candidates}
                  for record, candidates in zip(batch, self.linker.candidates(texts))]
        if self.reranker is not None:
            linked = self.reranker.rerank(linked, lambda entity_id: self.index.definitions.get(entity_id, ""))
        return linked


def link_mentions(records, loaded_index, top_k=64, batch_size=256, reranker=None, engine=None, device="auto"):
    """Yield each Mention record with ``candidates`` added (unknown fields kept).

    With a ``reranker``, all top-K candidates are rescored by it and reordered. Batches go through
    ``engine`` (an ``Engine``; default: in this process, one after another); its workers load the
    index on ``device``.
    """
    from toolbox.backends.engines import open_engine

    link_batch = LinkBatches(loaded_index, top_k=top_k, reranker=reranker, device=device)
    engine = engine or open_engine()
    for linked in engine.map(link_batch, batches(records, batch_size)):
        yield from linked
