"""Short forms defined in a mention's own document ("brachydactyly type A2 (BDA2)"), by the
Schwartz–Hearst algorithm of the `abbreviations` package."""

import logging
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
