"""The plain-text document format: one document per non-blank line, `ID<TAB>text` or just text (the line number
is its id); real abstracts read as text give the PubTator reader's documents."""

from conftest import parse_jsonl, run
from ontolink.formats import DOCUMENT_FORMATS, document_text, read_documents


def test_text_documents(tmp_path):
    path = tmp_path / "docs.txt"
    path.write_text("PMID1\tThe child had seizures.\n\nNo tab here.\n")
    documents = list(read_documents(path))
    assert [(d.id, d.passages[0].text) for d in documents] == [("PMID1", "The child had seizures."),
                                                               ("3", "No tab here.")]


def test_abstracts_as_text_lines_are_the_pubtator_documents(cdr, tmp_path):
    """BC5CDR's abstracts written one per line, ``PMID<TAB>title abstract``: the same ids and texts as the PubTator
    reader gives, found by their .txt ending, and no mentions: text has no annotations."""
    pubtator = [(document.id, document_text(document)) for document in read_documents(cdr, "pubtator")]
    path = tmp_path / "abstracts.txt"
    path.write_text("".join(f"{doc_id}\t{text}\n\n" for doc_id, text in pubtator), encoding="utf-8")
    assert DOCUMENT_FORMATS.guess(path) == "text"
    assert [(document.id, document_text(document)) for document in read_documents(path)] == pubtator
    assert len(pubtator) == 6 and all(len(text) > 200 for _, text in pubtator)
    converted = run("convert", "-i", path)  # text has no annotations: no mentions
    assert converted.exit_code == 0 and parse_jsonl(converted.stdout) == []
