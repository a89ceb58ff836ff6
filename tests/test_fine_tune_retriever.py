"""`ontolink train retriever`: batch columns, negative strategies, loss, resume, index --model."""

import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from conftest import interrupt_at_call, jsonl, parse_jsonl
from ontolink.cli.main import cli
from ontolink.core.errors import InputError
from ontolink.ontology import load_ontology
from ontolink.core.io import read_records
from ontolink.core.records import pair_validator
from ontolink.training.retriever import batch_columns, column_masks, multi_positive_loss

# root R with children A, B; A has children A1, A2; B has child B1.
TOY = [{"id": "T:R", "name": "root"}, {"id": "T:A", "name": "alpha", "parents": ["T:R"]},
       {"id": "T:B", "name": "beta", "parents": ["T:R"]}, {"id": "T:A1", "name": "alpha one", "parents": ["T:A"]},
       {"id": "T:A2", "name": "alpha two", "parents": ["T:A"]}, {"id": "T:B1", "name": "beta one", "parents": ["T:B"]}]


@pytest.fixture()
def toy(tmp_path):
    path = tmp_path / "toy.jsonl"
    path.write_text(jsonl([{**entity, "definition": f"The {entity['name']}."} for entity in TOY]))
    return load_ontology(path)


def as_sets(mask, columns):
    return [{columns[c] for c in np.flatnonzero(row)} for row in mask]


def test_negative_strategies_follow_methods(toy):
    golds = ["T:A1", "T:A"]
    columns = ["T:A1", "T:A", "T:A2", "T:B", "T:B1", "T:R"]
    positive, negative = column_masks(golds, columns, toy, "base")
    assert as_sets(positive, columns) == [{"T:A1"}, {"T:A"}]
    assert as_sets(negative, columns)[0] == set(columns) - {"T:A1"}
    positive, negative = column_masks(golds, columns, toy, "rm-pcs")
    # N+(A1) = parent A, sibling A2
    assert as_sets(negative, columns)[0] == {"T:B", "T:B1", "T:R"}
    # N+(A) = parent R, children A1 A2, sibling B
    assert as_sets(negative, columns)[1] == {"T:B1"}
    positive, negative = column_masks(golds, columns, toy, "pc-pos")
    # P = {A1} ∪ (N(A1) ∩ G) = {A1, A}; siblings (A2) stay negatives
    assert as_sets(positive, columns) == [{"T:A1", "T:A"}, {"T:A", "T:A1"}]
    assert as_sets(negative, columns)[0] == {"T:A2", "T:B", "T:B1", "T:R"}
    assert as_sets(negative, columns)[1] == {"T:A2", "T:B", "T:B1"} - {"T:A2"} | {"T:B", "T:B1"}


def test_batch_columns_size_and_uniqueness(toy):
    rng = np.random.default_rng(0)
    ids = [entity.id for entity in toy]
    columns = batch_columns(["T:A1", "T:A1"], toy, ids, rng, batch_size=2)
    # |R| = (b − |G|) + min(max |N+|, 30) = (2 − 1) + 2, capped by what exists
    assert columns[0] == "T:A1" and len(columns) == 4 and len(set(columns)) == 4


def test_multi_positive_loss_matches_the_formula():
    scores = torch.tensor([[2.0, 1.0, 0.5, -1.0]])
    positive = torch.tensor([[True, True, False, False]])
    negative = torch.tensor([[False, False, True, True]])
    expected = -0.5 * sum(np.log(np.exp(s) / (np.exp(s) + np.exp(0.5) + np.exp(-1.0))) for s in (2.0, 1.0))
    assert float(multi_positive_loss(scores, positive, negative)) == pytest.approx(expected, rel=1e-5)


def test_pairs_are_checked_against_the_ontology(toy, tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text(jsonl([{"id": "p1", "mention": "alpha", "entity_id": "T:A"},
                           {"id": "p2", "mention": "gamma", "entity_id": "T:NOPE"}]))
    with pytest.raises(InputError, match=r"pairs.jsonl:2: entity_id 'T:NOPE' is not in ontology"):
        list(read_records(path, validate=pair_validator(toy)))
    assert [pair["id"] for pair in read_records(path, validate=pair_validator(toy), skip_invalid=True)] == ["p1"]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = CliRunner().invoke(cli, ["train", "retriever", "--ontology", str(tmp_path / "toy.jsonl"), "-i",
                                      str(empty), str(tmp_path / "model")])
    assert result.exit_code == 2 and "no pairs to train on" in result.stderr


@pytest.mark.slow
def test_train_resume_index_and_link(small_ontology_path, tmp_path):
    ontology = load_ontology(small_ontology_path)
    # 16 pairs make one real optimiser step (fewer exit 2), all trained on (no hold-out): 2 batches of 8 an epoch
    entities = [entity for entity in ontology if entity.definition][:16]
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(jsonl([{"id": f"p{n}", "mention": entity.name.lower(), "context_left": "The patient had ",
                             "context_right": " at birth.", "entity_id": entity.id}
                            for n, entity in enumerate(entities)]))

    def train(directory, *extra):
        result = CliRunner().invoke(cli, ["train", "retriever", "--ontology", str(small_ontology_path), "-i",
                                          str(pairs), "--batch-size", "8", "--max-length", "32", "--device", "cpu",
                                          "--negatives", "pc-pos", "--holdout-share", "0", "--input-mode", "context", *extra,
                                          str(directory)])
        assert result.exit_code == 0, result.stderr
        return result

    straight = tmp_path / "straight"
    train(straight, "--epochs", "2")

    # Interrupt a 2-epoch run in its second epoch, then resume: the same weights must come out.
    import ontolink.training.retriever as module

    resumed = tmp_path / "resumed"
    with pytest.MonkeyPatch.context() as patch:
        interrupt_at_call(patch, module, "multi_positive_loss", 3)  # 2 batches an epoch: epoch 2's first
        with pytest.raises(KeyboardInterrupt):
            module.train_retriever(list(read_records(pairs, validate=pair_validator(ontology))), ontology,
                                   resumed, negatives="pc-pos", epochs=2, batch_size=8, max_length=32, device="cpu",
                                   holdout_share=0, input_mode="context")
    assert (tmp_path / "resumed.checkpoint" / "manifest.json").exists() and not resumed.exists()
    result = train(resumed, "--epochs", "2", "--resume")
    assert "resuming from" in result.stderr and not (tmp_path / "resumed.checkpoint").exists()

    from safetensors.torch import load_file

    straight_weights = load_file(str(straight / "model.safetensors"))
    resumed_weights = load_file(str(resumed / "model.safetensors"))
    assert all(torch.equal(straight_weights[name], resumed_weights[name]) for name in straight_weights)
    assert json.loads((resumed / "manifest.json").read_text())["losses"] == \
        json.loads((straight / "manifest.json").read_text())["losses"]

    # a checkpoint made with other settings is refused
    (tmp_path / "other.checkpoint").mkdir()
    result = CliRunner().invoke(cli, ["train", "retriever", "--ontology", str(small_ontology_path), "-i", str(pairs),
                                      "--resume", "--negatives", "base", "--batch-size", "8", "--max-length", "32",
                                      "--holdout-share", "0",
                                      "--device", "cpu", str(tmp_path / "other")])
    assert result.exit_code == 2 and "no manifest.json" in result.stderr

    index = tmp_path / "idx"
    result = CliRunner().invoke(cli, ["index", "--ontology", str(small_ontology_path), "--model", str(straight),
                                      "--device", "cpu", str(index)])
    assert result.exit_code == 0, result.stderr
    described = json.loads((index / "manifest.json").read_text())["index"]["encoder"]
    assert described["normalized"] is False and described["inputs"] == "marked"
    assert described["model"] == str(straight)
    mentions = [{"id": f"m{n}", "mention": entity.name, "context_left": "He had "}
                for n, entity in enumerate(entities)]
    result = CliRunner().invoke(cli, ["link", "--index", str(index), "--top-k", "10"], input=jsonl(mentions))
    assert result.exit_code == 0, result.stderr
    linked = parse_jsonl(result.stdout)
    assert all(len(record["candidates"]) == 10 for record in linked)
    # 4 steps do not make a good retriever, but the index and the queries speak the same model: every
    # trained name, read in context, finds its entity among 10 of the slice's 428 (by chance: 1 in 43)
    ranked = [[candidate["id"] for candidate in record["candidates"]] for record in linked]
    ranks = [ids.index(entity.id) + 1 if entity.id in ids else None for ids, entity in zip(ranked, entities)]
    assert None not in ranks and ranks.count(1) >= 4, ranks


def test_span_pooling_averages_the_mention_and_the_name_only():
    from transformers import AutoTokenizer

    from ontolink.encoders.model_files import DEFAULT_ENCODER, resolve_model_path
    from ontolink.core.encoder_inputs import SPECIAL_TOKENS, span_pool

    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(DEFAULT_ENCODER))
    tokenizer.add_special_tokens({"additional_special_tokens": SPECIAL_TOKENS})
    texts = ["the child had [Ms] short stature [Me] since birth", "short stature [ENT] a height below normal",
             "short stature", "[Ms] [Me] nothing inside"]
    features = tokenizer(texts, padding=True, return_tensors="pt")
    length = features["input_ids"].shape[1]
    embeddings = torch.arange(length, dtype=torch.float32).repeat(len(texts), 1).unsqueeze(-1)  # vector = position
    pooled = span_pool(embeddings, features["input_ids"], features["attention_mask"], tokenizer)[:, 0]
    tokens = [tokenizer.convert_ids_to_tokens(ids) for ids in features["input_ids"]]
    assert tokens[0][5:7] == ["short", "stature"] and pooled[0] == 5.5  # between [Ms] and [Me]
    assert tokens[1][1:3] == ["short", "stature"] and pooled[1] == 1.5  # before [ENT]
    attended = int(features["attention_mask"][2].sum())
    assert pooled[2] == (attended - 1) / 2  # no marker: every token, [CLS] and [SEP] included
    assert pooled[3] == (int(features["attention_mask"][3].sum()) - 1) / 2  # an empty span: the whole input


# --- bare input mode: warm start from the frozen encoder, validation, fallback ---------------------------

SYNONYMS = [{"id": "S:A", "name": "alpha", "synonyms": [{"text": "first", "scope": "EXACT"}]},
            {"id": "S:B", "name": "beta", "synonyms": [{"text": "second", "scope": "EXACT"}]},
            {"id": "S:C", "name": "gamma"}]


def test_bare_step_zero_is_the_frozen_encoder():
    from ontolink.encoders.model_files import DEFAULT_ENCODER
    from ontolink.encoders.sentence import SentenceEncoder
    from ontolink.training.retriever import build_model, encode_texts

    texts = ["Seizures", "abnormality of the eye", "generalized tonic-clonic seizure", "BDA2"]
    frozen = SentenceEncoder(DEFAULT_ENCODER, device="cpu", precision="fp32").encode(texts)
    step0 = encode_texts(build_model(DEFAULT_ENCODER, "cpu", 128, "bare"), texts, "cpu", "mean").numpy()
    np.testing.assert_allclose(step0, frozen, atol=1e-5)


@pytest.mark.slow
def test_bare_mode_falls_back_to_the_frozen_encoder(small_ontology_path, tmp_path):
    """lr 0: no epoch beats step 0, so the frozen encoder is written, and indexes exactly as the frozen one."""
    import faiss

    ontology = load_ontology(small_ontology_path)
    pairs = [{"id": f"p{n}", "mention": text, "entity_id": entity.id}
             for n, (entity, text) in enumerate((entity, text) for entity in ontology
                                                for text in ontology.names(entity)[:2])][:40]
    pairs_path = tmp_path / "pairs.jsonl"
    pairs_path.write_text(jsonl(pairs))
    model = tmp_path / "warm"
    result = CliRunner().invoke(cli, ["train", "retriever", "--ontology", str(small_ontology_path), "-i",
                                      str(pairs_path), "--input-mode", "bare", "--lr", "0", "--batch-size", "16",
                                      "--max-length", "32", "--device", "cpu", str(model)])
    assert result.exit_code == 0, result.stderr
    assert "NOT IMPROVED, nothing beat the frozen encoder" in result.stderr
    manifest = json.loads((model / "manifest.json").read_text())
    assert manifest["kept_epoch"] == 0 and manifest["input_mode"] == "bare"
    assert [entry["epoch"] for entry in manifest["validation"]] == [0, 1]
    assert manifest["validation"][0]["R@1"] == manifest["validation"][1]["R@1"]
    assert not (tmp_path / "warm.best").exists() and not (tmp_path / "warm.checkpoint").exists()

    vectors = {}
    for name, extra in (("frozen", []), ("warm", ["--model", str(model)])):
        result = CliRunner().invoke(cli, ["index", "--ontology", str(small_ontology_path), "--runtime", "torch",
                                          "--precision", "fp32", "--device", "cpu", "--no-cache", *extra,
                                          str(tmp_path / f"idx-{name}")])
        assert result.exit_code == 0, result.stderr
        described = json.loads((tmp_path / f"idx-{name}" / "manifest.json").read_text())["index"]["encoder"]
        assert described["normalized"] is True and described["inputs"] == "plain"
        stored = faiss.read_index(str(tmp_path / f"idx-{name}" / "index.faiss"))
        vectors[name] = stored.reconstruct_n(0, stored.ntotal)
    assert len(vectors["frozen"]) > 400
    np.testing.assert_allclose(vectors["warm"], vectors["frozen"], atol=1e-5)
    # left to auto on a CPU, a bare retriever is read as its manifest says: ONNX int8, like the default encoder
    assert manifest["read_as"] == {"runtime": "onnx", "precision": "int8"}
    result = CliRunner().invoke(cli, ["index", "--ontology", str(small_ontology_path), "--device", "cpu", "--model",
                                      str(model), str(tmp_path / "idx-auto")])
    assert result.exit_code == 0, result.stderr
    described = json.loads((tmp_path / "idx-auto" / "manifest.json").read_text())["index"]["encoder"]
    assert (described["runtime"], described["precision"]) == ("onnx", "int8")
    mentions = [{"id": "m1", "mention": "seizures"}]
    result = CliRunner().invoke(cli, ["link", "--index", str(tmp_path / "idx-warm"), "--top-k", "3"],
                                input=jsonl(mentions))
    assert result.exit_code == 0, result.stderr
    assert parse_jsonl(result.stdout)[0]["candidates"][0]["id"] == "HP:0001250"


@pytest.mark.slow
def test_bare_mode_resumes_with_its_validation_history(small_ontology_path, tmp_path):
    """Killed in epoch 2 and resumed: the same validation history, kept epoch and weights as a straight run."""
    import ontolink.training.retriever as module
    from safetensors.numpy import load_file

    ontology = load_ontology(small_ontology_path)
    pairs = [{"id": f"p{n}", "mention": text, "entity_id": entity.id, "golds": [entity.id]}
             for n, (entity, text) in enumerate((entity, text) for entity in ontology
                                                for text in ontology.names(entity)[1:2])][:48]

    def train(directory, resume=False):
        return module.train_retriever([dict(pair) for pair in pairs], ontology, directory, epochs=2,
                                      learning_rate=5e-5, batch_size=16, max_length=32, device="cpu", resume=resume,
                                      input_mode="bare", holdout_share=0.25)

    straight = train(tmp_path / "straight")
    with pytest.MonkeyPatch.context() as patch:
        interrupt_at_call(patch, module, "multi_positive_loss", 4)  # 3 batches an epoch: epoch 2's first
        with pytest.raises(KeyboardInterrupt):
            train(tmp_path / "resumed")
    assert (tmp_path / "resumed.best").exists() and (tmp_path / "resumed.checkpoint").exists()
    resumed = train(tmp_path / "resumed", resume=True)
    assert resumed["validation"] == straight["validation"] and resumed["kept_epoch"] == straight["kept_epoch"]
    straight_weights, resumed_weights = (load_file(str(tmp_path / name / "model.safetensors"))
                                         for name in ("straight", "resumed"))
    assert all(np.array_equal(straight_weights[key], resumed_weights[key]) for key in straight_weights)
    assert not (tmp_path / "resumed.best").exists() and not (tmp_path / "resumed.checkpoint").exists()


def saved_for_backward(model, texts):
    """(bytes the autograd graph keeps for backward beyond the weights, the pooled vectors) of one training
    forward pass."""
    from ontolink.training.retriever import encode_batch

    weights = {parameter.untyped_storage().data_ptr() for parameter in model.parameters()}
    kept = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in weights:
            kept[storage.data_ptr()] = storage.nbytes()
        return tensor

    torch.manual_seed(0)  # the same dropout masks in every call
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        vectors = encode_batch(model, texts, "cpu", "mean")
    return sum(kept.values()), vectors


def test_training_keeps_only_each_layers_input_for_backward():
    """A 128-pair batch holds ~290 sequences of 128 tokens: with every activation kept (attention maps
    included, ~275 KB a token on MiniLM-L6) one step peaked above 6.9 GB (killed there; 11-13 GB in the
    grid) against 5.6 GB with activation checkpointing. Fails when training keeps every activation again;
    and checkpointing must not change what is learnt (same gradients, dropout replayed)."""
    from ontolink.encoders.model_files import DEFAULT_ENCODER
    from ontolink.training.retriever import build_model

    texts = ["word " * 200] * 2  # truncated to 64 tokens each
    model = build_model(DEFAULT_ENCODER, "cpu", 64, "bare")
    model.train()
    kept, vectors = saved_for_backward(model, texts)
    assert kept / (2 * 64) < 32 * 1024, f"{kept / 2 ** 20:.1f} MB kept for backward"
    vectors.sum().backward()
    embeddings = model[0].auto_model.embeddings.word_embeddings.weight
    gradient, embeddings.grad = embeddings.grad, None

    transformer = model[0].auto_model  # the same weights, every activation kept
    (getattr(transformer, "activation_checkpointing_disable", None) or transformer.gradient_checkpointing_disable)()
    kept_all, vectors_all = saved_for_backward(model, texts)
    assert kept_all > 8 * kept  # the bound above can tell the two apart
    vectors_all.sum().backward()
    torch.testing.assert_close(vectors, vectors_all)
    torch.testing.assert_close(gradient, embeddings.grad)
