"""Content words of a mention or a name, for word-overlap features: lowercased, stop words dropped, Porter
stems (gensim's stemmer and stop list, already a dependency), so "tumors" meets "tumor" and "abnormality"
meets "abnormal"."""

import re

_WORD = re.compile(r"[a-z0-9]+")


class ContentWords:
    """Callable: text -> frozenset of stemmed content words (stems memoised: names repeat words a lot)."""

    def __init__(self):
        from gensim.parsing.porter import PorterStemmer
        from gensim.parsing.preprocessing import STOPWORDS

        self._stem = PorterStemmer().stem
        self._stop = STOPWORDS
        self._stems = {}

    def __call__(self, text):
        stems = self._stems
        words = []
        for word in _WORD.findall(text.lower()):
            if word in self._stop:
                continue
            stem = stems.get(word)
            if stem is None:
                stem = stems[word] = self._stem(word)
            words.append(stem)
        return frozenset(words)
