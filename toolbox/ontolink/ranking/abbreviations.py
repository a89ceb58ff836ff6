"""Short forms defined in a mention's own document ("brachydactyly type A2 (BDA2)"), by the
Schwartz–Hearst algorithm of the `abbreviations` package."""

import logging
import unicodedata
from collections import OrderedDict


def document_text(record):
    """The text a Mention record carries: left context + mention + right context."""
    return f"{record.get('context_left') or ''}{record['mention']}{record.get('context_right') or ''}"


class AbbreviationExpander:
    """The long form of a mention that is a short form defined in its document, else None.

    Documents are parsed once (mentions of one abstract arrive together; a small LRU keeps them).
    """

    def __init__(self, cache_size=256):
        from abbreviations import schwartz_hearst

        # the package logs every malformed candidate pair at INFO/WARNING: not for a user's terminal
        logging.getLogger(schwartz_hearst.__name__).setLevel(logging.ERROR)
        self._extract = schwartz_hearst.extract_abbreviation_definition_pairs
        self._pairs = OrderedDict()
        self._cache_size = cache_size

    def long_form(self, record):
        if not (record.get("context_left") or record.get("context_right")):
            return None
        short = record["mention"].strip()
        if not short or len(short) > 12 or " " in short:
            return None
        text = document_text(record)
        if not _in_parentheses(short, text):
            return None  # most mentions: the document need not be parsed
        pairs = self._pairs.get(text)
        if pairs is None:
            pairs = self._extract(doc_text=text)
            self._pairs[text] = pairs
            if len(self._pairs) > self._cache_size:
                self._pairs.popitem(last=False)
        else:
            self._pairs.move_to_end(text)
        long = pairs.get(short)
        return long if long and long.strip().lower() != short.lower() else None


def _in_parentheses(short, text):
    """Whether ``short`` opens a parenthesis somewhere in ``text`` ("(BDA2", '( "BDA2'): the package reads a short
    form as the text of a parenthesis, less one quote right after "(" and the white space, so a mention found in
    no such place is no short form of its document, which need not be parsed then (most mentions)."""
    start = text.find(short)
    while start != -1:
        end = start
        while end and text[end - 1].isspace():
            end -= 1
        if text[end - 1:end] == "(" or (text[end - 2:end - 1] == "(" and _is_opening_quote(text[end - 1])):
            return True
        start = text.find(short, start + 1)
    return False


def _is_opening_quote(character):
    # what the package strips after "(" before it reads a candidate: ' " and any initial quotation mark
    return character in "'\"" or unicodedata.category(character) == "Pi"
