"""A name found in a document's tokens: what the matcher, coordination and short forms all produce."""


class Match:
    """One name found in the text: tokens ``first``..``last`` of the document, the entity ids."""

    __slots__ = ("first", "last", "ids", "keys", "in_order", "words", "source", "expansion")

    def __init__(self, first, last, ids, keys, in_order, words, source="dictionary", expansion=None):
        self.first, self.last, self.ids, self.keys = first, last, ids, keys
        self.in_order, self.words, self.source = in_order, words, source
        self.expansion = expansion  # a coordinated name written out ("palmar pits")

    def rank(self):
        return (-self.words, -self.keys, not self.in_order, self.first)
