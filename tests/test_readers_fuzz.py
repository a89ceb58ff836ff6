"""Every reader against arbitrary bytes, truncations, flipped bytes, other encodings and gzip (whole, cut, bombs):
it reads the file (exit 0) or stops with an ``InputError`` naming the file (exit 2); never another exception (a
traceback), a hang or memory without bound. Hypothesis draws the inputs: a few dozen per reader in the default
suite (derandomized: the same every run), many more under ``-m slow``."""

import gzip
import os
import re
import signal
import zlib
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import run
from ontolink.core.errors import InputError

# A valid sample of each reader's input: the fuzzer starts from these (arbitrary bytes alone rarely get past the
# first check), cuts, flips, re-encodes and gzips them.
OBO = b"""format-version: 1.2
ontology: test

[Term]
id: T:0000001
name: seizure
def: "A sudden attack." []
synonym: "fit" EXACT []

[Term]
id: T:0000002
name: febrile seizure
is_a: T:0000001 ! seizure
synonym: "fever fit" RELATED []
"""
OBOGRAPHS = (b'{"graphs": [{"id": "http://example.org/t", "nodes": [{"id": "http://purl.obolibrary.org/obo/T_1", '
             b'"lbl": "seizure", "type": "CLASS"}], "edges": []}]}\n')
OWL = b"""<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#"
         xmlns:owl="http://www.w3.org/2002/07/owl#">
  <owl:Ontology rdf:about="http://example.org/t"/>
  <owl:Class rdf:about="http://purl.obolibrary.org/obo/T_1"><rdfs:label>seizure</rdfs:label></owl:Class>
</rdf:RDF>
"""
SCIZSEL = b'{"D1": {"name": "seizure", "def": "An attack.", "synonyms": ["fit"], "is_a": []}}\n'
ENTITIES = (b'{"id": "T:1", "name": "seizure", "synonyms": ["fit"], "parents": []}\n'
            b'{"id": "T:2", "name": "fever fit", "parents": ["T:1"]}\n')
SCISPACY = b'{"concept_id": "C1", "canonical_name": "seizure", "aliases": ["fit"], "types": ["T047"]}\n'
CSV = b"id,name,synonyms,parents\nT:1,seizure,fit|attack,\nT:2,fever fit,,T:1\n"
MENTIONS = (b'{"id": "m1", "mention": "seizures", "gold": ["HP:0001250"]}\n'
            b'{"id": "m2", "mention": "ataxia", "context_left": "and ", "candidates": [{"id": "HP:1", "score": 0.5}]}\n')
TSV = b"HP:1\tis_a\tHP:2\nHP:2\tpart_of\tHP:3\n"
PUBTATOR = (b"1|t|Seizures in children\n1|a|Ataxia was seen.\n1\t0\t8\tSeizures\tDisease\tD012640\n"
            b"1\t25\t31\tAtaxia\tDisease\tD001259\n\n")
BIOC_XML = b"""<?xml version='1.0' encoding='UTF-8'?>
<collection><source>t</source><date></date><key>k</key>
<document><id>d1</id><passage><offset>0</offset><text>Seizures were seen.</text>
<annotation id="1"><infon key="type">Disease</infon><location offset="0" length="8"/><text>Seizures</text></annotation>
</passage></document></collection>
"""
BIOC_JSON = (b'{"source": "t", "date": "", "key": "k", "infons": {}, "documents": [{"id": "d1", "infons": {}, '
             b'"passages": [{"offset": 0, "infons": {}, "text": "Seizures were seen.", "sentences": [], '
             b'"annotations": [{"id": "1", "infons": {"type": "Disease"}, "text": "Seizures", '
             b'"locations": [{"offset": 0, "length": 8}]}], "relations": []}], "relations": [], "annotations": []}]}\n')
TEXT = "d1\tSeizures and ataxia were seen.\nA second document, héhé.\n".encode()
DOCUMENTS_JSONL = b'{"id": "d1", "text": "Seizures were seen."}\n{"id": "d2", "text": "Ataxia."}\n'
BRAT = b"T1\tDisease 0 8\tSeizures\n#1\tAnnotatorNotes T1\tnote\n"
ALIASES = b'{"id": "T:1", "aliases": ["convulsion", "attack"]}\n{"id": "T:2", "aliases": ["fever convulsion"]}\n'
CONFIG = b"top-k: 5\nlink:\n  batch-size: 16\n"


def _read_ontology(fmt):
    def read(path):
        from ontolink.ontology.loaders import load_terms

        return load_terms(path, fmt)
    return read


def _read_documents(fmt):
    def read(path):
        from ontolink.formats import Problems, read_documents

        return list(read_documents(str(path), fmt, Problems()))
    return read


def _read_records(path):
    from ontolink.core.io import read_records
    from ontolink.core.records import validate_mention

    return list(read_records(path, validate=validate_mention))


def _read_tsv(path):
    from ontolink.core.io import read_tsv

    def three(columns):
        if len(columns) != 3:
            raise ValueError(f"expected 3 columns, got {len(columns)}")
        return columns

    return list(read_tsv(path, three))


def _read_brat(path):
    (path.parent / (path.name.split(".")[0] + ".txt")).write_text("Seizures were seen.\n", encoding="utf-8")
    return _read_documents("brat")(path)


def _read_aliases(path):
    from ontolink.ontology import build_ontology
    from ontolink.ontology.loaders import term_dict
    from ontolink.recognition.extra_names import read_extra_names

    ontology = build_ontology([term_dict("T:1", "seizure"), term_dict("T:2", "fever fit", parents=["T:1"])],
                              "t", "t", "0")
    return read_extra_names([str(path)], ontology)


def _read_config(path):
    """--config through the command line: exit 0 (the help, after the config was read) or 2 naming the file."""
    result = run("link", "--config", path, "--help")
    if result.exit_code == 2 and str(path) in result.output:
        raise InputError(result.output.strip().splitlines()[-1])  # named: within the contract
    assert result.exit_code == 0 and result.exception is None or isinstance(result.exception, SystemExit), \
        (result.exit_code, result.output, result.exception)


# reader name -> (what reads a path, a valid sample, the file name's suffix)
READERS = {
    "obo": (_read_ontology("obo"), OBO, ".obo"),
    "obographs": (_read_ontology("obographs"), OBOGRAPHS, ".json"),
    "owl": (_read_ontology("owl"), OWL, ".owl"),
    "scizsel": (_read_ontology("scizsel"), SCIZSEL, ".json"),
    "entity-jsonl": (_read_ontology("jsonl"), ENTITIES, ".jsonl"),
    "scispacy": (_read_ontology("scispacy"), SCISPACY, ".jsonl"),
    "csv": (_read_ontology("csv"), CSV, ".csv"),
    "mentions": (_read_records, MENTIONS, ".jsonl"),
    "tsv": (_read_tsv, TSV, ".tsv"),
    "pubtator": (_read_documents("pubtator"), PUBTATOR, ".pubtator"),
    "bioc-xml": (_read_documents("bioc-xml"), BIOC_XML, ".xml"),
    "bioc-json": (_read_documents("bioc-json"), BIOC_JSON, ".json"),
    "text": (_read_documents("text"), TEXT, ".txt"),
    "documents-jsonl": (_read_documents("jsonl"), DOCUMENTS_JSONL, ".jsonl"),
    "brat": (_read_brat, BRAT, ".ann"),
    "aliases": (_read_aliases, ALIASES, ".jsonl"),
    "config": (_read_config, CONFIG, ".yaml"),
}


@st.composite
def hostile_bytes(draw, sample):
    """Bytes a reader may meet: the sample cut, with bytes flipped or inserted, in another encoding, arbitrary
    bytes; then maybe gzipped (whole, cut short, or a bomb: one long line inflated from a few KB)."""
    kind = draw(st.sampled_from(["field", "cut", "flip", "insert", "encoding", "arbitrary", "lines", "sample"]))
    data = sample
    if kind == "field":  # one field of one line (between tabs, '|', ',', ': ', quotes) replaced: values parsers trust
        lines = sample.split(b"\n")
        number = draw(st.integers(0, len(lines) - 1))
        fields = re.split(rb'(\t|\||,|: |"|<|>)', lines[number])
        at = draw(st.integers(0, len(fields) - 1))
        fields[at] = draw(st.one_of(st.sampled_from([b"", b"-1", b"1e400", b"99999999999999999999", b"x", b"null",
                                                     b"\x00", b"\xff", b"[[[[", b"{}", b"\t"]),
                                     st.text(max_size=16).map(str.encode), st.binary(max_size=16)))
        lines[number] = b"".join(fields)
        data = b"\n".join(lines)
    elif kind == "cut":
        data = sample[:draw(st.integers(0, len(sample)))]
    elif kind == "flip":
        data = bytearray(sample)
        for _ in range(draw(st.integers(1, 8))):
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        data = bytes(data)
    elif kind == "insert":
        at = draw(st.integers(0, len(sample)))
        data = sample[:at] + draw(st.binary(min_size=1, max_size=64)) + sample[at:]
    elif kind == "encoding":
        text = sample.decode("utf-8").replace("seizure", "crise épileptique ≥ 1")
        encoding = draw(st.sampled_from(["latin-1", "utf-16", "utf-16-le", "utf-32", "cp1252", "utf-8-sig"]))
        data = text.encode(encoding, errors="replace")
    elif kind == "arbitrary":
        data = draw(st.binary(max_size=512))
    elif kind == "lines":  # the sample's lines shuffled, repeated, some emptied: valid pieces in bad orders
        lines = sample.splitlines(keepends=True)
        data = b"".join(draw(st.lists(st.sampled_from(lines + [b"\n", b"\r\n", b"\x00\n"]), max_size=12)))
    packing = draw(st.sampled_from(["plain", "plain", "gzip", "gzip-cut", "gzip-bomb", "misnamed"]))
    if packing == "gzip":
        return gzip.compress(data), True
    if packing == "misnamed":  # named .gz, not gzip
        return data, True
    if packing == "gzip-cut":
        packed = gzip.compress(data)
        return packed[:draw(st.integers(0, len(packed)))], True
    if packing == "gzip-bomb":  # 64 KB of one repeated byte after the data, on one line, past the 16 KB line limit
        compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        return compressor.compress(data) + compressor.compress(b"x" * (64 << 10)) + compressor.flush(), True
    return data, False


class _Hang(Exception):
    pass


@contextmanager
def _no_hang(seconds=20):
    """A reader that takes longer than ``seconds`` on a few KB hangs: the alarm turns that into a failure."""
    def alarm(signum, frame):
        raise _Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _check(reader, tmp_path, data, gzipped):
    read, _, suffix = READERS[reader]
    folder = tmp_path / f"case{len(os.listdir(tmp_path))}"
    folder.mkdir()
    path = folder / f"input{suffix}{'.gz' if gzipped else ''}"
    path.write_bytes(data)
    with _no_hang():
        try:
            read(path)
        except InputError as error:
            if reader == "config":
                return
            assert str(path) in str(error) or str(folder) in str(error), f"the error names no file: {error}"


def _fuzz(reader, examples):
    sample = READERS[reader][1]
    packed = gzip.compress(sample)

    # the cases every run tries first, whatever it draws: the sample's gzip cut in half, the sample in Latin-1
    # and UTF-16, cut in half, a one-line bomb
    @example(case=(packed[:len(packed) // 2], True))
    @example(case=(sample.decode().replace("seizure", "crise épileptique").encode("latin-1", "replace"), False))
    @example(case=(sample.decode().encode("utf-16"), False))
    @example(case=(sample[:len(sample) // 2], False))
    @example(case=(gzip.compress(sample + b"x" * (64 << 10)), True))
    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                     HealthCheck.data_too_large])
    @given(case=hostile_bytes(sample))
    def fuzz(tmp_path, monkeypatch, case):
        monkeypatch.setenv("ONTOLINK_MAX_LINE_BYTES", "16K")
        _check(reader, tmp_path, *case)

    return fuzz


@pytest.mark.parametrize("reader", list(READERS))
def test_every_reader_reads_or_names_the_file(reader, tmp_path, monkeypatch):
    _fuzz(reader, 20)(tmp_path, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("reader", list(READERS))
def test_every_reader_reads_or_names_the_file_at_length(reader, tmp_path, monkeypatch):
    _fuzz(reader, 600)(tmp_path, monkeypatch)


@pytest.mark.parametrize("reader", list(READERS))
def test_each_sample_is_read(reader, tmp_path):
    """The samples are valid: the fuzzer starts from files the readers accept."""
    _check(reader, tmp_path, READERS[reader][1], False)
    read, sample, suffix = READERS[reader]
    path = tmp_path / f"valid{suffix}"
    path.write_bytes(sample)
    read(path)
