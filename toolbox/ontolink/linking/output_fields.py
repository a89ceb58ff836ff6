"""Which fields of each linked record, and of each of its candidates, `link` writes (``--fields``,
``--candidate-fields``, ``--no-context``): the jq-free way to keep an output to what a person reads.

The same two lists choose the columns of the candidates TSV (ontolink.formats.linked_tsv): the mention's columns
before ``rank``, the candidate's after it.
"""

from collections.abc import Sequence
from typing import Any

CONTEXT_FIELDS = ("context_left", "context_right")
CANDIDATES = "candidates"


def parse_field_list(text: str | None, option: str) -> tuple[str, ...] | None:
    """"id,mention,candidates" -> ("id", "mention", "candidates"); None for None. Raises ValueError (naming
    ``option``) on an empty list, an empty name or a name given twice."""
    if text is None:
        return None
    names = tuple(name.strip() for name in text.split(","))
    if not any(names):
        raise ValueError(f"{option} needs at least one field name (FIELD,FIELD,...)")
    if not all(names):
        raise ValueError(f"{option} {text!r} has an empty field name")
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"{option} names {', '.join(twice)} more than once")
    return names


class FieldSelection:
    """Keeps the ``fields`` of a record and the ``candidate_fields`` of each of its candidates, in the order
    given (None: all of them, in their own order); ``no_context`` leaves context_left/context_right out.
    A field a record or candidate lacks is left out, not written as null."""

    def __init__(self, fields: Sequence[str] | None = None, candidate_fields: Sequence[str] | None = None,
                 no_context: bool = False):
        self.fields = fields
        self.candidate_fields = candidate_fields
        self.no_context = no_context

    def __bool__(self) -> bool:
        return self.fields is not None or self.candidate_fields is not None or self.no_context

    def __call__(self, record: dict[str, Any]) -> dict[str, Any]:
        if self.fields is None:
            kept = dict(record)
        else:
            kept = {field: record[field] for field in self.fields if field in record}
        if self.no_context:
            for field in CONTEXT_FIELDS:
                kept.pop(field, None)
        if self.candidate_fields is not None and isinstance(kept.get(CANDIDATES), list):
            kept[CANDIDATES] = [{field: candidate[field] for field in self.candidate_fields if field in candidate}
                                if isinstance(candidate, dict) else candidate for candidate in kept[CANDIDATES]]
        return kept
