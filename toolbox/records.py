"""Field checks for the record types of CONTRACT.md (raise ValueError naming the field)."""


def _require_string(record, field):
    if field not in record:
        raise ValueError(f"missing required field {field!r}")
    value = record[field]
    if not isinstance(value, str):
        raise ValueError(f"field {field!r} must be a string, got {type(value).__name__}")
    return value


def _optional_string_list(record, field):
    value = record.get(field)
    if value is None:
        return
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"field {field!r} must be a list of strings, got {type(value).__name__}")


def validate_mention(record):
    _require_string(record, "id")
    if not _require_string(record, "mention").strip():
        raise ValueError("field 'mention' is empty")
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
    _require_string(record, "id")
    _optional_string_list(record, "aliases")


def validate_pair(record):
    """A Pair record (make-pairs output): a Mention plus the pseudo label "entity_id"."""
    validate_mention(record)
    _require_string(record, "entity_id")
