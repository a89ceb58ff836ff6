"""Coordinated names: "palmar and plantar pits" names *Palmar pits* and *Plantar pits*, "renal
hypoplasia/dysplasia" *Renal hypoplasia* and *Renal dysplasia*.

A coordination is a run of conjuncts joined by "and", "or", "and/or", "/" or list commas (", ... and")
inside one sentence. The words shared by the conjuncts sit either after the last one ("A, B and C
H": right-shared) or before the first ("H A, B or C": left-shared). Each conjunct with the shared
words is looked up as a whole name (its content-word keys equal to a name's); the span of an
expanded name runs from the shared words to the conjunct, through the words between: the convention
of corpora such as GSC+, where "orofacial, articular, and auditory manifestations" is annotated as
*Abnormality of the mouth*. The conjunct next to the shared words is an ordinary name match, left to
the matcher.
"""

from ontolink.recognition.matcher import Match

JOINING_WORDS = frozenset(("and", "or"))
SENTENCE_BREAKS = frozenset(".;:!?()[]{}")
MAX_CONJUNCT = 2  # words in one conjunct
MAX_SHARED = 4  # words shared by the conjuncts, function words included ("malformations of the")


def coordinated_matches(matcher, text, keyed, validate=True):
    """Match objects (source "coordination") for the coordinated names of ``text`` (``keyed``: its
    ``matcher.keyed_tokens``).

    An expansion is kept only where the phrase ends on both sides (no content word right before a
    right-shared coordination or right after a left-shared one) and, with ``validate``, where the
    conjunct next to the shared words is a name with them too ("plantar pits" for "palmar and
    plantar pits"): the shared words are then those of a name, not a guess.
    """
    sentence = []
    number = 0
    for index in range(len(keyed)):
        if index and any(character in SENTENCE_BREAKS for character in _gap(text, keyed, index - 1)):
            number += 1
        sentence.append(number)
    found = []
    seen = set()
    for chain in _chains(text, keyed):
        expanded = []
        # leading commas may join a list ("cervical pits, cysts, and fistulas") or close the phrase
        # before ("pits, renal hypoplasia/dysplasia"): the whole chain first, then without them
        while chain and not expanded:
            expanded = _expand(matcher, text, keyed, chain, sentence, validate)
            chain = chain[1:] if chain[0][2] == "comma" else []
        for first, last, ids in expanded:
            if (first, last) not in seen:
                seen.add((first, last))
                found.append(Match(first, last, ids, 0, True, last - first + 1, source="coordination"))
    return found


def _gap(text, keyed, index):
    """The characters between token ``index`` and the next one."""
    return text[keyed[index][2]:keyed[index + 1][1]]


def _chains(text, keyed):
    """Coordinations as lists of joints: (last token of the left part, first token of the right part)."""
    joints = []  # (left end, right start, kind) in text order
    index = 0
    while index < len(keyed) - 1:
        gap = _gap(text, keyed, index)
        if any(character in SENTENCE_BREAKS for character in gap):
            joints.append(None)
            index += 1
            continue
        word = keyed[index + 1][3]
        if word in JOINING_WORDS and index + 2 < len(keyed):
            right = index + 2
            if word == "and" and keyed[right][3] == "or" and "/" in _gap(text, keyed, index + 1):
                right += 1  # and/or
            if right < len(keyed) and keyed[right][0] is not None and keyed[index][0] is not None:
                joints.append((index, right, "conjunction"))
            index = right
            continue
        if keyed[index][0] is not None and keyed[index + 1][0] is not None:
            stripped = gap.strip()
            if stripped == "/":
                joints.append((index, index + 1, "slash"))
            elif stripped == ",":
                joints.append((index, index + 1, "comma"))
        index += 1
    # a chain: joints whose conjuncts between them are short; list commas only before a conjunction
    chains, current = [], []
    for joint in joints + [None]:
        # a new chain where the conjunct would be long, or where a comma follows the conjunction ("A and
        # B, C": list commas come before the conjunction)
        if joint is not None and current and (joint[0] - current[-1][1] + 1 > MAX_CONJUNCT or (
                joint[2] == "comma" and any(previous[2] == "conjunction" for previous in current))):
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


def _open(text, keyed, index, neighbour):
    """Whether token ``neighbour`` (next to ``index``) continues the phrase: a content word with no
    punctuation in between."""
    if not 0 <= neighbour < len(keyed) or keyed[neighbour][0] is None:
        return False
    gap = _gap(text, keyed, min(index, neighbour))
    return not any(character in SENTENCE_BREAKS or character == "," for character in gap)


def _expand(matcher, text, keyed, chain, sentence, validate):
    """(first token, last token, ids) of each conjunct expanded with the shared words, both ways."""
    # middle conjuncts lie between consecutive joints
    middles = [(left[1], right[0]) for left, right in zip(chain, chain[1:])]
    first_joint, last_joint = chain[0], chain[-1]
    found = []
    # right-shared: A, B and C H -> A H, B H (C H is an ordinary match)
    for conjunct_length in range(1, MAX_CONJUNCT + 1):
        for shared_length in range(MAX_SHARED, 0, -1):
            head_first = last_joint[1] + conjunct_length
            head_last = head_first + shared_length - 1
            if head_last >= len(keyed) or keyed[head_last][0] is None or sentence[head_last] != sentence[last_joint[1]] \
                    or _open(text, keyed, head_last, head_last + 1):
                continue
            heads = list(range(head_first, head_last + 1))
            if validate and not _lookup(matcher, keyed, list(range(last_joint[1], head_last + 1))):
                continue
            groups = [[(first_joint[0] - length + 1, first_joint[0]) for length in range(MAX_CONJUNCT, 0, -1)
                       if first_joint[0] - length + 1 >= 0]] + [[middle] for middle in middles]
            groups = [[option for option in options if _content(keyed, *option)] for options in groups]
            groups[0] = [option for option in groups[0] if sentence[option[0]] == sentence[first_joint[0]]
                         and not _open(text, keyed, option[0], option[0] - 1)]
            for options in groups:
                for first, last in options:
                    ids = _lookup(matcher, keyed, list(range(first, last + 1)) + heads)
                    if ids:
                        found.append((first, head_last, ids))
                        break
            if found:
                return found
    # left-shared: H A, B or C -> H B, H C
    for conjunct_length in range(1, MAX_CONJUNCT + 1):
        for shared_length in range(MAX_SHARED, 0, -1):
            head_last = first_joint[0] - conjunct_length
            head_first = head_last - shared_length + 1
            if head_first < 0 or keyed[head_first][0] is None or sentence[head_first] != sentence[first_joint[0]] \
                    or _open(text, keyed, head_first, head_first - 1):
                continue
            heads = list(range(head_first, head_last + 1))
            if validate and not _lookup(matcher, keyed, list(range(head_first, first_joint[0] + 1))):
                continue
            groups = [[middle] for middle in middles] + [[(last_joint[1], last_joint[1] + length - 1)
                                                          for length in range(MAX_CONJUNCT, 0, -1)
                                                          if last_joint[1] + length - 1 < len(keyed)]]
            groups = [[option for option in options if _content(keyed, *option)] for options in groups]
            groups[-1] = [option for option in groups[-1] if sentence[option[1]] == sentence[last_joint[1]]
                          and not _open(text, keyed, option[1], option[1] + 1)]
            for options in groups:
                for first, last in options:
                    ids = _lookup(matcher, keyed, heads + list(range(first, last + 1)))
                    if ids:
                        found.append((head_first, last, ids))
                        break
            if found:
                return found
    return found


def _content(keyed, first, last):
    """Whether tokens ``first``..``last`` hold a content word at each end."""
    return keyed[first][0] is not None and keyed[last][0] is not None


def _lookup(matcher, keyed, indexes):
    keys = frozenset(keyed[index][0] for index in indexes if keyed[index][0] is not None)
    if len(keys) < 2:
        return None
    entry = matcher.entries.get(keys)
    return list(entry[0]) if entry else None
