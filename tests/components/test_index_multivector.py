"""Multi-vector linking: homonym expansion, late-interaction scores and losses, train / index / link."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import interrupt_at_call, jsonl, parse_jsonl, run
from ontolink.indexes.late_interaction import (
    marginal_likelihood_loss,
    query_expansion_losses,
    sum_of_max,
    xtr_scores,
)
from ontolink.ontology import load_ontology
from ontolink.ontology.kb_documents import kb_documents

# T:B's only names ("cone syndrome", "renal cone") are both names of T:A as well.
HOMONYMS = [
    {"id": "T:R", "name": "root", "definition": "The root."},
    {"id": "T:P", "name": "kidney disorder", "definition": "A kidney disorder.", "parents": ["T:R"]},
    {"id": "T:Q", "name": "bone disorder", "definition": "A bone disorder.", "parents": ["T:R"]},
    {"id": "T:A", "name": "cone syndrome", "definition": "Renal cones.", "synonyms": ["renal cone", "cone disease"],
     "parents": ["T:P"]},
    {"id": "T:B", "name": "Cone  Syndrome", "definition": "Bony cones.", "synonyms": ["renal cone"],
     "parents": ["T:Q"]},
    {"id": "T:C", "name": "cone syndrome", "definition": "A third one under the same parent.", "parents": ["T:P"]},
]


@pytest.fixture()
def homonym_ontology(tmp_path):
    path = tmp_path / "homonyms.jsonl"
    path.write_text(jsonl(HOMONYMS))
    return load_ontology(path)


def test_homonyms_are_expanded_until_every_name_is_unique(homonym_ontology):
    texts, entity_rows, expanded = kb_documents(homonym_ontology, "name")
    ids = [entity.id for entity in homonym_ontology]
    by_entity = {}
    for text, row in zip(texts, entity_rows):
        by_entity.setdefault(ids[row], []).append(text)
    assert len({" ".join(text.lower().split()) for text in texts}) == len(texts)
    assert by_entity["T:B"] == ["Cone  Syndrome (bone disorder)", "renal cone (bone disorder)"]
    assert by_entity["T:A"] == ["cone syndrome (kidney disorder)", "renal cone (kidney disorder)", "cone disease"]
    # same name and same parent as T:A: the definition tells them apart
    assert by_entity["T:C"] == ["cone syndrome (A third one under the same parent)"]
    assert expanded == 5
    entity_texts, entity_rows, _ = kb_documents(homonym_ontology, "entity")
    assert entity_texts[ids.index("T:A")] == "cone syndrome ; renal cone ; cone disease"
    assert entity_rows == list(range(len(ids)))


def test_scores_are_mean_sum_of_max_and_xtr_drops_unaligned_tokens():
    generator = torch.Generator().manual_seed(0)
    query = torch.nn.functional.normalize(torch.randn(3, 8, generator=generator), dim=-1)
    documents = [torch.nn.functional.normalize(torch.randn(n, 8, generator=generator), dim=-1) for n in (2, 4, 1)]
    stacked = torch.cat(documents)
    owner = torch.tensor([0, 0, 1, 1, 1, 1, 2])
    expected = torch.stack([(query @ d.T).max(dim=1).values.mean() for d in documents])
    scores = xtr_scores([query], stacked, owner, 3)
    assert torch.allclose(scores[0], expected, atol=1e-6)
    offsets = np.array([0, 2, 6, 7])
    exact = sum_of_max(query.numpy(), lambda rows: stacked.numpy()[rows], offsets, np.array([2, 0]))
    assert np.allclose(exact, expected[[2, 0]].numpy(), atol=1e-6)

    # top-1: each query token keeps only its single best token of the batch; the rest count 0
    similarity = query @ stacked.T
    aligned = similarity * (similarity >= similarity.max(dim=1, keepdim=True).values)
    by_document = torch.stack([aligned[:, owner == d].max(dim=1).values for d in range(3)], dim=1)
    assert torch.allclose(xtr_scores([query], stacked, owner, 3, top_k=1)[0], by_document.mean(dim=0), atol=1e-6)


def test_marginal_likelihood_sums_over_all_gold_names():
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
    positive = torch.tensor([[True, False, True, False]])
    probabilities = logits.softmax(dim=1)[0]
    assert torch.isclose(marginal_likelihood_loss(logits, positive), -torch.log(probabilities[0] + probabilities[2]))
    # a single positive is plain cross-entropy (entity-based KB)
    single = torch.tensor([[False, True, False, False]])
    assert torch.isclose(marginal_likelihood_loss(logits, single),
                         torch.nn.functional.cross_entropy(logits, torch.tensor([1])))


def test_query_expansion_losses():
    masks = torch.nn.functional.normalize(torch.tensor([[1.0, 0.0], [0.0, 1.0]]), dim=-1)
    gold = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    missing = torch.tensor([True, True, False])
    expansion, dispersion = query_expansion_losses(masks, gold, missing, torch.tensor(10.0))
    assert dispersion.item() == pytest.approx(0.0)  # orthogonal masks do not crowd one token
    assert expansion.item() < 0.01  # each mask already sits on a missing token
    wrong, _ = query_expansion_losses(-masks[:1], gold, missing, torch.tensor(10.0))
    assert wrong.item() > 9  # a mask on a token the mention already has
    same, crowded = query_expansion_losses(torch.stack([masks[0], masks[0]]), gold, missing, torch.tensor(10.0))
    assert crowded.item() == pytest.approx(0.5)  # q1·q2 / |Y| = 1 / 2


@pytest.fixture(scope="module")
def trained(small_ontology_path, tmp_path_factory):
    """A few steps of real training (PyPI MiniLM) on pairs from the HPO slice, with query expansion."""
    ontology = load_ontology(small_ontology_path)
    entities = [entity for entity in ontology if entity.synonyms][:6]
    work = tmp_path_factory.mktemp("mv")
    pairs = work / "pairs.jsonl"
    pairs.write_text(jsonl([{"id": f"p{n}", "mention": entity.synonyms[0][0], "context_left": "The child had ",
                             "context_right": " since birth.", "entity_id": entity.id}
                            for n, entity in enumerate(entities)]
                           # a lone combining accent: a visible character that the uncased tokenizer strips
                           + [{"id": "empty", "mention": "\u0301", "entity_id": entities[0].id}]))
    model = work / "model"
    result = run("train", "multivector", "--ontology", small_ontology_path, "-i", pairs, "--epochs", "2",
                 "--batch-size", "3", "--hard-negatives", "4", "--query-expansion", "--max-length", "48",
                 "--device", "cpu", model)
    assert result.exit_code == 0, result.stderr
    assert "skipped 1 pairs whose mention has no word piece" in result.stderr
    return work, pairs, model, entities


@pytest.mark.slow
def test_train_writes_a_model_directory(trained):
    _, _, model, _ = trained
    manifest = json.loads((model / "manifest.json").read_text())
    assert manifest["artifact"] == "multivector" and len(manifest["losses"]) == 2
    assert manifest["options"]["query_expansion"] is True and manifest["kb"]["kind"] == "name"
    assert (model / "head.safetensors").exists() and (model / "backbone" / "model.safetensors").exists()
    assert not (model.parent / "model.checkpoint").exists()


@pytest.mark.slow
@pytest.mark.parametrize("faiss_type", ["flat", "sq8", "ivfpq"])
def test_index_and_link_with_the_trained_model(trained, small_ontology_path, faiss_type):
    work, pairs, model, entities = trained
    index = work / f"idx-{faiss_type}"
    extra = ["--pq-m", "16", "--nlist", "8"] if faiss_type == "ivfpq" else []
    result = run("index", "--ontology", small_ontology_path, "--method", "multivector", "--model", model, "--faiss",
                 faiss_type, "--device", "cpu", *extra, index)
    assert result.exit_code == 0, result.stderr
    manifest = json.loads((index / "manifest.json").read_text())
    assert manifest["kind"] == "multi-vector" and manifest["index"]["query_expansion"] is True
    assert manifest["index"]["faiss"]["bytes_per_token"] == {"flat": 4 * 128, "sq8": 128, "ivfpq": 16 + 8}[faiss_type]

    mentions = [{"id": "a", "mention": entities[1].name, "context_left": "Seen: "},
                {"id": "b", "mention": "\u0301", "context_left": "a span with no word piece"}]
    result = run("link", "--index", index, "--top-k", "5", "--ontology", small_ontology_path, input=jsonl(mentions))
    assert result.exit_code == 0, result.stderr
    linked = parse_jsonl(result.stdout)
    assert [record["id"] for record in linked] == ["a", "b"]
    assert all(len(record["candidates"]) == 5 for record in linked)
    scores = [candidate["score"] for candidate in linked[0]["candidates"]]
    assert scores == sorted(scores, reverse=True) and len({c["id"] for c in linked[0]["candidates"]}) == 5
    assert "1 mention had no word piece in its span" in result.stderr
    if faiss_type != "ivfpq":
        assert linked[0]["candidates"][0]["id"] == entities[1].id
    # eval reads multi-vector output like any other: the gold's rank among the candidates, and a miss
    ranked = [candidate["id"] for candidate in linked[0]["candidates"]]
    absent = next(entity.id for entity in load_ontology(small_ontology_path) if entity.id not in ranked)
    reciprocal = 1 / (ranked.index(entities[1].id) + 1) if entities[1].id in ranked else 0.0
    result = run("eval", "--ontology", small_ontology_path, "--format", "json",
                 input=jsonl([{**linked[0], "gold": [entities[1].id]}, {**linked[0], "id": "c", "gold": [absent]}]))
    assert result.exit_code == 0, result.stderr
    metrics = json.loads(result.stdout)["metrics"]["all"]
    assert metrics["n"] == 2 and metrics["R@5"] == (0.5 if reciprocal else 0.0)  # one run: flat numbers
    assert metrics["MRR"] == pytest.approx(reciprocal / 2)


@pytest.mark.slow
def test_single_and_multi_vector_models_are_not_mixed(trained, small_ontology_path, tmp_path):
    _, _, model, _ = trained
    result = run("index", "--ontology", small_ontology_path, "--model", model, "--device", "cpu", tmp_path / "x")
    assert result.exit_code == 2 and "use `ontolink index --method multivector`" in result.stderr
    retriever = tmp_path / "retriever"
    retriever.mkdir()
    (retriever / "manifest.json").write_text(json.dumps({"artifact": "retriever"}))
    result = run("index", "--ontology", small_ontology_path, "--multivector", "--model", retriever, tmp_path / "y")
    assert result.exit_code == 2 and "not a multi-vector model" in result.stderr
    assert "--multivector is deprecated: use --method multivector" in result.stderr  # the old spelling still works
    result = run("index", "--ontology", small_ontology_path, "--method", "multivector", "--faiss", "hnsw",
                 tmp_path / "z")
    assert result.exit_code == 2 and "flat, sq8 or ivfpq" in result.stderr
    # a trained model is not a backbone to start from (its head would override the options)
    result = run("train", "multivector", "--ontology", small_ontology_path, "-i", trained[1], "--model", model,
                 tmp_path / "again")
    assert result.exit_code == 2 and "is a trained multi-vector model" in result.stderr
    # too few tokens to train 8-bit product quantisers
    mini = Path(__file__).parents[1] / "data" / "ontology" / "mini.obo"
    result = run("index", "--ontology", mini, "--method", "multivector", "--faiss", "ivfpq", tmp_path / "pq")
    assert result.exit_code == 2 and "needs at least 256 vectors" in result.stderr


@pytest.mark.slow
def test_resume_gives_the_same_weights_and_kb_entity_without_temperature(trained, small_ontology_path, tmp_path):
    from safetensors.torch import load_file

    import ontolink.training.multivector as module
    from ontolink.core.io import read_records
    from ontolink.core.records import pair_validator

    _, pairs, _, _ = trained
    ontology = load_ontology(small_ontology_path)
    examples = list(read_records(pairs, validate=pair_validator(ontology, accept_gold=True)))
    options = dict(kb="entity", temperature=False, hard_negatives=2, epochs=2, batch_size=4, max_length=32,
                   device="cpu")
    module.train_multivector([dict(e) for e in examples], ontology, tmp_path / "straight", **options)

    with pytest.MonkeyPatch.context() as patch:
        interrupt_at_call(patch, module, "marginal_likelihood_loss", 3)  # 2 batches an epoch: epoch 2's first
        with pytest.raises(KeyboardInterrupt):
            module.train_multivector([dict(e) for e in examples], ontology, tmp_path / "resumed", **options)
    manifest, _ = module.train_multivector([dict(e) for e in examples], ontology, tmp_path / "resumed", resume=True,
                                           **options)
    assert manifest["temperature"] == 1.0 and manifest["kb"]["documents"] == len(ontology)
    for name in ("head.safetensors", "backbone/model.safetensors"):
        straight, resumed = (load_file(str(tmp_path / run_name / name)) for run_name in ("straight", "resumed"))
        assert all(torch.equal(straight[key], resumed[key]) for key in straight)


def test_labeled_mentions_train_too_and_bad_pairs_are_refused(small_ontology_path, tmp_path):
    from ontolink.core.errors import InputError
    from ontolink.core.io import read_records
    from ontolink.core.records import pair_validator

    ontology = load_ontology(small_ontology_path)
    entity = next(iter(ontology))
    path = tmp_path / "gold.jsonl"
    path.write_text(jsonl([{"id": "g", "mention": "x", "gold": ["HP:9999999", entity.id]}]))
    assert list(read_records(path, validate=pair_validator(ontology, accept_gold=True)))[0]["golds"] == [entity.id]
    with pytest.raises(InputError, match="entity_id"):
        list(read_records(path, validate=pair_validator(ontology)))
    path.write_text(jsonl([{"id": "g", "mention": "x", "gold": ["HP:9999999"]}]))
    with pytest.raises(InputError, match=r"gold.jsonl:1: .*none of the gold ids"):
        list(read_records(path, validate=pair_validator(ontology, accept_gold=True)))
