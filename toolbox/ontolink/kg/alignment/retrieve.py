"""Ranking over the full candidate pool, by cosine: D2T (document → triples) and T2D (triple → documents).

A scorer (ontolink.kg.alignment.scorers) turns records into the vectors one
retrieval direction compares.

``retrieved_records`` writes, per query, a Retrieved record: the query pair's
fields, ``direction``, ``candidates`` (the top-k, ``{id, score}`` best first, id =
the candidate's ``pair_id``), ``rank`` (of the true candidate within the whole
pool, 1 = first; null when the pool lacks it) and ``pool`` (its size).
"""

import numpy as np

from ontolink.kg.alignment.pairs import pair_triple
from ontolink.kg.options import AlignRetrieveOptions

RETRIEVALS = ("d2t", "t2d")


def _gold_columns(query_keys, pool_keys):
    columns = {}
    for column, key in enumerate(pool_keys):
        columns.setdefault(key, []).append(column)
    return [columns.get(key, []) for key in query_keys]


def rank_queries(query_vectors, pool_vectors, gold, top_k=AlignRetrieveOptions.top_k, chunk=1024):
    """Yield (rank or None, top-k columns, top-k scores) per query row; scores are dot products.

    The rank is the best true candidate's place in the order the candidates are listed in (score, then pool
    position): candidates scoring as high as it and listed before it count. (Counting only those scoring
    strictly higher ranked every one of two texts that read the same first, while the list put one second:
    26 pairs of distinct triples of the shared corpus verbalise alike.)
    """
    pool_size = len(pool_vectors)
    k = min(top_k, pool_size)
    for start in range(0, len(query_vectors), chunk):
        similarity = query_vectors[start:start + chunk] @ pool_vectors.T
        if k:
            top = np.argpartition(-similarity, k - 1, axis=1)[:, :k] if k < pool_size else \
                np.tile(np.arange(pool_size), (len(similarity), 1))
        for offset, scores in enumerate(similarity):
            columns = gold[start + offset]
            rank = None
            if columns:
                rank = min(int(1 + np.sum(scores > scores[column]) + np.sum(scores[:column] == scores[column]))
                           for column in columns)
            if k:
                chosen = top[offset]
                chosen = chosen[np.lexsort((chosen, -scores[chosen]))]
                yield rank, chosen, scores[chosen]
            else:
                yield rank, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)


def retrieved_records(queries, pool, query_inputs, pool_inputs, scorer, retrievals=RETRIEVALS,
                      top_k=AlignRetrieveOptions.top_k):
    """Yield Retrieved records for each query pair and each direction in ``retrievals``.

    D2T: the query's text against every pool triple (true: the pool pairs with the same triple).
    T2D: the query's triple against every pool text (true: the pool pairs with the same text).
    """
    pool_ids = [record["pair_id"] for record in pool]
    for retrieval in retrievals:
        query_documents, query_triples = scorer.vectors(retrieval, query_inputs)
        pool_documents, pool_triples = scorer.vectors(retrieval, pool_inputs)
        if retrieval == "d2t":
            gold = _gold_columns([pair_triple(record) for record in queries], [pair_triple(r) for r in pool])
            ranked = rank_queries(query_documents, pool_triples, gold, top_k)
        else:
            gold = _gold_columns([record["text"] for record in queries], [record["text"] for record in pool])
            ranked = rank_queries(query_triples, pool_documents, gold, top_k)
        for record, (rank, columns, scores) in zip(queries, ranked):
            yield {**record, "direction": retrieval,
                   "candidates": [{"id": pool_ids[column], "score": round(float(score), 6)}
                                  for column, score in zip(columns, scores)],
                   "rank": rank, "pool": len(pool)}
