"""`ontolink annotate`: find mentions of an ontology's names in raw documents.

Dictionary matching: every name and synonym, normalised (case folded except
short all-capital abbreviations, simple plural folding, punctuation as a word
break), goes into one Aho-Corasick automaton (pyahocorasick); a document is
normalised the same way and scanned once. Matches must start and end on word
boundaries; overlapping matches keep the longest (then the leftmost). A dense
index can add spans the dictionary misses: word n-grams whose best name
scores at least a threshold.
"""

import re

from ontolink.formats import document_text

_WORD = re.compile(r"\w+")
# Short all-capital tokens are abbreviations ("ALL", "ASD"): matched case-sensitively.
ABBREVIATION_LENGTH = 5
# Words a dense-index span may not start or end with: a span is a phrase, not "of the".
STOPWORDS = frozenset("""a an and are as at be been but by for from had has have in into is it its of on or
that the their there these they this those to was were which with without not no we our after before than
then also both each other such may can could should would patients patient case cases study""".split())


def fold(token):
    """Case, British spelling and plural folding of one word; names and text go through the same function."""
    if len(token) <= ABBREVIATION_LENGTH and token.isupper() and len(token) > 1:
        return token
    token = token.lower().replace("ae", "e").replace("oe", "e")  # haemorrhage, oedema
    if len(token) > 4 and token.endswith(("our", "ours")):  # tumour(s), behaviour
        token = token.replace("our", "or")
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def words(text):
    """(folded word, start, end) for each word of ``text``."""
    return [(fold(match.group()), match.start(), match.end()) for match in _WORD.finditer(text)]


class NameMatcher:
    """An Aho-Corasick automaton over the folded names of an ontology's entities."""

    def __init__(self, ontology, roots=None, min_characters=3):
        import ahocorasick

        keep = None
        if roots:
            keep = set()
            frontier = [root for root in roots if root in ontology]
            while frontier:
                entity_id = frontier.pop()
                if entity_id not in keep:
                    keep.add(entity_id)
                    frontier.extend(ontology.children.get(entity_id, ()))
        ids_of = {}
        for entity in ontology:
            if keep is not None and entity.id not in keep:
                continue
            for name in ontology.names(entity):
                key = " ".join(word for word, _, _ in words(name))
                if len(key) < min_characters:
                    continue
                ids = ids_of.setdefault(key, [])
                if entity.id not in ids:
                    ids.append(entity.id)
        self.automaton = ahocorasick.Automaton()
        for key, ids in ids_of.items():
            self.automaton.add_word(key, (len(key), tuple(ids)))
        self.size = len(ids_of)
        if self.size:
            self.automaton.make_automaton()

    def matches(self, text, nested=False):
        """Longest non-overlapping (start, end, ids) of names in ``text``, in text order; with
        ``nested``, also the names inside those ("colitis" in "ulcerative colitis")."""
        if not self.size:
            return []
        tokens = words(text)
        folded = " ".join(word for word, _, _ in tokens)
        token_at = {}  # character position in ``folded`` -> token index, for starts and ends
        position = 0
        for index, (word, _, _) in enumerate(tokens):
            token_at[position] = index
            position += len(word) + 1
        found = []
        for last, (length, ids) in self.automaton.iter(folded):
            begin, stop = last - length + 1, last + 1
            if begin in token_at and (stop == len(folded) or folded[stop] == " "):
                first = token_at[begin]
                final = first + folded[begin:stop].count(" ")
                found.append((first, final, ids))
        found.sort(key=lambda match: (-(match[1] - match[0]), match[0]))  # longest, then leftmost
        taken = [False] * len(tokens)
        chosen = []
        inside = []
        for first, final, ids in found:
            if any(taken[first:final + 1]):
                if nested and all(taken[first:final + 1]):
                    inside.append((tokens[first][1], tokens[final][2], list(ids)))
                continue
            for index in range(first, final + 1):
                taken[index] = True
            chosen.append((tokens[first][1], tokens[final][2], list(ids)))
        return sorted(chosen + inside)


def candidate_spans(text, taken, max_words=4):
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


def annotate_documents(documents, matcher, entity_type="Entity", nested=False, dense=None, dense_threshold=0.9,
                       max_words=4, context_characters=0):
    """Yield a Mention record per name found in each document (no gold: these are predictions).

    ``dense`` (a loaded index) adds n-gram spans outside the dictionary's
    matches whose best name scores at least ``dense_threshold``.
    """
    linker = None
    if dense is not None:
        from ontolink.linker import Linker

        linker = Linker(dense, top_k=1)
    for document in documents:
        text = document_text(document)
        found = [(start, end, ids, "dictionary") for start, end, ids in matcher.matches(text, nested=nested)]
        if linker is not None:
            found += _dense_spans(text, found, linker, dense, dense_threshold, max_words)
        for start, end, ids, source in sorted(found):
            left, right = text[:start], text[end:]
            if context_characters:
                left, right = left[-context_characters:], right[:context_characters]
            yield {"id": f"{document.id}:{start}-{end}", "doc_id": document.id, "start": start, "end": end,
                   "mention": text[start:end], "context_left": left, "context_right": right, "type": entity_type,
                   "matched_by": source, "matched_ids": ids}


def _dense_spans(text, found, linker, loaded, threshold, max_words):
    taken = [False] * len(text)
    for start, end, _, _ in found:
        taken[start:end] = [True] * (end - start)
    spans = candidate_spans(text, taken, max_words)
    if not spans:
        return []
    queries = [loaded.query_text({"mention": text[start:end], "context_left": text[:start],
                                  "context_right": text[end:]}) for start, end in spans]
    scored = []
    for (start, end), candidates in zip(spans, linker.candidates(queries)):
        if candidates and candidates[0]["score"] >= threshold:
            scored.append((candidates[0]["score"], end - start, start, end, candidates[0]["id"]))
    chosen = []
    for score, _, start, end, entity_id in sorted(scored, key=lambda item: (-item[0], -item[1], item[2])):
        if any(taken[start:end]):
            continue
        taken[start:end] = [True] * (end - start)
        chosen.append((start, end, [entity_id], "dense"))
    return chosen
