"""`ontolink train reranker` (ontolink.reranking.train_cross_encoder): training groups, the head's own learning
rate, and a trained cross-encoder reordering `link`'s candidates."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import jsonl, parse_jsonl
from ontolink.cli.main import cli
from ontolink.ontology import load_ontology


def test_training_candidates_inject_the_gold():
    from ontolink.reranking.train_cross_encoder import training_candidates

    rng = np.random.default_rng(0)
    retrieved = [{"id": f"E{n}"} for n in range(5)]
    group = training_candidates(retrieved, "E2", 3, rng)
    assert group[0] == "E2" and len(group) == 4 and "E2" not in group[1:]
    group = training_candidates(retrieved, "GOLD", 10, rng)
    assert group[0] == "GOLD" and sorted(group[1:]) == ["E0", "E1", "E2", "E3"]  # the last one made room


@pytest.mark.slow
def test_reranker_trains_and_reorders(small_ontology_path, tfidf_index, tmp_path):
    ontology = load_ontology(small_ontology_path)
    # 16 pairs or more make one real optimiser step (fewer exit 2); no hold-out: the test checks the order applied
    entities = [entity for entity in ontology if entity.definition][:16]
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(jsonl([{"id": f"p{n}", "mention": entity.name.lower(), "context_left": "The patient had ",
                             "entity_id": entity.id} for n, entity in enumerate(entities)]))
    model = tmp_path / "reranker"
    result = CliRunner().invoke(cli, ["train", "reranker", "--ontology", str(small_ontology_path), "--index",
                                      str(tfidf_index), "-i", str(pairs), "--top-k", "6", "--negatives", "3",
                                      "--holdout-share", "0", "--epochs", "3", "--lr", "1e-4", "--head-lr", "1e-2", "--batch-size", "4", "--max-length", "48", "--device", "cpu",
                                      str(model)])
    assert result.exit_code == 0, result.stderr
    assert json.loads((model / "manifest.json").read_text())["artifact"] == "reranker"
    mentions = jsonl([{"id": f"m{n}", "mention": entity.name, "context_left": "The patient had "}
                      for n, entity in enumerate(entities)])
    retrieved = parse_jsonl(CliRunner().invoke(cli, ["link", "--index", str(tfidf_index), "--no-ranker", "--top-k",
                                                     "5"], input=mentions).stdout)
    result = CliRunner().invoke(cli, ["link", "--index", str(tfidf_index), "--reranker", str(model), "--top-k", "5",
                                      "--device", "cpu"], input=mentions)
    assert result.exit_code == 0, result.stderr
    reranked = parse_jsonl(result.stdout)
    for before, after in zip(retrieved, reranked):
        candidates = after["candidates"]
        # the retriever's five candidates, each with its retriever score kept, ordered by the reranker's score
        kept = {candidate["id"]: candidate["retriever_score"] for candidate in candidates}
        assert kept == {candidate["id"]: candidate["score"] for candidate in before["candidates"]}
        assert [c["score"] for c in candidates] == sorted((c["score"] for c in candidates), reverse=True)
    # the reranker's own order: not the retriever's for every mention
    assert any([c["id"] for c in after["candidates"]] != [c["id"] for c in before["candidates"]]
               for before, after in zip(retrieved, reranked))
    result = CliRunner().invoke(cli, ["link", "--index", str(tfidf_index), "--reranker", str(tmp_path)],
                                input=mentions)
    assert result.exit_code == 2 and "no manifest.json" in result.stderr
    # a reranker is not an encoder: index --model refuses it rather than mean-pooling a classifier
    result = CliRunner().invoke(cli, ["index", "--ontology", str(small_ontology_path), "--model", str(model),
                                      str(tmp_path / "idx")])
    assert result.exit_code == 2 and "is an ontolink reranker, not an encoder" in result.stderr


def test_the_reranker_head_gets_its_own_learning_rate():
    from transformers import BertConfig, BertForSequenceClassification

    from ontolink.reranking.train_cross_encoder import head_and_body

    model = BertForSequenceClassification(BertConfig(vocab_size=50, hidden_size=8, num_hidden_layers=1,
                                                     num_attention_heads=2, intermediate_size=16, num_labels=1))
    body, head = head_and_body(model, 2e-5, 1e-3)
    assert (body["lr"], head["lr"]) == (2e-5, 1e-3)
    assert {id(p) for p in head["params"]} == {id(p) for p in model.classifier.parameters()}
    assert len(body["params"]) + len(head["params"]) == len(list(model.parameters()))
    assert head_and_body(model, 2e-5, None)[1]["lr"] == 2e-5  # no --head-lr: one rate, the published setting
