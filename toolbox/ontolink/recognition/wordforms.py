"""Word-form keys: every inflection and derivation of a word maps to one key.

Two stages. The Snowball English stemmer (the `snowballstemmer` package, a maintained
implementation of Porter2) folds inflection and the regular English derivations ("deviation",
"deviated" -> "deviat"). It does not join the Greek and Latin pairs a scientific vocabulary is
full of ("dysplasia"/"dysplastic", "fibrosis"/"fibrotic", "absence"/"absent"), so a second stage
learns those from the ontology's own vocabulary: two stems that share a long prefix and differ
only in endings that alternate across many prefixes of the vocabulary (here "ia"/"t",
"si"/"t", "c"/"t") join one cluster. Nothing is listed by hand, so the same code serves any
ontology in English.
"""

import re
import unicodedata
from collections import Counter, defaultdict

# Words that carry no concept: articles, prepositions, conjunctions, auxiliaries, pronouns. A
# name's content is what is left ("Abnormality of the eye" -> {abnormality, eye}).
FUNCTION_WORDS = frozenset("""a an the of in on at to into onto from by for with within as and or nor but
is are was were be been being has have had do does did this that these those its it their his her
which who whom whose than then so such via per upon over under about""".split())
# "and"/"or" join coordinated phrases: a name that has none may not be matched across one.
CONJUNCTIONS = frozenset(("and", "or", "nor"))
# Short all-capital tokens are abbreviations ("ALL", "ASD"): kept case-sensitive, never stemmed.
ABBREVIATION_LENGTH = 5
# Words whose stems and keys are remembered (a long corpus brings ever new words: memory stays bounded).
MAX_WORDS_KEPT = 1_000_000
# A capital letter, a hyphen and digits is one designation, written either way ("type A-1", "type A1"):
# one token, keyed without its hyphen; every other token is a run of letters and digits.
_TOKEN = re.compile(r"\b[A-Z]-[0-9]+\b|[^\W_]+", re.UNICODE)


def tokens(text):
    """(word, start, end) of every run of letters and digits in ``text``."""
    return [(match.group(), match.start(), match.end()) for match in _TOKEN.finditer(text)]


def words(text):
    """The runs of letters and digits in ``text`` (the words of ``tokens``, without their offsets)."""
    return _TOKEN.findall(text)


def _words(name):
    return [word for word, _, _ in tokens(name)] if isinstance(name, str) else name


# Latin and Greek plurals English keeps in scientific text, and their singular endings: Snowball knows
# neither ("carcinomata", "arthrogryposes", "vertebrae" keep apart from "carcinoma", "arthrogryposis",
# "vertebra"). Longest ending first.
CLASSICAL_PLURALS = (("omata", "oma"), ("oses", "osis"), ("ae", "a"))


def singular(word):
    """``word`` (lowercase) with a Latin or Greek plural ending made singular ("colobomata" -> "coloboma",
    "stenoses" -> "stenosis", "fistulae" -> "fistula"); other words unchanged. Only words of at least six
    letters: "toes", "mae" are not plurals of this kind."""
    if len(word) >= 6:
        for plural, one in CLASSICAL_PLURALS:
            if word.endswith(plural):
                return word[: -len(plural)] + one
    return word


def unaccented(word):
    """``word`` without its diacritics ("café" -> "cafe", "Müller" -> "Muller"): ontologies spell most
    names in ASCII."""
    if word.isascii():
        return word
    return "".join(character for character in unicodedata.normalize("NFKD", word)
                   if not unicodedata.combining(character))


def spelled(word):
    """``word`` (lowercase) spelled as most names are: British spellings as American ones (haemorrhage, oedema,
    tumour), classical plurals as their singulars, accented letters as plain ones. Both keys (``WordForms``,
    before stemming) and the light folding (``fold``) start from it."""
    word = singular(unaccented(word)).replace("ae", "e").replace("oe", "e")
    if len(word) > 4 and word.endswith(("our", "ours")):
        word = word.replace("our", "or")
    return word


def is_abbreviation(word):
    """Short all-capital tokens, a single capital letter too: inside a name "A" is a designation ("Type A
    brachydactyly"), not the article, and "C" in "brachydactyly type C" is not "c"."""
    return len(word) <= ABBREVIATION_LENGTH and word.isupper()


class WordForms:
    """Maps a word to its key: None for a function word, the word itself for an abbreviation,
    else its cluster of stems.

    ``names`` (for each entity, its names, each a string or its list of words) is where the
    clusters are learned. Two names
    of one entity whose content stems differ in one stem only ("Renal dysplasia", "Dysplastic
    kidneys" do not; "Dysplastic kidney", "Kidney dysplasia" do) show that the two differing stems
    are forms of one word when they share a prefix of ``min_prefix`` characters; the pair of
    endings they differ by ("ia"/"t") is an alternation. An alternation seen in at least
    ``min_pairs`` such synonym pairs then joins every two stems of the vocabulary that share a
    prefix of ``rule_prefix`` characters and differ by it (longer than the synonym pairs' prefix:
    short words such as "face"/"facet" are too often different words).
    """

    def __init__(self, names=(), min_prefix=4, rule_prefix=6, max_ending=4, min_pairs=3, clusters=True):
        import snowballstemmer

        self._stemmer = snowballstemmer.stemmer("english")
        self._stems = {}
        self._keys = {}
        self.cluster_of = {}
        self.alternations = {}
        if clusters:
            stemmed = [[[self.stem(word) for word in _words(name) if self._content(word)] for name in group]
                       for group in names]
            self.cluster_of, self.alternations = _learn_clusters(stemmed, min_prefix, rule_prefix, max_ending,
                                                                  min_pairs)

    def stem(self, word):
        folded = word.lower()
        stem = self._stems.get(folded)
        if stem is None:
            stem = self._stemmer.stemWord(spelled(folded))
            if len(self._stems) < MAX_WORDS_KEPT:
                self._stems[folded] = stem
        return stem

    @staticmethod
    def _content(word):
        return word.lower() not in FUNCTION_WORDS

    def key(self, word):
        try:
            return self._keys[word]
        except KeyError:
            pass
        if is_abbreviation(word):
            key = word.replace("-", "")
        elif word.lower() in FUNCTION_WORDS:
            key = None
        else:
            stem = self.stem(word)
            key = self.cluster_of.get(stem, stem)
        if len(self._keys) < MAX_WORDS_KEPT:
            self._keys[word] = key
        return key


def fold(word):
    """Light folding only: case (not of abbreviations), British spelling, plural. A one-word name is
    matched in these forms only: its derivations are often other concepts ("sinus", "sinusitis";
    "cell", "cellular")."""
    if is_abbreviation(word):
        return word.replace("-", "")
    word = spelled(word.lower())
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _common_prefix(first, second):
    length = 0
    for a, b in zip(first, second):
        if a != b:
            break
        length += 1
    return length


def one_apart(sets):
    """(a, b) for each two of ``sets`` (a list) that differ in one item on each side: a synonym pair's words where
    all else is shared ({renal, anomaly} and {kidney, anomaly}: renal, kidney)."""
    for index, first in enumerate(sets):
        for second in sets[index + 1:]:
            only_first, only_second = first - second, second - first
            if len(only_first) == 1 and len(only_second) == 1:
                yield next(iter(only_first)), next(iter(only_second))


def _learn_clusters(stemmed_names, min_prefix, rule_prefix, max_ending, min_pairs):
    """(stem -> cluster key, alternation -> synonym pairs showing it) from each entity's stemmed names."""
    alternation_count = Counter()
    pairs = set()
    vocabulary = set()
    for group in stemmed_names:
        sets = []
        for stems in group:
            vocabulary.update(stems)
            stem_set = frozenset(stems)
            if stem_set and stem_set not in sets:
                sets.append(stem_set)
        for a, b in one_apart(sets):
            shared = _common_prefix(a, b)
            if shared < min_prefix or len(a) - shared > max_ending or len(b) - shared > max_ending:
                continue
            pair = (a, b) if a < b else (b, a)
            if pair not in pairs:
                pairs.add(pair)
                alternation_count[tuple(sorted((a[shared:], b[shared:])))] += 1
    alternations = {pair: count for pair, count in alternation_count.items() if count >= min_pairs}
    by_prefix = defaultdict(set)
    for stem in vocabulary:
        for cut in range(max(rule_prefix, len(stem) - max_ending), len(stem) + 1):
            by_prefix[stem[:cut]].add(stem)
    parent = {}

    def root(stem):
        while parent.get(stem, stem) != stem:
            stem = parent[stem]
        return stem

    def join(a, b):
        a, b = root(a), root(b)
        if a != b:
            order = sorted((a, b), key=lambda stem: (len(stem), stem))
            parent[order[1]] = order[0]

    for a, b in pairs:
        join(a, b)
    for prefix, group in by_prefix.items():
        if len(group) < 2:
            continue
        ordered = sorted(group)
        for index, first in enumerate(ordered):
            for second in ordered[index + 1:]:
                if _common_prefix(first, second) == len(prefix) and \
                        tuple(sorted((first[len(prefix):], second[len(prefix):]))) in alternations:
                    join(first, second)
    return {stem: root(stem) for stem in parent}, alternations
