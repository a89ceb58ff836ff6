"""The format registries: documents, ontologies and triples are each one family whose modules register
themselves, and what the commands accept comes from them. Every registered format's own test is
components/test_KEY_NAME.py (test_registry.py checks it is there)."""

import pytest

from conftest import run
from ontolink.core.errors import InputError
from ontolink.formats import DOCUMENT_FORMATS, document_format, guess_format, reader_names, writer_names
from ontolink.ontology.loaders import ONTOLOGY_FORMATS
from ontolink.formats.triples import TRIPLE_FORMATS

REGISTRIES = {"document": DOCUMENT_FORMATS, "ontology": ONTOLOGY_FORMATS, "triple": TRIPLE_FORMATS}


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


def _commands_with_ontology():
    from ontolink.cli.main import cli

    def walk(group, prefix):
        for name, command in sorted(group.commands.items()):
            if hasattr(command, "commands"):
                yield from walk(command, prefix + [name])
            elif any(param.name == "ontology" for param in command.params):
                yield prefix + [name]

    return list(walk(cli, []))


def test_every_ontology_option_lists_the_registered_ontology_formats():
    """`index --help` and `make-pairs --help` listed .obo, .owl, .json, .jsonl by hand, not CSV/TSV: the list is
    the registry's now, in every command that takes --ontology."""
    import re

    commands = _commands_with_ontology()
    assert ["index"] in commands and ["make-pairs"] in commands and ["annotate"] in commands
    for command in commands:
        result = run(*command, "--help")
        assert result.exit_code == 0, result.output
        help_text = " ".join(result.output.split())
        block = re.search(r"--ontology PATH\|hpo (.*?) --ontology-format", help_text).group(1)
        for name in ONTOLOGY_FORMATS.names():
            suffixes = ", ".join(ONTOLOGY_FORMATS.get(name).suffixes)
            assert f"{name} ({suffixes})" in block, (command, name, block)
