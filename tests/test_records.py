"""Record validators: all in ontolink.core.records, sharing their field checks; each refuses what it must."""

import ast
from pathlib import Path

import pytest

from ontolink.core import records

PACKAGE = Path(records.__file__).resolve().parent
# (module, function) validators kept outside records.py, each with its reason
ELSEWHERE = set()


def test_record_validators_live_in_records():
    """A reader's validator defined elsewhere is a second copy of a record kind's rules."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative == "records.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and (node.name.startswith("validate_") or node.name.endswith(
                    "_validator") or (node.name == "validate" and [a.arg for a in node.args.args] == ["record"])):
                if (relative, node.name) not in ELSEWHERE:
                    found.append(f"{relative}: {node.name}")
    assert not found, "record validators outside records.py:\n" + "\n".join(found)


@pytest.mark.parametrize("validate, record", [
    (records.validate_linked_mention, {"id": "m", "mention": "x", "candidates": [{"id": 3}]}),
    (records.validate_retrieved, {"direction": "d2t", "rank": 1, "candidates": ["HP:1"]}),
])
def test_linked_and_retrieved_share_the_candidates_check(validate, record):
    with pytest.raises(ValueError, match="'candidates' must hold objects with a string 'id'"):
        validate(record)
    with pytest.raises(ValueError, match="missing field 'candidates'"):
        validate({key: value for key, value in record.items() if key != "candidates"})


def test_selected_entity_fields():
    records.validate_selected_entity({"id": "HP:1", "name": "", "definition": "d", "mention_count": 0})
    for bad, message in (({"name": "x"}, "missing required field 'id'"),
                         ({"id": 1, "name": "x"}, "'id' must be a string, got int"),
                         ({"id": "a", "name": "x", "definition": 2}, "'definition' must be a string"),
                         ({"id": "a", "name": "x", "mention_count": True}, "non-negative integer")):
        with pytest.raises(ValueError, match=message):
            records.validate_selected_entity(bad)


def test_triple_fields_of_both_record_kinds():
    assert records.triple_fields({"head": "a", "relation": "r", "tail": "b"}) == ("a", "r", "b")
    pair = {"subject": {"id": "s"}, "predicate": "p", "object": {"id": "o"}}
    assert records.triple_fields(pair) == ("s", "p", "o")
    with pytest.raises(ValueError, match="'object' must be an object"):
        records.triple_fields({**pair, "object": "o"})
    with pytest.raises(ValueError, match="not a triple"):
        records.triple_fields({"id": "x"})


def test_prior_records():
    records.validate_prior({"id": "HP:1", "count": 3})
    records.validate_prior({"id": "HP:1", "mention_count": 0})
    with pytest.raises(ValueError, match="mention_count"):
        records.validate_prior({"id": "HP:1", "count": "3"})
