"""The TF-IDF name index (`index --method tfidf`): character 3-gram cosine search, saved and loaded unchanged."""

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from ontolink.indexes import NAME_INDEXES

NAMES = ["Seizure", "Generalized seizure", "Myopia", "High myopia", "Hypertelorism", "Abnormality of the eye"]
QUERIES = ["seizures", "myopic", "eye abnormality"]


def test_tfidf_search_is_the_cosine_of_character_trigrams():
    index = NAME_INDEXES.get("tfidf").build(NAMES)
    scores, rows = index.search(QUERIES, 3)
    direct = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 3), lowercase=True).fit(NAMES)
    cosines = direct.transform(QUERIES) @ direct.transform(NAMES).T
    for query in range(len(QUERIES)):
        expected = cosines[query].toarray()[0]
        assert list(rows[query]) == list(np.argsort(-expected, kind="stable")[:3])
        np.testing.assert_allclose(scores[query], expected[rows[query]], rtol=1e-5)
    assert NAMES[rows[0][0]] == "Seizure" and NAMES[rows[1][0]] == "Myopia"


def test_a_saved_tfidf_index_loads_and_searches_the_same(tmp_path):
    cls = NAME_INDEXES.get("tfidf")
    index = cls.build(NAMES)
    index.save(tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(cls.files)
    loaded = cls.load(tmp_path, {"index": index.describe()})
    assert len(loaded) == len(NAMES)
    for before, after in zip(index.search(QUERIES, 4), loaded.search(QUERIES, 4)):
        np.testing.assert_array_equal(before, after)
