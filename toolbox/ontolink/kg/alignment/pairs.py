"""Text–triple pair records (docs/records.md): triple keys and the verbalised triple (their field checks
are ``records.validate_triple_pair``)."""

from ontolink.formats.triples import Triple


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
