"""Field checks for the record types of docs/records.md (raise ValueError naming the field).

Every record validator lives here, one per record kind: a reader takes it as ``validate``
(``io.read_records``) and reports its ValueError as FILE:LINE. Validators that need
something beyond the record (an ontology, a KG) are made by a ``*_validator`` factory.
"""

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
    if not isinstance(value, list):
        raise ValueError(f"field {field!r} must be a list of strings, got {type(value).__name__}")
    wrong = next((item for item in value if not isinstance(item, str)), "")
    if not isinstance(wrong, str):
        raise ValueError(f"field {field!r} must be a list of strings, holds {'null' if wrong is None else repr(wrong)}")


def validate_mention(record):
    string_field(record, "id", non_empty=False)
    string_field(record, "mention")
    for field in ("context_left", "context_right"):
        if field in record and not isinstance(record[field], str):
            raise ValueError(f"field {field!r} must be a string, got {type(record[field]).__name__}")
    _optional_string_list(record, "gold")


def _candidates(record, hint=""):
    candidates = record.get("candidates")
    if not isinstance(candidates, list):
        raise ValueError(f"missing field 'candidates' (a list){hint}")
    for candidate in candidates:
        if not isinstance(candidate, dict) or not isinstance(candidate.get("id"), str):
            raise ValueError("field 'candidates' must hold objects with a string 'id'")


def validate_linked_mention(record):
    validate_mention(record)
    _candidates(record, ": is this the output of `ontolink link`?")


def validate_alias_record(record):
    """An Entity record with "aliases" (a list of strings), as gen-aliases and filter write."""
    string_field(record, "id", non_empty=False)
    _optional_string_list(record, "aliases")


def alias_record_validator(ontology, resolved=True):
    """``validate_alias_record`` for records whose entity must be in ``ontology`` (an alt_id or an obsolete id
    that resolves to a live entity counts): names to add to it (`annotate --aliases`, `index --aliases`).
    ``resolved`` False: the id itself must be one of the ontology's (`filter` and `make-pairs` read it so), refused
    by the reader, which names the file and line."""

    def validate(record):
        validate_alias_record(record)
        if not (ontology.resolve(record["id"]) if resolved else record["id"] in ontology):
            raise ValueError(f"entity {record['id']!r} is not in the ontology {ontology.label}")

    return validate


def validate_pair(record):
    """A Pair record (make-pairs output): a Mention plus the pseudo label "entity_id"."""
    validate_mention(record)
    string_field(record, "entity_id", non_empty=False)


def pair_validator(ontology, accept_gold=False):
    """A reader's ``validate`` for training pairs: Pair records whose entity_id is (or resolves to) a
    live entity of the ontology.

    With ``accept_gold``, labeled Mention records ({"gold": [ids]}) are taken too. Every record
    gets "golds": the live ids it stands for (its entity_id first).
    """

    def validate(record):
        validate_mention(record)
        entity_id = record.get("entity_id")
        if accept_gold and entity_id is None and record.get("gold"):
            golds = [live for gold in record["gold"] for live in ontology.resolve(gold)]
            if not golds:
                raise ValueError(f"none of the gold ids {record['gold']} is in ontology {ontology.label}")
            record["entity_id"], record["golds"] = golds[0], list(dict.fromkeys(golds))
            return
        if not isinstance(entity_id, str):
            wanted = "'entity_id' (a string) or 'gold' (a list)" if accept_gold else "'entity_id' (a string)"
            raise ValueError(f"missing field {wanted}: is this the output of make-pairs?")
        resolved = ontology.resolve(entity_id)
        if not resolved:
            raise ValueError(f"entity_id {entity_id!r} is not in ontology {ontology.label}")
        record["entity_id"], record["golds"] = resolved[0], resolved[:1]

    return validate


def validate_selected_entity(record):
    """Selected-entity records: id and name are required strings; definition a string if present."""
    for field in ("id", "name"):
        string_field(record, field, non_empty=False)
    definition = record.get("definition")
    if definition is not None and not isinstance(definition, str):
        raise ValueError(f"field 'definition' must be a string, got {type(definition).__name__}")
    count = record.get("mention_count")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 0):
        raise ValueError("field 'mention_count' must be a non-negative integer")


RETRIEVAL_DIRECTIONS = ("d2t", "t2d")  # document to triple, triple to document


def validate_retrieved(record):
    """A Retrieved record (`align retrieve` output)."""
    direction = record.get("direction")
    if direction not in RETRIEVAL_DIRECTIONS:
        raise ValueError(f"field 'direction' must be 'd2t' or 't2d', got {direction!r}: is this the output of "
                         "`ontolink align retrieve`?")
    _candidates(record)
    rank = record.get("rank")
    if rank is not None and (not isinstance(rank, int) or isinstance(rank, bool) or rank < 1):
        raise ValueError(f"field 'rank' must be a positive integer or null, got {rank!r}")
    if "rank" not in record and not isinstance(record.get("gold", record.get("pair_id")), (str, list)):
        raise ValueError("no 'rank', and no 'gold' or 'pair_id' to find the true candidate by")


def validate_triple_pair(record):
    """A Text–triple pair: pair_id, text, subject {id, name}, predicate, object {id, name}, group."""
    string_field(record, "pair_id")
    string_field(record, "text")
    for end in ("subject", "object"):
        value = record.get(end)
        if not isinstance(value, dict):
            raise ValueError(f"field {end!r} must be an object {{id, name}}, got "
                             f"{'nothing' if value is None else type(value).__name__}")
        string_field(value, "id", f"{end}.")
        if "name" in value and not isinstance(value["name"], str):
            raise ValueError(f"field '{end}.name' must be a string")
    string_field(record, "predicate")
    group = record.get("group")
    if group is not None and not isinstance(group, (str, int)):
        raise ValueError(f"field 'group' must be a string or an integer, got {type(group).__name__}")


def triple_pair_validator(kg=None):
    """A reader's ``validate`` for text–triple pairs; with ``kg`` (KG embeddings), a pair whose entity or
    relation has no embedding is refused with the name of what is missing."""

    def validate(record):
        validate_triple_pair(record)
        if kg is not None:
            problem = kg.missing(record["subject"]["id"], record["predicate"], record["object"]["id"])
            if problem:
                raise ValueError(f"pair {record['pair_id']!r}: {problem}")

    return validate


def triple_fields(record):
    """(head, relation, tail) of a Triple record or of a Text–triple pair; ValueError naming the field."""
    if "head" in record or "relation" in record or "tail" in record:
        return string_field(record, "head"), string_field(record, "relation"), string_field(record, "tail")
    if "subject" in record or "predicate" in record or "object" in record:
        ends = []
        for field in ("subject", "object"):
            value = record.get(field)
            if not isinstance(value, dict):
                raise ValueError(f"field {field!r} must be an object with an 'id'")
            ends.append(string_field(value, "id"))
        return ends[0], string_field(record, "predicate"), ends[1]
    raise ValueError("not a triple: expected 'head', 'relation', 'tail' (or a Text–triple pair's "
                     "'subject', 'predicate', 'object')")


def validate_prior(record):
    """A prior record: "id" and a mention count ("mention_count" or "count", an integer)."""
    count = record.get("mention_count", record.get("count"))
    if not isinstance(record.get("id"), str) or not isinstance(count, int) or isinstance(count, bool):
        raise ValueError('a prior record needs "id" (string) and "mention_count" or "count" (integer)')
