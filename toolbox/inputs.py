"""How mentions and entities are written as encoder inputs (METHODS.md §1.5–1.6).

A fine-tuned retriever or reranker reads ``left [Ms] mention [Me] right`` and
``name [ENT] definition``; a frozen sentence encoder reads the bare strings.
"""

MENTION_START, MENTION_END, ENTITY_SEPARATOR = "[Ms]", "[Me]", "[ENT]"
SPECIAL_TOKENS = [MENTION_START, MENTION_END, ENTITY_SEPARATOR]
# Characters of context kept on each side: about 50 word pieces each, so the
# mention stays inside a 128-token input.
CONTEXT_CHARACTERS = 250


def mention_input(record, context_characters=CONTEXT_CHARACTERS):
    left = " ".join(record.get("context_left", "")[-context_characters:].split()[-context_characters:])
    right = " ".join(record.get("context_right", "")[:context_characters].split())
    return f"{left} {MENTION_START} {record['mention'].strip()} {MENTION_END} {right}".strip()


def entity_input(name, definition):
    return f"{name} {ENTITY_SEPARATOR} {definition or ''}".strip()
