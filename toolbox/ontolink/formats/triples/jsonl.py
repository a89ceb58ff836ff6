"""JSONL of Triple records ``{"head", "relation", "tail"}``; Text–triple pairs
(``{"subject": {"id"}, "predicate", "object": {"id"}}``) are read as their triple,
so a pairs file can serve as a (small) KG too."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ontolink.core.io import parse_jsonl
from ontolink.core.records import triple_fields
from ontolink.formats.triples import TRIPLE_FORMATS, Triple, TripleFormat

if TYPE_CHECKING:
    from ontolink.core.io import ReadStats


def triple_of_record(record: dict[str, Any]) -> Triple:
    """The Triple of a Triple record or of a Text–triple pair; ValueError naming the field otherwise."""
    return Triple(*triple_fields(record))


@TRIPLE_FORMATS.register("jsonl")
class JSONLTriples(TripleFormat):
    summary = "JSON lines of Triple records or Text–triple pairs"
    suffixes = (".jsonl", ".json", ".ndjson")

    @classmethod
    def sniff_line(cls, first: bytes) -> bool:
        return first.startswith(b"{")

    def parse(self, lines: Iterable[bytes], name: str, skip_invalid: bool, stats: ReadStats) -> Iterator[Triple]:
        for record in parse_jsonl(lines, name, validate=triple_of_record, skip_invalid=skip_invalid, stats=stats):
            yield triple_of_record(record)
