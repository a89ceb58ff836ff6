"""The word n-grams of a text that may be mentions: what `annotate --index` asks a dense index about, and
what a span scorer learns its negatives from (the same spans at training and at use)."""

import re

# the longest n-gram asked of an index (annotate --max-words) and scored by a span scorer (train span-scorer)
MAX_WORDS = 4
_WORD = re.compile(r"\w+")
# Words a dense-index span may not start or end with: a span is a phrase, not "of the".
STOPWORDS = frozenset("""a an and are as at be been but by for from had has have in into is it its of on or
that the their there these they this those to was were which with without not no we our after before than
then also both each other such may can could should would patients patient case cases study""".split())


def candidate_spans(text, taken, max_words=MAX_WORDS):
    """Word n-grams (up to ``max_words``) inside one sentence, not touching ``taken`` characters,
    not starting or ending with a stopword or a number: the spans a dense index is asked about."""
    tokens = [(match.group(), match.start(), match.end()) for match in _WORD.finditer(text)]
    spans = []
    for first in range(len(tokens)):
        for final in range(first, min(len(tokens), first + max_words)):
            start, end = tokens[first][1], tokens[final][2]
            if final > first and re.search(r"[.;:!?()\[\]]", text[tokens[final - 1][2]:tokens[final][1]]):
                break  # a span does not cross a sentence or a bracket
            if any(taken[start:end]):
                break
            edge = (tokens[first][0].lower(), tokens[final][0].lower())
            if any(word in STOPWORDS or word.isdigit() or len(word) < 3 for word in edge):
                continue
            spans.append((start, end))
    return spans
