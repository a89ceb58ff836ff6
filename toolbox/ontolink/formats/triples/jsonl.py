"""JSONL of Triple records ``{"head", "relation", "tail"}``; Text–triple pairs
(``{"subject": {"id"}, "predicate", "object": {"id"}}``) are read as their triple,
so a pairs file can serve as a (small) KG too."""

from ontolink.core.io import parse_jsonl
from ontolink.core.records import triple_fields
from ontolink.formats.triples import TRIPLE_FORMATS, Triple, TripleFormat


def triple_of_record(record):
    """The Triple of a Triple record or of a Text–triple pair; ValueError naming the field otherwise."""
    return Triple(*triple_fields(record))


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
