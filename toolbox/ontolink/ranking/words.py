"""Content words of a mention or a name, for word-overlap features: lowercased, stop words dropped, Porter
stems, so "tumors" meets "tumor" and "abnormality" meets "abnormal".

The stems are those of Martin Porter's own C implementation of his algorithm (the one gensim's
``PorterStemmer`` ports, which the ranker used until gensim left the core install), so that rankers
already trained keep their features: Snowball's ``porter`` algorithm (``snowballstemmer``, in C
through PyStemmer when installed) is the published algorithm, and the C version departs from it
in three places, which ``PorterStemmer`` adds on top:

- one- and two-letter words are left alone ("ms" stays "ms", not "m");
- step 2 turns -bli into -ble where the published rule turns only -abli into -able, so "possibly"
  meets "possible";
- step 2 turns -logi into -log, so "pathology" meets "pathological".

The two step-2 rules are applied to Snowball's result: a word whose step-2 form ends in -bli or -logi
leaves steps 3-5 with nothing to remove, so that form is the result, and the rule can be applied
to it. Two rarer departures are not reproduced, so such words stem differently from gensim: -bli or
-logi followed by a suffix step 3 or 4 removes (made-up words such as "aetiologiness", which gets
"aetiolog" here and "aetiologi" there), and a doubled letter other than b, d, f, g, m, n, p, r, t before
-ed or -ing ("trekked": the C version undoubles any consonant, Snowball only those nine). No word of
HPO (hp.obo), of the GSC+ and NCBI-disease abstracts, of the LPT ontology or of the default encoder's
vocabulary is either (95,584 words, all stemmed as gensim does; Snowball's plain ``porter`` differs on
113 of them); ``tests/components/test_ranker_feature_overlap.py`` checks every word of hp.obo against gensim
where gensim is installed.

The stop list is gensim's ``STOPWORDS``: scikit-learn's English list plus the 19 words of
``GENSIM_EXTRA_STOP_WORDS``.
"""

import re

_WORD = re.compile(r"[a-z0-9]+")

# gensim 4.4's parsing.preprocessing.STOPWORDS is scikit-learn's ENGLISH_STOP_WORDS (318 words) and these.
GENSIM_EXTRA_STOP_WORDS = frozenset((
    "computer", "did", "didn", "does", "doesn", "doing", "don", "just", "kg", "km", "make", "quite", "really",
    "regarding", "say", "unless", "used", "using", "various",
))


def stop_words() -> frozenset:
    """The words ``ContentWords`` drops."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS) | GENSIM_EXTRA_STOP_WORDS


def _has_vowel_then_consonant(text: str) -> bool:
    """Porter's measure of ``text`` is above 0: a vowel followed by a consonant somewhere in it. A 'y' is a
    vowel after a consonant and a consonant first or after a vowel."""
    after_vowel = False
    for position, letter in enumerate(text):
        vowel = letter in "aeiou" or (letter == "y" and position > 0 and not after_vowel)
        if after_vowel and not vowel:
            return True
        after_vowel = vowel
    return False


class PorterStemmer:
    """Callable: a lowercase word -> its stem by Martin Porter's C implementation (see the module's docstring)."""

    def __init__(self):
        import snowballstemmer

        self._porter = snowballstemmer.stemmer("porter").stemWord

    def __call__(self, word: str) -> str:
        if len(word) <= 2:
            return word
        stem = self._porter(word)
        if stem.endswith("logi") and _has_vowel_then_consonant(stem[:-4]):
            return stem[:-1]
        if stem.endswith("bli") and _has_vowel_then_consonant(stem[:-3]):
            return self._porter(stem[:-1] + "e")  # steps 3-5 then run on -ble, as in the C version
        return stem


class ContentWords:
    """Callable: text -> frozenset of stemmed content words (stems memoised: names repeat words a lot)."""

    def __init__(self):
        self._stem = PorterStemmer()
        self._stop = stop_words()
        self._stems = {}

    def __call__(self, text: str) -> frozenset:
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
