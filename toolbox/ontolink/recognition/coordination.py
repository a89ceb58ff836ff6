"""Coordinated names: "palmar and plantar pits" names *Palmar pits* and *Plantar pits*, "renal
hypoplasia/dysplasia" *Renal hypoplasia* and *Renal dysplasia*.

A coordination is a run of conjuncts joined by "and", "or", "and/or", "/" or list commas (", ... and")
inside one sentence. The words shared by the conjuncts sit either after the last one ("A, B and C
H": right-shared) or before the first ("H A, B or C": left-shared). The shared words are those that
make a name with the conjunct next to them ("plantar pits" in "palmar and plantar pits",
"malformations of the kidney" in "malformations of the kidney or collecting system"), or a name of
two words or more by themselves after conjuncts that modify ("cortical or mixed lens opacities"):
a name, not a guess, fixes where they start and end. Each other conjunct with the shared words is an *expanded
name*, looked up by the matcher itself (content words in any order and word form). It is annotated
on the span from the shared words to the conjunct, through the words between: the convention of
corpora such as GSC+, where "orofacial, articular, and auditory manifestations" is annotated as
*Abnormality of the mouth*. The conjunct next to the shared words is an ordinary name match, left to
the matcher.

An expanded name that is no name of the ontology ("dysgenesis of the vermis") is kept too, without
ids, when its conjunct is not a name by itself and either its words all occur in one name (*Dysgenesis
of the cerebellar vermis*) or its shape says it is a conjunct: a conjunct of words that modify the names
they occur in, before shared words ("cranial" in "cranial and spinal meningiomas"), or one after shared
words that end in a function word ("malformations of the ..."). Its ``expansion`` text is what `link`
searches. Where shorter shared words or a shorter conjunct also
make names ("bilateral cleft lip and palate": *Bilateral cleft palate*, and *Cleft palate* on "cleft
lip and palate"), those are kept as well, as names inside names are.
"""

import weakref
from typing import Any

from ontolink.recognition.match import Match

JOINING_WORDS = frozenset(("and", "or"))
# An article may open the conjunct after the conjunction ("of the canals and the incus"): skipped.
ARTICLES = frozenset(("the", "a", "an"))
SENTENCE_BREAKS = frozenset(".;:!?()[]{}")
PHRASE_BREAKS = SENTENCE_BREAKS | {","}
MAX_CONJUNCT = 2  # content words in one conjunct
MAX_SHARED = 4  # words shared by the conjuncts, function words included ("malformations of the")
# A chain is tried from each of its first and last joints to each of its last and first, this many on each side:
# every run of a list of hundreds of items, each run expanded, was quadratic in the list (cubic for "or" chains).
# The longest chain of the GSC+ and NCBI-disease abstracts has 9 joints.
MAX_TRIMMED = 16

# matcher -> (key -> numbers of the names holding it, keys that modify, not head)
_tables: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
# A word modifies (is no head of) the names it occurs in when it ends at most this share of them, in
# at least MODIFIER_NAMES names: "renal", "cranial", "posterior" do; "syndrome", "nevi", "hand" do not.
MODIFIER_SHARE = 0.25
MODIFIER_NAMES = 3


def coordinated_matches(matcher, text, keyed, found=()):
    """Match objects (source "coordination", ``expansion`` the name written out) for the coordinated
    names of ``text`` (``keyed``: its ``matcher.keyed_tokens``; ``found``: the matcher's own matches
    there, which say where a conjunct is a name by itself)."""
    if "/" not in text and not any(token[3] in JOINING_WORDS for token in keyed):
        return []  # no coordination without a joining word or a slash: most sentences
    return _Coordinations(matcher, text, keyed, found).matches()


def _trimmed(positions, count, first=0):
    """Of ``positions`` (of ``first``..``first + count - 1``), the first and last ``MAX_TRIMMED``."""
    return [position for position in positions
            if position < first + MAX_TRIMMED or position >= first + count - MAX_TRIMMED]


def _key_tables(matcher):
    """(key -> numbers of the names holding it, keys that modify the names they occur in) of ``matcher``'s names."""
    occurrences, endings = matcher.entries.occurrences, matcher.entries.endings
    modifiers = frozenset(key for key, count in occurrences.items()
                          if count >= MODIFIER_NAMES and endings.get(key, 0) <= MODIFIER_SHARE * count)
    return matcher.entries.holding, modifiers


class _Coordinations:
    def __init__(self, matcher, text, keyed, found):
        self.matcher, self.text, self.keyed = matcher, text, keyed
        # the matches indexed by token, so that each question about them costs the conjunct's length, not
        # the number of matches (quadratic in a long document): the most words of a match on each span; the
        # furthest end of a match starting at or before each token, for one and for two words or more; the
        # earliest start of a match ending at each token, and the furthest end of one starting there
        count = len(keyed)
        self.span_words = {}
        self.reach = {1: [-1] * count, 2: [-1] * count}
        self.earliest_start, self.furthest_end = [count] * count, [-1] * count
        for match in found:
            span = (match.first, match.last)
            self.span_words[span] = max(self.span_words.get(span, 0), match.words)
            for min_words, reach in self.reach.items():
                if match.words >= min_words:
                    reach[match.first] = max(reach[match.first], match.last)
            self.earliest_start[match.last] = min(self.earliest_start[match.last], match.first)
            self.furthest_end[match.first] = max(self.furthest_end[match.first], match.last)
        for reach in self.reach.values():
            for index in range(1, count):
                reach[index] = max(reach[index], reach[index - 1])
        self.gaps = [text[keyed[index][2]:keyed[index + 1][1]] for index in range(len(keyed) - 1)]
        self.contents = [token[0] is not None for token in keyed]
        self.sentence = []
        number = 0
        for index in range(len(keyed)):
            if index and not SENTENCE_BREAKS.isdisjoint(self.gaps[index - 1]):
                number += 1
            self.sentence.append(number)
        self.names = {}  # token indexes -> ids (memo)
        tables = _tables.get(matcher)
        if tables is None:
            tables = _tables[matcher] = _key_tables(matcher)
        self.holding, self.modifiers = tables

    def matches(self):
        result = []
        seen = set()
        for chain in self.chains():
            # a chain's first or last joints may belong to what comes before or after ("pits, renal
            # hypoplasia/dysplasia or agenesis", "posterior subcapsular or capsular cataract and cortical
            # cataract"): of the chain and its shorter runs of joints, the one that expands best
            expanded = []
            count = len(chain)
            for start in _trimmed(range(count), count):
                for end in _trimmed(range(count, start, -1), count, first=1):
                    if chain[end - 1][2] == "comma":
                        continue  # commas join a list only before its conjunction
                    candidate = self.expand(chain[start:end])
                    if self.worth(candidate) > self.worth(expanded):
                        expanded = candidate
            for first, last, ids, expansion, _ in expanded:
                if (first, last, expansion) not in seen:
                    seen.add((first, last, expansion))
                    result.append(Match(first, last, ids, 0, True, last - first + 1, source="coordination",
                                        expansion=expansion))
        return result

    # -- tokens ------------------------------------------------------------------------------------
    def gap(self, index):
        """The characters between token ``index`` and the next one."""
        return self.gaps[index]

    def content(self, index):
        return 0 <= index < len(self.contents) and self.contents[index]

    def phrase(self, first, last):
        """Whether tokens ``first``..``last`` exist and run without punctuation between them."""
        if first < 0 or last >= len(self.keyed) or first > last:
            return False
        gaps = self.gaps
        return all(PHRASE_BREAKS.isdisjoint(gaps[index]) for index in range(first, last))

    def words(self, first, last):
        return self.text[self.keyed[first][1]:self.keyed[last][2]]

    # -- structure ---------------------------------------------------------------------------------
    def chains(self):
        """Coordinations as lists of joints: (last token of the left part, first token of the right part, kind)."""
        keyed = self.keyed
        joints = []  # in text order; None at a sentence break
        index = 0
        while index < len(keyed) - 1:
            gap = self.gaps[index]
            if not SENTENCE_BREAKS.isdisjoint(gap):
                joints.append(None)
                index += 1
                continue
            word = keyed[index + 1][3]
            if word in JOINING_WORDS and index + 2 < len(keyed):
                right = index + 2
                if word == "and" and keyed[right][3] == "or" and self.gap(index + 1).strip() == "/":
                    right += 1  # and/or
                if right < len(keyed) and keyed[right][3] in ARTICLES:
                    right += 1
                if right < len(keyed) and self.content(right) and self.content(index) \
                        and self.phrase(index + 1, right):
                    # ", and" closes a list: it starts no new one inside a chain that has its conjunction
                    joints.append((index, right, "list end" if "," in gap else "conjunction"))
                index = right
                continue
            if self.content(index) and self.content(index + 1):
                stripped = gap.strip()
                if stripped == "/":
                    joints.append((index, index + 1, "slash"))
                elif stripped == ",":
                    joints.append((index, index + 1, "comma"))
            index += 1
        chains, current = [], []
        for joint in joints + [None]:
            # a new chain where the conjunct between two joints would be long, or where a comma follows
            # a conjunction ("A and B, C": list commas come before the conjunction)
            if joint is not None and current and (joint[0] - current[-1][1] + 1 > MAX_CONJUNCT or (
                    joint[2] in ("comma", "list end") and any(previous[2] != "comma" for previous in current))):
                chains.append(current)
                current = []
            if joint is None:
                chains.append(current)
                current = []
            else:
                current.append(joint)
        result = []
        for chain in chains:
            # commas join a list only when a conjunction or slash follows them in the chain
            while chain and chain[-1][2] == "comma":
                chain = chain[:-1]
            if chain:
                result.append(chain)
        return result

    # -- names -------------------------------------------------------------------------------------
    def name(self, indexes):
        """Ids of the name the tokens ``indexes`` (in order) make, by the matcher's own rules, or None."""
        indexes = tuple(indexes)
        if indexes in self.names:
            return self.names[indexes]
        content = [position for position, index in enumerate(indexes) if self.keyed[index][0] is not None]
        ids = None
        keys = frozenset(self.keyed[indexes[position]][0] for position in content)
        # with no gaps allowed, a name covering every content word has exactly their keys: most lookups end here
        if len(content) >= 2 and (self.matcher.max_gaps or keys in self.matcher.entries):
            sub = [self.keyed[index][:4] + (0,) + self.keyed[index][5:] for index in indexes]
            whole = [match for match in self.matcher.candidates(sub)
                     if match.first <= content[0] and match.last >= content[-1]]
            if whole:
                ids = list(min(whole, key=Match.rank).ids)
        self.names[indexes] = ids
        return ids

    def covered(self, first, last, min_words=1):
        """Whether one of the matcher's matches of at least ``min_words`` words covers tokens ``first``..``last``."""
        return self.reach[min_words][first] >= last

    def cut(self, first, last, shared_after):
        """Whether a match of the matcher runs from inside tokens ``first``..``last`` out on the side away
        from the shared words: the conjunct is then part of another phrase ("renal hypoplasia or
        malformations of the kidney": "malformations" is not a conjunct of "renal")."""
        if shared_after:
            return any(self.earliest_start[index] < first for index in range(first, last + 1))
        return any(self.furthest_end[index] > last for index in range(first, last + 1))

    def modifying(self, first, last):
        """Whether the content words of tokens ``first``..``last`` all modify the names they occur in."""
        return all(self.keyed[index][0] in self.modifiers for index in range(first, last + 1)
                   if self.keyed[index][0] is not None)

    def in_a_name(self, indexes):
        """Whether the content words of tokens ``indexes`` all occur in one name of the ontology (in some
        word form): "dysgenesis of the vermis" in *Dysgenesis of the cerebellar vermis*."""
        common = None
        for index in indexes:
            key = self.keyed[index][0]
            if key is None:
                continue
            holding = self.holding(key)
            common = holding if common is None else common & holding
            if not common:
                return False
        return common is not None

    # -- expansion ---------------------------------------------------------------------------------
    def expand(self, chain):
        """(first token, last token, ids, expansion, plausibility) of each conjunct expanded with the shared words
        (see ``expanded``)."""
        middles = [(left[1], right[0]) for left, right in zip(chain, chain[1:])]
        middles = [middle for middle in middles if self.content(middle[0]) and self.content(middle[1])]
        if any(self.covered(*middle, min_words=2) for middle in middles):
            return []  # a name of its own in the middle: "X or Y cataract and Z cataract" is two coordinations
        best = []
        for candidate in (self.right_shared(chain[0][0], middles, chain[-1][1]),
                          self.left_shared(chain[0][0], middles, chain[-1][1])):
            if self.worth(candidate) > self.worth(best):
                best = candidate
        return best

    @staticmethod
    def worth(expanded):
        """Expansions that are names, then those whose words occur in one name, then any."""
        return (sum(1 for *_, plausible in expanded if plausible == 2),
                sum(1 for *_, plausible in expanded if plausible >= 1), len(expanded))

    def right_shared(self, first_end, middles, last_start):
        """A, B and C H -> A H, B H (C H is an ordinary match)."""
        best = []
        if self.keyed[last_start - 1][3] in ARTICLES:
            return best  # "a vitreous anomaly and a flat face": an article opens a phrase of its own
        # the longer adjacent conjunct first: of two equal readings, "branchial and external ear
        # malformations" shares "malformations", not "ear malformations"
        for last_length in range(MAX_CONJUNCT, 0, -1):
            last_end = last_start + last_length - 1
            if not self.content(last_end) or not self.phrase(last_start, last_end):
                continue
            for shared_length in range(MAX_SHARED, 0, -1):
                head = (last_end + 1, last_end + shared_length)
                # the shared words may open with a function word: "shortening or missing of the middle phalanges"
                if not (self.content(head[1]) and self.phrase(last_start, head[1])):
                    continue
                # confirmed by a name: the adjacent conjunct with the shared words, or shared words of two
                # words or more alone, after modifiers ("cortical, or mixed lens opacities": *Cataract*)
                if not self.name(range(last_start, head[1] + 1)) and not (
                        self.span_words.get(head, 0) >= 2
                        and self.modifying(last_start, last_end)):
                    continue
                firsts = [(first_end - length + 1, first_end) for length in range(MAX_CONJUNCT, 0, -1)
                          if self.content(first_end - length + 1) and self.phrase(first_end - length + 1, first_end)
                          and self.sentence[first_end - length + 1] == self.sentence[last_start]]
                unnamed = not any(self.covered(*middle) for middle in middles)
                expanded = []
                for options in [firsts] + [[middle] for middle in middles]:
                    expanded += self.conjunct(options, head, True, unnamed, last_length)
                if self.worth(expanded) > self.worth(best):
                    best = expanded
        return best

    def left_shared(self, first_end, middles, last_start):
        """H A, B or C -> H B, H C (H A is an ordinary match)."""
        best, best_head = [], None
        for first_length in range(1, MAX_CONJUNCT + 1):
            first_start = first_end - first_length + 1
            if not self.content(first_start) or not self.phrase(first_start, first_end):
                continue
            for shared_length in range(MAX_SHARED, 0, -1):
                head = (first_start - shared_length, first_start - 1)
                if not self.content(head[0]) or not self.phrase(head[0], first_end):
                    continue
                if not self.name(range(head[0], first_end + 1)):
                    continue
                lasts = [(last_start, last_start + length - 1) for length in range(MAX_CONJUNCT, 0, -1)
                         if self.content(last_start + length - 1) and self.phrase(last_start, last_start + length - 1)]
                unnamed = not any(self.covered(*middle) for middle in middles)
                expanded = []
                for middle in middles:
                    expanded += self.conjunct([middle], head, False, unnamed, middle=True)
                expanded += self.conjunct(lasts, head, False, unnamed)
                if self.worth(expanded) > self.worth(best):
                    best, best_head = expanded, (head, first_start, first_end, middles, lasts)
        if best_head is not None:
            # shorter shared words that make names too: "cleft lip and palate" inside "bilateral cleft lip
            # and palate"
            (head_first, head_last), first_start, first_end, middles, lasts = best_head
            for start in range(head_first + 1, head_last + 1):
                if self.content(start) and self.name(range(start, first_end + 1)):
                    for options in [[middle] for middle in middles] + [lasts]:
                        best += self.conjunct(options, (start, head_last), False, unnamed=False)
        return best

    def conjunct(self, options, head, shared_after, unnamed=True, parallel=None, middle=False):
        """The expanded names of one conjunct (its possible extents ``options``, longest first) with the
        shared words ``head``: every extent that makes a name; else, with ``unnamed``, the longest extent
        whose words with the shared ones occur in one name, as a name without ids, unless the conjunct is
        a name by itself."""
        found = []
        shared = list(range(head[0], head[1] + 1))
        for first, last in options:
            if self.cut(first, last, shared_after) or self.covered(first, last, min_words=2):
                continue
            tokens = list(range(first, last + 1))
            ids = self.name(tokens + shared if shared_after else shared + tokens)
            if ids:
                found.append(self.expanded(first, last, head, shared_after, ids))
        if found or not options or not unnamed:
            return found
        # no name confirms it: a conjunct of numbers only is none ("2-3" in "mandible with prognathia, and 2-3
        # cps spikes"; "neurofibromatosis types 1 and 2" is confirmed by the name *Neurofibromatosis type 2*)
        options = [option for option in options if any(not self.keyed[index][3].isdigit()
                                                        for index in range(option[0], option[1] + 1))]
        if not options:
            return []
        # the conjunct's extent: the longest made of the ontology's words (before shared words after it, of
        # words that modify the names they occur in: "cranial", not "including cranial")
        if shared_after:
            fits = [option for option in options if self.modifying(*option)]
        else:
            # after shared words that end in a function word ("calcification of the falx cerebri and
            # tentorium cerebelli") any extent; else one that opens with a word of the ontology's names
            fits = [option for option in options if self.keyed[head[1]][0] is None or self.in_a_name([option[0]])]
        if not fits:
            return []
        # as long as the conjunct next to the shared words where that fits ("cranial and spinal meningiomas")
        first, last = min(fits, key=lambda option: parallel is not None and option[1] - option[0] + 1 != parallel)
        if self.cut(first, last, shared_after) or self.covered(first, last):
            return []
        # ... whose phrase ends there: "mild" in "hearing loss and mild ataxia" is no conjunct of "hearing"
        outside = first - 1 if shared_after else last + 1
        if self.phrase(min(outside, first), max(outside, last)) and self.content(outside) \
                and self.in_a_name([outside]):
            return []
        tokens = list(range(first, last + 1))
        if shared_after:
            # the conjunct modifies the shared words as the ontology's modifiers do ("cranial" meningiomas)
            plausible = self.keyed[last][0] in self.modifiers
        else:
            # the shared words end in a function word ("pits of the" palms and soles), and a conjunct in the
            # middle ends in a word that is no modifier (a noun: "cranial" is no conjunct of "tumors of the")
            plausible = self.keyed[head[1]][0] is None and (not middle or self.keyed[last][0] not in self.modifiers)
        in_a_name = self.in_a_name(tokens + shared)
        if plausible or in_a_name:
            return [self.expanded(first, last, head, shared_after, [], 1 if in_a_name else 0)]
        return []

    def expanded(self, first, last, head, shared_after, ids, plausible=2):
        """(first token, last token, ids, expansion text, plausibility: 2 a name, 1 its words in one name, 0 not)."""
        conjunct, shared = self.words(first, last), self.words(*head)
        if shared_after:
            return first, head[1], ids, f"{conjunct} {shared}", plausible
        return head[0], last, ids, f"{shared} {conjunct}", plausible
