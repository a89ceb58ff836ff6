"""`ontolink link`: top-K entities for each mention, streamed in batches."""

from ontolink.io import record_batches
from ontolink.linker import Linker

# Mentions a batch: large batches give the encoder and the search large blocks (6,284 mentions linked 1.5x
# as fast at 4,096 as at 256); a cross-encoder reranker takes seconds a batch, so its progress shows per 256.
LINK_BATCH_SIZE = 4096
RERANK_BATCH_SIZE = 256


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
            from ontolink.artifacts.index import load_index

            reranker = None
            if self.reranker_dir:
                from ontolink.artifacts.reranker import load_reranker

                reranker = load_reranker(self.reranker_dir, device=self.device)
            ranker = None
            if self.ranker_dir:
                from ontolink.artifacts.ranker import Ranker

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


def link_mentions(records, loaded_index, top_k=64, batch_size=LINK_BATCH_SIZE, reranker=None, engine=None,
                  device="auto", ranker=None, prior="auto", with_features=False):
    """Yield each Mention record with ``candidates`` added (unknown fields kept).

    With a ``reranker``, all top-K candidates are rescored by it and reordered; with a ``ranker`` (a
    ontolink.artifacts.ranker.Ranker; ``prior`` and ``with_features`` are its options) they are ordered by
    its features. Batches go through ``engine`` (an ``Engine``; default: in this process, one after
    another); its workers load the index on ``device``.
    """
    from ontolink.backends.engines import open_engine

    link_batch = LinkBatches(loaded_index, top_k=top_k, reranker=reranker, device=device, ranker=ranker,
                             prior=prior, with_features=with_features)
    engine = engine or open_engine()
    for linked in engine.map(link_batch, record_batches(records, batch_size)):
        yield from linked


def link_inputs(paths, read, loaded_index, engine=None, stats=None, **options):
    """``(position, linked record)`` for the Mention records of each input of ``paths`` in turn
    (``position``: its index in ``paths``), as ``link_mentions`` links them (``options``: top_k, device,
    reranker, ranker, prior, with_features). ``read(path, stats)`` yields an input's records in batches
    (``io.RecordBatchReader``); the engine may read files where its workers are (Ray: Ray Data tasks)."""
    from ontolink.backends.engines import open_engine

    link_batch = LinkBatches(loaded_index, **options)
    engine = engine or open_engine()
    for position, linked in engine.map_inputs(link_batch, paths, read, stats):
        for record in linked:
            yield position, record
