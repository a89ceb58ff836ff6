"""The overlap group: content words shared by the mention and the candidate's names."""

import numpy as np
import pytest

from ontolink.ranking.features import CandidateFeatures
from ontolink.ranking.groups import FEATURE_GROUPS
from ontolink.ranking.words import ContentWords


def test_content_words_are_stemmed_without_stop_words():
    words = ContentWords()
    assert words("Tumors of the Kidney") == words("kidney tumor") and len(words("kidney tumor")) == 2
    assert words("Abnormality of the eye") == words("eye abnormal")
    assert words("of the") == frozenset()


def test_overlap_features_count_the_name_words_the_mention_lacks(loaded_dense_index):
    loaded = loaded_dense_index
    features = CandidateFeatures(loaded, ["dense", "overlap"])
    words = ContentWords()
    mention = "seizures"
    entities, _, matrix, *_ = features([{"id": "m", "mention": mention}])[0]
    column = {name: matrix[:, features.columns.index(name)] for name in FEATURE_GROUPS.get("overlap").columns}
    seizure = entities.tolist().index(loaded.entity_ids.index("HP:0001250"))
    assert column["best_word_f1"][seizure] == 1.0 and column["best_word_f1_gap"][seizure] == 0.0
    for slot, entity in enumerate(entities.tolist()):
        names = [words(loaded.names[row]) for row in np.flatnonzero(loaded.entity_of_name == entity)]
        shared, lengths = [len(words(mention) & name) for name in names], [len(name) for name in names]
        best = max((2 * common / (1 + length) for common, length in zip(shared, lengths) if common), default=0.0)
        assert column["best_word_f1"][slot] == pytest.approx(best)
        # one mention word: the matched name covers it or not; its other words are the extra ones
        recall, extra = column["word_recall"][slot], np.expm1(column["extra_words"][slot])
        assert recall in (0.0, 1.0)
        assert column["word_precision"][slot] == pytest.approx(recall / (recall + extra) if recall else 0.0)
    assert column["extra_words"].max() > 0  # the more specific seizures have names with more words
