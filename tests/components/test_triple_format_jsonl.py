"""The JSONL triple format: Triple records, and Text-triple pairs read as their triple (so the shared pairs file is
a small KG); a record missing a field names the file and line."""

import json

import pytest

from conftest import shared_path
from ontolink.core.errors import InputError
from ontolink.formats.triples import TRIPLE_FORMATS, Triple, read_triples


def test_the_align_kg_as_triple_records_reads_as_its_tsv(kg_slice, tmp_path):
    path = tmp_path / "kg.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for line in kg_slice.read_text(encoding="utf-8").splitlines():
            head, relation, tail = line.split("\t")
            handle.write(json.dumps({"head": head, "relation": relation, "tail": tail}) + "\n")
    assert TRIPLE_FORMATS.guess(path) == "jsonl"
    assert list(read_triples(path)) == list(read_triples(kg_slice, fmt="tsv"))


def test_the_shared_pairs_file_reads_as_the_triples_of_its_pairs():
    path = shared_path("align", "pairs.jsonl")
    pairs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert list(read_triples(path, fmt="jsonl")) == [
        Triple(pair["subject"]["id"], pair["predicate"], pair["object"]["id"]) for pair in pairs]


def test_bad_json_triple_names_the_field(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"head": "a", "relation": "r", "tail": "b"}\n{"head": "a", "relation": "r"}\n')
    with pytest.raises(InputError, match=r"bad\.jsonl:2: missing required field 'tail'"):
        list(read_triples(path))
