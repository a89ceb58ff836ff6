"""Field checks for the record types of docs/records.md (raise ValueError naming the field)."""

import unicodedata

# what a string of only these holds nothing to read: control (NUL), format (zero-width space, joiners,
# byte-order mark) and separator characters
_INVISIBLE = frozenset(("Cc", "Cf", "Zs", "Zl", "Zp"))


def is_blank(text):
    """Whether ``text`` has no visible character: empty, white space, NUL or zero-width characters only."""
    if not text.strip():
        return True
    if text.isprintable():  # the common case: no control or format character at all
        return False
    return all(unicodedata.category(character) in _INVISIBLE for character in text)


def string_field(record, field, where="", non_empty=True):
    """``record[field]``, a string (not blank unless ``non_empty`` is off); a ValueError naming the
    field (prefixed by ``where``, e.g. "subject.") otherwise. Every record kind checks its fields here."""
    name = repr(where + field)
    if record.get(field) is None:
        raise ValueError(f"missing required field {name}")
    value = record[field]
    if not isinstance(value, str):
        raise ValueError(f"field {name} must be a string, got {type(value).__name__}")
    if non_empty and is_blank(value):
        raise ValueError(f"field {name} is empty" + ("" if not value.strip() else
                                                      " (only control or zero-width characters)"))
    return value


def _optional_string_list(record, field):
    value = record.get(field)
    if value is None:
        return
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"field {field!r} must be a list of strings, got {type(value).__name__}")


def validate_mention(record):
    string_field(record, "id", non_empty=False)
    string_field(record, "mention")
    for field in ("context_left", "context_right"):
        if field in record and not isinstance(record[field], str):
            raise ValueError(f"field {field!r} must be a string, got {type(record[field]).__name__}")
    _optional_string_list(record, "gold")


def validate_linked_mention(record):
    validate_mention(record)
    candidates = record.get("candidates")
    if not isinstance(candidates, list):
        raise ValueError("missing field 'candidates' (a list): is this the output of `ontolink link`?")
    for candidate in candidates:
        if not isinstance(candidate, dict) or not isinstance(candidate.get("id"), str):
            raise ValueError("field 'candidates' must hold objects with a string 'id'")


def validate_alias_record(record):
    """An Entity record with "aliases" (a list of strings), as gen-aliases and filter write."""
    string_field(record, "id", non_empty=False)
    _optional_string_list(record, "aliases")


def validate_pair(record):
    """A Pair record (make-pairs output): a Mention plus the pseudo label "entity_id"."""
    validate_mention(record)
    string_field(record, "entity_id", non_empty=False)
