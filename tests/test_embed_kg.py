"""Triples reader and `ontolink embed-kg` (RDF2Vec and PyKEEN) on small slices of the shared align KG. What belongs
to one triple format alone is in components/test_triple_format_NAME.py."""

import gzip
import json

import pytest

from conftest import run, shared_path
from ontolink.core.errors import InputError
from ontolink.formats.triples import Triple, TripleSet, read_triples

TINY = {"epochs": 2}


# --- the triples reader -------------------------------------------------------------------------

def test_read_tsv_jsonl_pairs_gzip_and_stdin_sniffing(tmp_path, monkeypatch):
    tsv = tmp_path / "kg.tsv"
    tsv.write_text("a\tr\tb\n\n b \t r2\tc\r\n", encoding="utf-8")
    assert list(read_triples(tsv)) == [Triple("a", "r", "b"), Triple("b", "r2", "c")]
    jsonl = tmp_path / "kg.jsonl.gz"
    with gzip.open(jsonl, "wt", encoding="utf-8") as handle:
        handle.write(json.dumps({"head": "a", "relation": "r", "tail": "b", "extra": 1}) + "\n")
        handle.write(json.dumps({"pair_id": "p", "text": "t", "subject": {"id": "s", "name": "S"},
                                 "predicate": "p", "object": {"id": "o", "name": "O"}}) + "\n")
    assert list(read_triples(jsonl)) == [Triple("a", "r", "b"), Triple("s", "p", "o")]
    # no extension: sniffed from the first character
    other = tmp_path / "kg.data"
    other.write_text('\n{"head": "x", "relation": "r", "tail": "y"}\n', encoding="utf-8")
    assert list(read_triples(other)) == [Triple("x", "r", "y")]
    other.write_text("x\tr\ty\n", encoding="utf-8")
    assert list(read_triples(other)) == [Triple("x", "r", "y")]


def test_triple_set_maps_dedupes_and_hashes_independent_of_order():
    triples = [Triple("b", "r", "a"), Triple("a", "r", "c"), Triple("b", "r", "a")]
    first = TripleSet.from_triples(triples)
    assert first.entity_ids == ["a", "b", "c"] and first.relation_ids == ["r"]
    assert first.mapped.tolist() == [[1, 0, 0], [0, 0, 2]] and first.duplicates == 1
    assert first.content_hash() == TripleSet.from_triples(triples[::-1]).content_hash()


# --- RDF2Vec ------------------------------------------------------------------------------------

def embed_kg_step(triples, directory, **options):
    from ontolink.kg.embed import embed_kg

    return embed_kg(triples, directory, **options)


# --- PyKEEN -------------------------------------------------------------------------------------

# --- the command --------------------------------------------------------------------------------

def test_cli_embed_kg_from_stdin(kg_slice, tmp_path):
    result = run("embed-kg", tmp_path / "emb", "--dim", 8, "--walks", 3, "--epochs", 1,
                 input=kg_slice.read_text())
    assert result.exit_code == 0, result.stderr
    assert "embedded" in result.stderr and "with rdf2vec" in result.stderr
    manifest = json.loads((tmp_path / "emb" / "manifest.json").read_text())
    assert manifest["triples"]["count"] == 600 and manifest["command"].startswith("ontolink")


def test_cli_bad_inputs(tmp_path, kg_slice):
    result = run("embed-kg", tmp_path / "emb", "-i", shared_path("bad_inputs", "triples_wrong_columns.tsv"))
    assert result.exit_code == 2
    assert "triples_wrong_columns.tsv:2: expected 3 tab-separated columns" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "emb").exists()

    result = run("embed-kg", tmp_path / "emb", "-i", kg_slice, "--method", "NoSuchModel")
    assert result.exit_code == 2 and "unknown KG embedding method 'NoSuchModel'" in result.stderr
    assert "RotatE" in result.stderr

    result = run("embed-kg", tmp_path / "emb", "-i", kg_slice, "--negatives", 3)
    assert result.exit_code == 2 and "--negatives: PyKEEN options, not for --method rdf2vec" in result.stderr

    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    result = run("embed-kg", tmp_path / "emb", "-i", empty)
    assert result.exit_code == 2 and "no triples to embed" in result.stderr


def test_load_refuses_altered_or_truncated_embeddings(kg_slice, tmp_path):
    from ontolink.kg.embeddings import load_kg_embeddings

    embed_kg_step(list(read_triples(kg_slice)), tmp_path / "emb", dim=4, walks=2, epochs=1)
    tensors = tmp_path / "emb" / "embeddings.safetensors"
    data = bytearray(tensors.read_bytes())
    data[-1] ^= 0xFF
    tensors.write_bytes(bytes(data))
    with pytest.raises(InputError, match="changed after the manifest was written"):
        load_kg_embeddings(tmp_path / "emb")
    (tmp_path / "emb" / "ids.json").unlink()
    with pytest.raises(InputError, match="ids.json is missing"):
        load_kg_embeddings(tmp_path / "emb")
    with pytest.raises(InputError, match="no manifest.json"):
        load_kg_embeddings(tmp_path)


def test_embed_kg_files_takes_the_options_object(kg_slice, tmp_path):
    """embed-kg's library function, as a Python caller calls it: RDF2Vec on the KG slice, then a PyKEEN-only
    setting refused for rdf2vec as the command refuses it."""
    from ontolink.core.errors import UsageError
    from ontolink.kg.embed import embed_kg_files
    from ontolink.kg.embeddings import load_kg_embeddings
    from ontolink.kg.options import EmbedKgOptions

    options = EmbedKgOptions(directory=str(tmp_path / "emb"), input_path=str(kg_slice), dim=8, walks=3, epochs=1)
    manifest = embed_kg_files(options)
    assert manifest["triples"]["count"] == 600 and manifest["entity_dim"] == 8
    assert load_kg_embeddings(tmp_path / "emb").entity.shape[1] == 8
    with pytest.raises(UsageError, match="--lr, --negatives: PyKEEN options, not for --method rdf2vec"):
        embed_kg_files(EmbedKgOptions(directory=str(tmp_path / "x"), input_path=str(kg_slice), negatives=3, lr=0.1))
    assert not (tmp_path / "x").exists()
