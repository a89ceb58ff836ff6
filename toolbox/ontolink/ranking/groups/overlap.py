"""overlap: content words (stemmed, stop words dropped) shared by the mention and the matched name: the share of
the mention's words the name covers, the share of the name's words the mention covers, the count of name words
the mention lacks (a name with extra words is usually too specific); the best word F1 over all the candidate's
names, and its gap to the best candidate's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ontolink.ranking.groups import FEATURE_GROUPS, FeatureGroup
from ontolink.ranking.sparse import sparse_pair_dots
from ontolink.ranking.words import ContentWords

if TYPE_CHECKING:
    from ontolink.indexes.artifact import LoadedIndex
    from ontolink.ranking.groups.base import CandidateBatch


@FEATURE_GROUPS.register("overlap")
class ContentWordOverlap(FeatureGroup):
    columns = ("word_recall", "word_precision", "extra_words", "best_word_f1", "best_word_f1_gap")
    position = 70

    def prepare(self, index: LoadedIndex, options: dict[str, Any]) -> None:
        self._index = index
        self._words = ContentWords()
        self._name_words: tuple[Any, np.ndarray, dict[str, int]] | None = None

    def compute(self, batch: CandidateBatch) -> list[list[np.ndarray] | None]:
        return [[recall, precision, extra_words, best_f1, best_f1 - best_f1.max()] if len(recall) else None
                for recall, precision, extra_words, best_f1 in self._overlaps(batch)]

    def _name_word_matrix(self) -> tuple[Any, np.ndarray, dict[str, int]]:
        """(names x content words binary CSR, content words per name, word -> column), made on first use."""
        if self._name_words is None:
            import scipy.sparse

            vocabulary: dict[str, int] = {}
            indices: list[int] = []
            indptr = [0]
            for name in self._index.names:
                indices += [vocabulary.setdefault(word, len(vocabulary)) for word in self._words(name)]
                indptr.append(len(indices))
            matrix = scipy.sparse.csr_matrix((np.ones(len(indices), np.float32), indices, indptr),
                                             shape=(len(self._index.names), max(1, len(vocabulary))))
            self._name_words = (matrix, np.diff(indptr).astype(np.float32), vocabulary)
        return self._name_words

    def _overlaps(self, batch: CandidateBatch) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """Per record: (mention words the matched name covers, name words the mention covers, name words the
        mention lacks, best word F1 over the candidate's names), each the best over the mention's forms.

        Shared words are dot products of binary word vectors (``sparse_pair_dots``, as the lexical group's
        cosines): one pass over every (form, name) pair instead of a set intersection each."""
        import scipy.sparse

        names, name_lengths, vocabulary = self._name_word_matrix()
        form_columns: list[list[int]] = []  # one row per mention form
        form_lengths: Any = []  # a list, then its array
        # (form, name row, candidate slot) pairs
        matched: tuple[list[Any], list[Any], list[Any]] = ([], [], [])
        with_all: tuple[list[Any], list[Any], list[Any]] = ([], [], [])
        slot_offset = [0]
        every = batch.candidate_names
        for position, (record, found) in enumerate(zip(batch.records, batch.candidates)):
            forms: Any = [self._words(record["mention"])]  # word sets, then their sparse rows
            long_form = batch.long_forms[position]
            if long_form:
                forms.append(self._words(long_form))
            forms = [form for form in forms if form] or [frozenset()]
            rows, slots = every[position]
            for form in forms:
                number = len(form_lengths)
                form_lengths.append(len(form))
                form_columns.append([vocabulary[word] for word in form if word in vocabulary])
                for pairs, (pair_rows, pair_slots) in ((matched, (found.name_rows, np.arange(len(found.entities)))),
                                                       (with_all, (rows, slots))):
                    pairs[0].append(np.full(len(pair_rows), number))
                    pairs[1].append(pair_rows)
                    pairs[2].append(pair_slots + slot_offset[-1])
            slot_offset.append(slot_offset[-1] + len(found.entities))
        total = slot_offset[-1]
        recall, precision = np.zeros(total, np.float32), np.zeros(total, np.float32)
        extra_words, best_f1 = np.full(total, np.inf, np.float32), np.zeros(total, np.float32)
        if total:
            indptr = np.r_[0, np.cumsum([len(columns) for columns in form_columns])]
            indices = np.fromiter((column for columns in form_columns for column in columns), dtype=np.int64)
            forms = scipy.sparse.csr_matrix((np.ones(len(indices), np.float32), indices, indptr),
                                            shape=(len(form_lengths), names.shape[1]))
            form_lengths = np.array(form_lengths, dtype=np.float32)
            for pairs, is_matched in ((matched, True), (with_all, False)):
                form_rows, name_rows, slots = (np.concatenate(part) for part in pairs)
                shared = sparse_pair_dots(forms, form_rows, names, name_rows)
                mention_length, name_length = form_lengths[form_rows], name_lengths[name_rows]
                if is_matched:
                    np.maximum.at(recall, slots, shared / np.maximum(1, mention_length))
                    np.maximum.at(precision, slots, shared / np.maximum(1, name_length))
                    np.minimum.at(extra_words, slots, name_length - shared)
                else:
                    f1 = np.where(shared > 0, 2 * shared / np.maximum(1, mention_length + name_length), 0)
                    np.maximum.at(best_f1, slots, f1.astype(np.float32))
        extra_words = np.log1p(extra_words)
        return [(recall[start:end], precision[start:end], extra_words[start:end], best_f1[start:end])
                for start, end in zip(slot_offset, slot_offset[1:])]
