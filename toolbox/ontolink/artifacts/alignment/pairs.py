"""Text–triple pair records (docs/records.md): checks, triple keys and the verbalised triple."""

from ontolink.records import string_field
from ontolink.triples import Triple


def validate_triple_pair(record):
    """Raise ValueError naming the field when ``record`` is not a Text–triple pair."""
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


def pair_triple(record):
    return Triple(record["subject"]["id"], record["predicate"], record["object"]["id"])


def predicate_label(predicate):
    """'Chemical_Induced_Disease' → 'chemical induced disease'; a namespace ('hpo:is_a') is dropped."""
    return predicate.rsplit(":", 1)[-1].replace("_", " ").strip().lower()


def verbalize(record):
    """The baseline's text for a triple: "subject-name predicate-label object-name" (ids when unnamed)."""
    subject, obj = record["subject"], record["object"]
    return " ".join([subject.get("name") or subject["id"], predicate_label(record["predicate"]),
                     obj.get("name") or obj["id"]])


def group_of(record):
    """The pair's CV group (its source document); a pair without one is its own group."""
    group = record.get("group")
    return str(group) if group is not None else f"pair:{record['pair_id']}"
