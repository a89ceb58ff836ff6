"""Search an index for mentions: each entity once, at its best name, top-K best first, memoised by text.

Below the steps: `link`, `annotate` and the ranker's features all search through it.
"""

import sys
from collections import OrderedDict

import numpy as np

from ontolink.core.byte_budget import byte_budget

DEFAULT_MEMO_BYTES = 64 << 20
MEMO_BYTES_VARIABLE = "ONTOLINK_LINK_MEMO_BYTES"


def memo_bytes():
    """The link memo's budget: 64 MiB, or ``ONTOLINK_LINK_MEMO_BYTES`` (bytes, K/M/G suffix allowed; 0 turns
    the memo off)."""
    return byte_budget(MEMO_BYTES_VARIABLE, DEFAULT_MEMO_BYTES, "256M, or 0 for none")


class SearchMemo:
    """Search results by query text, least recently used dropped first, bounded in bytes rather than entries:
    a result of 512 candidates holds 40 times the bytes of one of 10. Results are kept as their three compact
    arrays (entity rows, scores, name rows); candidate records are made from them on the way out, so no two
    output records share a candidate dict either."""

    ARRAY_OVERHEAD = sys.getsizeof(np.empty(0))
    ENTRY_OVERHEAD = 200  # the key's slot in the ordered dict, the tuple

    def __init__(self, max_bytes):
        self.max_bytes = max_bytes
        self.bytes = 0
        self._entries = OrderedDict()

    def __contains__(self, text):
        return text in self._entries

    def __len__(self):
        return len(self._entries)

    def get(self, text):
        entry = self._entries.get(text)
        if entry is None:
            return None
        self._entries.move_to_end(text)
        return entry[0]

    def put(self, text, found):
        size = (sys.getsizeof(text) + self.ENTRY_OVERHEAD
                + sum(array.nbytes + self.ARRAY_OVERHEAD for array in found))
        if size > self.max_bytes:
            return
        if text in self._entries:
            self.bytes -= self._entries.pop(text)[1]
        self._entries[text] = (found, size)
        self.bytes += size
        while self.bytes > self.max_bytes:
            _, (_, dropped) = self._entries.popitem(last=False)
            self.bytes -= dropped


class Linker:
    """Search names, keep each entity's best name, return the top-K entities best first.

    Mention strings repeat a lot in real corpora, so results are memoised by
    text (``SearchMemo``, ``memo_bytes()`` at most): a repeat costs no encoding and no search.
    """

    def __init__(self, loaded_index, top_k, memo_size=None):
        self.index = loaded_index
        self.top_k = top_k
        self.memo = SearchMemo(memo_bytes() if memo_size is None else memo_size)
        # Names per entity vary; this many names yield top_k entities for all but a few queries (HPO:
        # 13 of 2,246 distinct corpus mentions), which search again, deeper. An exact search returns the
        # same best names at any depth, so a shallow first search is the cheap one; a token index's search
        # is approximate (it rescores max(2k, 512) names), so it keeps the depth it was measured at.
        names_per_entity = len(loaded_index) / max(1, len(loaded_index.entity_ids))
        depth = 2 * names_per_entity if getattr(loaded_index.name_index, "tokens", False) else names_per_entity
        self.full_depth = self.names_to_search = int(top_k * max(2.0, depth)) + 8
        self.allowed_names = self._subset = None
        self._follow_subset()

    def _follow_subset(self):
        """Keep to the index's subset of entities (``LoadedIndex.restrict``), whenever it was set: the names of
        the others are passed over, and the first search goes as much deeper as they are many, so that top_k
        entities of the subset come back."""
        allowed = getattr(self.index, "allowed_entities", None)
        if allowed is self._subset:
            return
        self._subset = allowed
        self.allowed_names = None if allowed is None else allowed[self.index.entity_of_name]
        self.names_to_search = self.full_depth
        if self.allowed_names is not None:
            share = max(1, int(self.allowed_names.sum())) / max(1, len(self.index))
            self.names_to_search = int(self.full_depth / share) + 8
        self.memo = SearchMemo(self.memo.max_bytes)  # results of another subset are not this one's

    def candidates(self, texts):
        """Candidate lists for ``texts``, searched once per distinct text not in the memo."""
        return self.candidate_lists(self.rows(texts))

    def rows(self, texts):
        """``search_rows`` of ``texts`` (nothing held out), from the memo where possible."""
        self._follow_subset()
        found = {}
        for text in texts:
            if text not in found:
                remembered = self.memo.get(text)
                if remembered is not None:
                    found[text] = remembered
        missing = list(dict.fromkeys(text for text in texts if text not in found))
        if missing:
            for text, result in zip(missing, self.search_rows(missing)):
                found[text] = result
                self.memo.put(text, result)
        return [found[text] for text in texts]

    def search(self, texts):
        """Candidate lists for distinct ``texts``, bypassing the memo."""
        return self.candidate_lists(self.search_rows(texts))

    def candidate_lists(self, found):
        """Candidate records of ``search_rows`` results (``candidate_list`` of each)."""
        return [self.candidate_list(result) for result in found]

    def candidate_list(self, result):
        """Candidate records of one ``search_rows`` result: {"id", "name", "score", "matched_name"} and, where
        the index records it, "matched_kind" (the matched name's kind: "name", or its synonym scope)."""
        entity_ids, entity_names = self.index.entity_ids, self.index.entity_names
        names, kinds = self.index.names, self.index.name_kinds
        entities, scores, rows = result
        scores = np.round(scores.astype(np.float64), 6).tolist()
        if kinds is None:
            return [{"id": entity_ids[entity], "name": entity_names[entity], "score": score,
                     "matched_name": names[row]}
                    for entity, score, row in zip(entities.tolist(), scores, rows.tolist())]
        return [{"id": entity_ids[entity], "name": entity_names[entity], "score": score, "matched_name": names[row],
                 "matched_kind": kinds[row]}
                for entity, score, row in zip(entities.tolist(), scores, rows.tolist())]

    def search_rows(self, texts, exclude=None):
        """For each text, (entity rows, scores, best name rows) of its top-K entities, best first.

        ``exclude``: per text, name rows to leave out (a ranker's training queries hold their own name out).
        A query whose names yield fewer than top-K entities is searched again, alone, with four times as
        many names; its result is the same as from a deep first search (the k best names are exact).
        """
        self._follow_subset()
        texts = list(texts)
        k = min(len(self.index), self.names_to_search + max((len(rows) for rows in exclude or ()), default=0))
        found = [None] * len(texts)
        pending = range(len(texts))
        entities_before = {}
        while pending:
            scores, rows = self.index.name_index.search([texts[query] for query in pending], k)
            # with a subset, what a deeper search reached is counted in names: a search 4 times as deep may
            # bring no entity of a small subset and the next one some
            reached = (rows >= 0).sum(axis=1) if self.allowed_names is not None else None
            short = []
            for position, (query, result) in enumerate(zip(pending, self._by_entity(
                    scores, rows, exclude and [exclude[query] for query in pending]))):
                count = len(result[0]) if reached is None else int(reached[position])
                # done when full, when every name was asked for, or when asking for more found nothing
                # new (a token index returns only the names its token search reached)
                if len(result[0]) >= self.top_k or k >= len(self.index) or count == entities_before.get(query):
                    found[query] = result
                else:
                    entities_before[query] = count
                    short.append(query)
            pending = short
            k = min(len(self.index), k * 4)
        return found

    def _by_entity(self, scores, rows, exclude=None):
        """Per query, each entity once at its best name's score, best first (rows are sorted by score).

        One stable sort over (query, entity) pairs finds every first occurrence at once: per query,
        a sort of its own cost more than the search on a corpus of short mentions.
        """
        valid = rows >= 0
        if self.allowed_names is not None:
            valid &= self.allowed_names[np.where(valid, rows, 0)]
        for position, excluded in enumerate(exclude or ()):
            if len(excluded):
                valid[position] &= ~np.isin(rows[position], list(excluded))
        entities = self.index.entity_of_name[np.where(valid, rows, 0)]
        pairs = np.where(valid, np.arange(len(rows))[:, None] * len(self.index.entity_ids) + entities, -1)
        _, first = np.unique(pairs.ravel(), return_index=True)  # a stable sort: the first is the best
        keep = np.zeros(pairs.size, dtype=bool)
        keep[first] = True
        keep = keep.reshape(pairs.shape) & valid
        keep &= np.cumsum(keep, axis=1) <= self.top_k
        # the kept entries of every query at once, row by row, then each query's slice copied out (a copy: a view
        # would hold the whole batch's arrays in the memo); per query, three boolean selections were the
        # largest Python cost of linking novel mentions
        kept_entities, kept_scores, kept_rows = entities[keep], scores[keep], rows[keep]
        ends = np.cumsum(keep.sum(axis=1)).tolist()
        return [(kept_entities[start:end].copy(), kept_scores[start:end].copy(), kept_rows[start:end].copy())
                for start, end in zip([0, *ends], ends)]
