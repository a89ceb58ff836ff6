"""Triples reader and `ontolink embed-kg` (RDF2Vec and PyKEEN) on small slices of the shared align KG."""

import gzip
import json

import numpy as np
import pytest

from conftest import run, shared_path, shared_slice
from ontolink.errors import InputError
from ontolink.io import ReadStats
from ontolink.triples import Triple, TripleSet, read_triples

TINY = {"epochs": 2}


@pytest.fixture(scope="module")
def kg_slice(tmp_path_factory):
    """The first 600 edges of the align KG (real data, a few hundred entities)."""
    return shared_slice(tmp_path_factory.mktemp("kg"), 600, "align", "kg.tsv")


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


def test_wrong_column_count_is_an_error_at_line_2():
    path = shared_path("bad_inputs", "triples_wrong_columns.tsv")
    with pytest.raises(InputError, match=r"triples_wrong_columns\.tsv:2: expected 3 tab-separated columns"):
        list(read_triples(path))
    stats = ReadStats()
    assert list(read_triples(path, skip_invalid=True, stats=stats)) == [Triple("A", "rel", "B")]
    assert (stats.records, stats.skipped) == (1, 2)


def test_bad_json_triple_names_the_field(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"head": "a", "relation": "r", "tail": "b"}\n{"head": "a", "relation": "r"}\n')
    with pytest.raises(InputError, match=r"bad\.jsonl:2: missing required field 'tail'"):
        list(read_triples(path))


def test_triple_set_maps_dedupes_and_hashes_independent_of_order():
    triples = [Triple("b", "r", "a"), Triple("a", "r", "c"), Triple("b", "r", "a")]
    first = TripleSet.from_triples(triples)
    assert first.entity_ids == ["a", "b", "c"] and first.relation_ids == ["r"]
    assert first.mapped.tolist() == [[1, 0, 0], [0, 0, 2]] and first.duplicates == 1
    assert first.content_hash() == TripleSet.from_triples(triples[::-1]).content_hash()


# --- RDF2Vec ------------------------------------------------------------------------------------

def test_random_walks_follow_edges_both_ways(kg_slice):
    from ontolink.backends.kg.rdf2vec import random_walks

    triple_set = TripleSet.from_triples(list(read_triples(kg_slice)))
    n_entities, n_relations = len(triple_set.entity_ids), len(triple_set.relation_ids)
    walks = random_walks(triple_set, depth=3, walks_per_entity=5, reverse=True, seed=0)
    edges = {tuple(row) for row in triple_set.mapped.tolist()}
    assert set(walks[:, 0].tolist()) == set(range(n_entities))  # every entity starts walks (tails too)
    assert len({tuple(row) for row in walks.tolist()}) == len(walks)  # deduplicated
    for walk in walks[:500]:
        for hop in range(3):
            head, token, tail = walk[2 * hop], walk[2 * hop + 1], walk[2 * hop + 2]
            if token < 0:
                break
            relation = token - n_entities
            if relation < n_relations:
                assert (head, relation, tail) in edges
            else:
                assert (tail, relation - n_relations, head) in edges
    forward_only = random_walks(triple_set, depth=3, walks_per_entity=5, reverse=False, seed=0)
    assert forward_only[:, 1].max() < n_entities + n_relations


def test_rdf2vec_directory_is_complete_and_reproducible(kg_slice, tmp_path):
    from ontolink.artifacts.kg_embeddings import load_kg_embeddings

    triples = list(read_triples(kg_slice))
    outputs = []
    for name in ("one", "two"):
        manifest = embed_kg_step(triples, tmp_path / name, method="rdf2vec", dim=8, walks=5, epochs=2, seed=3)
        outputs.append(load_kg_embeddings(tmp_path / name))
    loaded = outputs[0]
    assert sorted(p.name for p in (tmp_path / "one").iterdir()) == [
        "embeddings.safetensors", "ids.json", "manifest.json", "training_curve.jsonl"]
    assert loaded.entity.shape == (manifest["entities"], 8) and loaded.relation.shape == (manifest["relations"], 8)
    assert manifest["artifact"] == "kg-embeddings" and manifest["embedding"]["options"]["depth"] == 4
    assert "relation_inverse" in loaded.extra
    assert np.array_equal(loaded.entity, outputs[1].entity)  # same seed, same vectors
    curve = [json.loads(line) for line in (tmp_path / "one" / "training_curve.jsonl").read_text().splitlines()]
    assert [entry["epoch"] for entry in curve] == [1, 2] and all(entry["loss"] > 0 for entry in curve)
    assert loaded.missing("MESH:NOPE", triples[0].relation, triples[0].tail) == (
        f"subject entity 'MESH:NOPE' has no embedding in {tmp_path / 'one'} (not in its KG)")
    assert "relation 'NoSuchRelation' is not in the KG" in loaded.missing(triples[0].head, "NoSuchRelation",
                                                                           triples[0].tail)


def embed_kg_step(triples, directory, **options):
    from ontolink.steps.embed_kg import embed_kg

    return embed_kg(triples, directory, **options)


# --- PyKEEN -------------------------------------------------------------------------------------

@pytest.mark.parametrize("model, options, entity_dim, relation_dim, complex_valued", [
    ("RotatE", dict(dim=4, negatives=2), 8, 8, True),
    ("TuckER", dict(dim=6, relation_dim=3), 6, 3, False),
    ("TransE", dict(dim=5), 5, 5, False),
])
def test_pykeen_models_write_safetensors_only(kg_slice, tmp_path, model, options, entity_dim, relation_dim,
                                              complex_valued):
    from ontolink.artifacts.kg_embeddings import load_kg_embeddings

    manifest = embed_kg_step(list(read_triples(kg_slice)), tmp_path / "emb", method=model, epochs=2,
                             eval_every=1, device="cpu", **options)
    loaded = load_kg_embeddings(tmp_path / "emb")
    assert loaded.entity.shape == (manifest["entities"], entity_dim)
    assert loaded.relation.shape == (manifest["relations"], relation_dim)
    assert manifest["complex"] is complex_valued and manifest["embedding"]["model"] == model
    if complex_valued:
        assert manifest["embedding"]["complex_dimension"] == {"entity": 4, "relation": 4}
        # RotatE relations are unit-modulus rotations: |r_k| = 1 for every complex coordinate
        real, imaginary = np.split(loaded.relation, 2, axis=1)
        assert np.allclose(real ** 2 + imaginary ** 2, 1.0, atol=1e-4)
    curve = [json.loads(line) for line in (tmp_path / "emb" / "training_curve.jsonl").read_text().splitlines()]
    assert len(curve) == 2 and all("val_mrr" in entry for entry in curve)
    assert manifest["embedding"]["best_epoch"] in (1, 2)
    assert not list(tmp_path.rglob("*.pt")) and not list(tmp_path.rglob("*.pkl"))


def test_published_defaults_are_the_presets():
    from ontolink.backends.kg.pykeen_kg import PyKEENEmbedder

    rotate = PyKEENEmbedder("rotate")
    assert rotate.model_kwargs == {"embedding_dim": 500} and rotate.options["negatives"] == 467
    assert rotate.loss_kwargs == {"margin": 9.0, "adversarial_temperature": 0.91}
    tucker = PyKEENEmbedder("TuckER")
    assert tucker.model_kwargs == {"embedding_dim": 200, "relation_dim": 65}
    assert tucker.training_loop == "lcwa" and tucker.options["label_smoothing"] == 0.1
    with pytest.raises(InputError, match="RotatE has no relation-dim"):
        PyKEENEmbedder("RotatE", relation_dim=3)


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
    from ontolink.artifacts.kg_embeddings import load_kg_embeddings

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
