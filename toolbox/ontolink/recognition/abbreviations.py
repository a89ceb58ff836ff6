"""Short forms defined in a document ("brachydactyly type C (BDC)"): each occurrence of the short
form in that document is a mention of what its long form names.

Pairs come from the Schwartz–Hearst algorithm of the `abbreviations` package; the long form must
itself be a name found by the matcher over its whole length (so "BDC" gets *Type C
brachydactyly*, and a short form of something outside the ontology gets nothing). Its
``expansion`` is the long form, which `link` searches instead of the short form.
"""

import logging
import re

from ontolink.recognition.match import Match


class DocumentAbbreviations:
    def __init__(self):
        from abbreviations import schwartz_hearst

        # the package logs every malformed candidate pair at INFO/WARNING: not for a user's terminal
        logging.getLogger(schwartz_hearst.__name__).setLevel(logging.ERROR)
        self._extract = schwartz_hearst.extract_abbreviation_definition_pairs

    def matches(self, matcher, text, keyed, taken):
        """Match objects (source "abbreviation") for each occurrence of a defined short form whose
        long form is a name, outside the tokens ``taken`` (a set of token indexes)."""
        if "(" not in text:
            return []  # no definition without a parenthesis: most documents need no parsing
        pairs = self._extract(doc_text=text)
        if not pairs:
            return []
        found = []
        token_at = {start: index for index, (_, start, *_) in enumerate(keyed)}
        for short, long in pairs.items():
            if len(short) < 2 or not any(character.isalpha() for character in short):
                continue
            whole = [match for match in matcher.matches(long, nesting="none", coordination=False)
                     if match[0] == 0 and match[1] == len(long.rstrip())]
            if not whole:
                continue
            ids = whole[0][2]
            for occurrence in re.finditer(rf"(?<!\w){re.escape(short)}(?!\w)", text):
                first = token_at.get(occurrence.start())
                if first is None:
                    continue
                last = first
                while last + 1 < len(keyed) and keyed[last][2] < occurrence.end():
                    last += 1
                if keyed[last][2] != occurrence.end() or any(index in taken for index in range(first, last + 1)):
                    continue
                # the long form is what `link` searches: "BDA1" alone is no name an index knows
                found.append(Match(first, last, list(ids), 0, True, last - first + 1, source="abbreviation",
                                   expansion=" ".join(long.split())))
        return found
