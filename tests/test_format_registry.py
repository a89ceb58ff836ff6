"""The format registries: documents, ontologies and triples are each one family whose modules register
themselves, what the commands accept comes from them, and every registered format has a test."""

import ast
from pathlib import Path

import pytest

from conftest import run
from ontolink.core.errors import InputError
from ontolink.formats import DOCUMENT_FORMATS, document_format, guess_format, reader_names, writer_names
from ontolink.ontology.loaders import ONTOLOGY_FORMATS
from ontolink.formats.triples import TRIPLE_FORMATS

TESTS = Path(__file__).resolve().parent
REGISTRIES = {"document": DOCUMENT_FORMATS, "ontology": ONTOLOGY_FORMATS, "triple": TRIPLE_FORMATS}


def _string_literals_of_other_tests():
    found = set()
    for path in TESTS.glob("test_*.py"):
        if path.name == Path(__file__).name:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.add(node.value)
    return found


@pytest.mark.parametrize("kind", sorted(REGISTRIES))
def test_every_registered_format_is_named_by_a_test(kind):
    """A new format is a module plus its test: a test elsewhere must name it (as --from/--format value,
    a registry lookup or a parameter), so an untested format fails here."""
    literals = _string_literals_of_other_tests()
    untested = [name for name in REGISTRIES[kind].names() if name not in literals]
    assert not untested, f"{kind} formats no test names: {', '.join(untested)}"


@pytest.mark.parametrize("kind", sorted(REGISTRIES))
def test_every_format_says_what_it_is_and_how_it_is_recognised(kind):
    for name in REGISTRIES[kind].names():
        cls = REGISTRIES[kind].get(name)
        assert cls.summary and cls.suffixes, f"{kind} format {name} needs a summary and file suffixes"
        assert all(suffix == suffix.lower() and suffix.startswith(".") for suffix in cls.suffixes)


def test_readers_and_writers_are_what_the_formats_implement():
    assert {"bioc-json", "bioc-xml", "pubtator", "text"} <= set(reader_names())
    assert "sssom" in writer_names() and "sssom" not in reader_names()
    assert "text" in reader_names() and "text" not in writer_names()
    with pytest.raises(InputError, match="cannot be read .*formats that can: .*pubtator"):
        document_format("sssom", "read")
    with pytest.raises(InputError, match="unknown document format 'nope'"):
        document_format("nope")


def test_a_guess_takes_the_longest_matching_name():
    assert guess_format("corpus/CDR_TestSet.PubTator.txt") == "pubtator"  # the word beats the .txt of text
    assert guess_format("abstracts.txt") == "text"
    assert guess_format("corpus.XML.gz") == "bioc-xml"
    assert guess_format("links.sssom.tsv") is None  # SSSOM is written, never read
    assert DOCUMENT_FORMATS.guess("links.sssom.tsv", "writer") == "sssom"
    assert DOCUMENT_FORMATS.guess("-") is None
    assert TRIPLE_FORMATS.guess("kg.tsv.gz") == "tsv" and TRIPLE_FORMATS.guess("pairs.jsonl") == "jsonl"


@pytest.mark.parametrize("command, option, registry, method", [
    ("convert", "--from", DOCUMENT_FORMATS, "read"),
    ("convert", "--to", DOCUMENT_FORMATS, "writer"),
    ("annotate", "--from", DOCUMENT_FORMATS, "read"),
    ("index", "--ontology-format", ONTOLOGY_FORMATS, None),
    ("embed-kg", "--format", TRIPLE_FORMATS, None),
])
def test_commands_list_the_registered_formats(command, option, registry, method):
    """What --help offers is the registry, so a new format module shows up without an edit elsewhere."""
    result = run(command, "--help")
    assert result.exit_code == 0
    line = next(line for line in result.output.splitlines() if line.strip().startswith(option + " ["))
    offered = line.split("[", 1)[1].split("]", 1)[0].split("|")
    expected = registry.names_that(method) if method else registry.names()
    assert [name for name in offered if name not in ("jsonl", "mentions") or name in expected] == expected


def test_an_unknown_format_value_is_refused_with_the_known_ones():
    result = run("convert", "--from", "brat-nope", "-i", "x.txt")
    assert result.exit_code == 2
    assert "pubtator" in result.output and "brat-nope" in result.output
