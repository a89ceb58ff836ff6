"""JSONL of Triple records ``{"head", "relation", "tail"}``; Text–triple pairs
(``{"subject": {"id"}, "predicate", "object": {"id"}}``) are read as their triple,
so a pairs file can serve as a (small) KG too."""

from ontolink.io import parse_jsonl
from ontolink.records import string_field
from ontolink.triples import TRIPLE_FORMATS, Triple, TripleFormat


def triple_of_record(record):
    """The Triple of a Triple record or of a Text–triple pair; ValueError naming the field otherwise."""
    if "head" in record or "relation" in record or "tail" in record:
        return Triple(string_field(record, "head"), string_field(record, "relation"), string_field(record, "tail"))
    if "subject" in record or "predicate" in record or "object" in record:
        ends = []
        for field in ("subject", "object"):
            value = record.get(field)
            if not isinstance(value, dict):
                raise ValueError(f"field {field!r} must be an object with an 'id'")
            ends.append(string_field(value, "id"))
        return Triple(ends[0], string_field(record, "predicate"), ends[1])
    raise ValueError("not a triple: expected 'head', 'relation', 'tail' (or a Text–triple pair's "
                     "'subject', 'predicate', 'object')")


@TRIPLE_FORMATS.register("jsonl")
class JSONLTriples(TripleFormat):
    summary = "JSON lines of Triple records or Text–triple pairs"
    suffixes = (".jsonl", ".json", ".ndjson")

    @classmethod
    def sniff_line(cls, first):
        return first.startswith(b"{")

    def parse(self, lines, name, skip_invalid, stats):
        for record in parse_jsonl(lines, name, validate=triple_of_record, skip_invalid=skip_invalid, stats=stats):
            yield triple_of_record(record)
