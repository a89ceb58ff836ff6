"""The Read-and-Select (ReS) reranker: cross-candidate selection, link through the CLI, bad input.

The learning check (a few steps beat step 0 on held-out pairs) is in test_learning.py with the others.
"""

import json

import numpy as np
import pytest
import torch

from conftest import interrupt_at_call, jsonl, parse_jsonl, run
from ontolink.reranking.base import load_reranker
from ontolink.reranking.architectures.res import ResReranker
from ontolink.ontology import load_ontology


def pairs_file(ontology, path, count=20):
    entities = [entity for entity in ontology if entity.definition][:count]
    path.write_text(jsonl([{"id": f"p{n}", "mention": entity.name.lower(), "context_left": "The patient had ",
                            "entity_id": entity.id} for n, entity in enumerate(entities)]))
    return entities


@pytest.fixture(scope="module")
def frozen_res(small_ontology_path, tfidf_index, tmp_path_factory):
    """A frozen-reading ReS reranker trained through the CLI over the TF-IDF retriever's top 6."""
    work = tmp_path_factory.mktemp("res")
    entities = pairs_file(load_ontology(small_ontology_path), work / "pairs.jsonl")
    model = work / "res"
    result = run("train", "reranker", "--ontology", small_ontology_path, "--index", tfidf_index, "-i",
                 work / "pairs.jsonl", "--architecture", "res", "--reading", "frozen", "--top-k", 6, "--epochs", 3,
                 "--batch-size", 4, "--select-width", 32, "--select-heads", 2, "--device", "cpu", "--holdout-share", 0, model)
    assert result.exit_code == 0, result.stderr
    assert "trained ReS reranker (frozen reading, 6 candidates) on 20 of 20 pairs" in result.stderr
    return model, entities


def linked_slice(tfidf_index, entities, top_k=6):
    mentions = jsonl([{"id": f"m{n}", "mention": entity.name, "context_left": "The patient had "}
                      for n, entity in enumerate(entities)])
    # the index's own order and scores, which the reranker keeps as retriever_score
    return mentions, parse_jsonl(run("link", "--index", tfidf_index, "--no-ranker", "--top-k", top_k,
                                     input=mentions).stdout)


def test_link_with_a_res_reranker_through_the_cli(frozen_res, tfidf_index):
    model, entities = frozen_res
    manifest = json.loads((model / "manifest.json").read_text())
    assert (manifest["artifact"], manifest["architecture"], manifest["reading"]["kind"]) == ("reranker", "res",
                                                                                             "frozen")
    assert manifest["ontology"]["sha256"] and (model / "selector.safetensors").exists()
    assert not (model.parent / "res.checkpoint").exists()
    mentions, retrieved = linked_slice(tfidf_index, entities)
    result = run("link", "--index", tfidf_index, "--reranker", model, "--top-k", 6, "--device", "cpu",
                 input=mentions)
    assert result.exit_code == 0, result.stderr
    reranked = parse_jsonl(result.stdout)
    for before, after in zip(retrieved, reranked):
        kept = {candidate["id"]: candidate["retriever_score"] for candidate in after["candidates"]}
        assert kept == {candidate["id"]: candidate["score"] for candidate in before["candidates"]}
        scores = [candidate["score"] for candidate in after["candidates"]]
        assert scores == sorted(scores, reverse=True)
    assert any([c["id"] for c in after["candidates"]] != [c["id"] for c in before["candidates"]]
               for before, after in zip(retrieved, reranked))
    # the same scores whatever the batch: a record is scored with its own candidates only
    again = run("link", "--index", tfidf_index, "--reranker", model, "--top-k", 6, "--batch-size", 5,
                "--device", "cpu", input=mentions)
    assert parse_jsonl(again.stdout) == reranked


def test_the_selecting_stage_attends_across_candidates(frozen_res, tfidf_index, small_ontology_path):
    model, entities = frozen_res
    reranker = load_reranker(model, device="cpu")
    assert isinstance(reranker, ResReranker)
    ontology = load_ontology(small_ontology_path)
    _, records = linked_slice(tfidf_index, entities)
    definition = lambda entity_id: ontology[entity_id].definition  # noqa: E731
    scores = reranker.candidate_scores(records, definition)
    record = records[0]
    first, others = record["candidates"][0], record["candidates"][1:]
    # a candidate's score depends on the other candidates: other company, another score for the same pair
    replaced = {**record, "candidates": [first] + records[1]["candidates"][1:]}
    assert abs(reranker.candidate_scores([replaced], definition)[0][0] - scores[0][0]) > 1e-4
    # ... and on their order: the same pair, the others' ranks permuted, another score
    permuted = {**record, "candidates": [first] + others[::-1]}
    assert abs(reranker.candidate_scores([permuted], definition)[0][0] - scores[0][0]) > 1e-4
    # removing the selecting stage (each candidate scored alone) changes the ranking
    alone = reranker.candidate_scores(records, definition, attend=False)
    assert any(list(np.argsort(-a)) != list(np.argsort(-b)) for a, b in zip(alone, scores))


def test_selector_scores_depend_on_the_other_candidates():
    """The bare module, seeded: a candidate's score moves when another candidate's vector or rank changes, and
    only the ranks matter, not the order the candidates are presented in."""
    from ontolink.reranking.read_and_select import new_selector

    torch.manual_seed(0)
    selector = new_selector({"input": 8, "width": 16, "layers": 1, "heads": 2, "dropout": 0.0, "ranks": 4}).eval()
    reading = torch.randn(1, 4, 8)
    changed = reading.clone()
    changed[0, 3] += 1.0
    swapped = torch.tensor([[0, 1, 3, 2]])  # the last two candidates trade ranks
    with torch.no_grad():
        before, after = selector(reading), selector(changed)
        alone_before, alone_after = selector(reading, attend=False), selector(changed, attend=False)
        reranked, alone_reranked = selector(reading, ranks=swapped), selector(reading, ranks=swapped, attend=False)
        presented = selector(reading[:, [3, 1, 0, 2]], ranks=torch.tensor([[3, 1, 0, 2]]))
        past_the_trained_k = selector(torch.randn(1, 6, 8))
    assert not torch.allclose(before[0, :3], after[0, :3])
    assert torch.allclose(alone_before[0, :3], alone_after[0, :3])  # without selection: independent
    assert not torch.allclose(before[0, :2], reranked[0, :2])  # candidates 0 and 1 kept their ranks
    assert torch.allclose(alone_before[0, :2], alone_reranked[0, :2])
    assert torch.allclose(presented[0], before[0, [3, 1, 0, 2]], atol=1e-6)
    assert past_the_trained_k.shape == (1, 6)  # ranks past the trained K share the last one's embedding


def test_a_res_checkpoint_resumes_to_the_same_weights(small_ontology_path, tfidf_index, tmp_path):
    from safetensors.torch import load_file

    import ontolink.reranking.train_read_and_select as module
    from ontolink.indexes.artifact import load_index
    from ontolink.core.io import read_records
    from ontolink.core.records import pair_validator

    ontology = load_ontology(small_ontology_path)
    pairs_file(ontology, tmp_path / "pairs.jsonl")
    pairs = list(read_records(tmp_path / "pairs.jsonl", validate=pair_validator(ontology)))
    index = load_index(tfidf_index)
    options = {"reading": "frozen", "top_k": 6, "epochs": 2, "batch_size": 4, "width": 16, "heads": 2, "layers": 1,
               "device": "cpu", "seed": 3, "holdout_share": 0}
    module.train_res_reranker(pairs, ontology, index, tmp_path / "straight", **options)
    with pytest.MonkeyPatch.context() as patch:
        interrupt_at_call(patch, module, "frozen_features", 7)  # 5 batches an epoch: epoch 2's second
        with pytest.raises(KeyboardInterrupt):
            module.train_res_reranker(pairs, ontology, index, tmp_path / "resumed", **options)
    assert (tmp_path / "resumed.checkpoint" / "manifest.json").exists() and not (tmp_path / "resumed").exists()
    module.train_res_reranker(pairs, ontology, index, tmp_path / "resumed", resume=True, **options)
    straight = load_file(str(tmp_path / "straight" / "selector.safetensors"))
    resumed = load_file(str(tmp_path / "resumed" / "selector.safetensors"))
    assert all(torch.equal(straight[name], resumed[name]) for name in straight)


def test_bad_res_input_gets_one_line_errors(frozen_res, small_ontology_path, tfidf_index, tmp_path):
    model, _ = frozen_res
    pairs = tmp_path / "pairs.jsonl"
    pairs_file(load_ontology(small_ontology_path), pairs, count=2)
    result = run("train", "reranker", "--ontology", small_ontology_path, "--index", tfidf_index, "-i", pairs,
                 "--architecture", "res", "--select-width", 30, "--select-heads", 4, tmp_path / "bad")
    assert result.exit_code == 2 and "--select-width 30 is not a multiple of --select-heads 4" in result.stderr
    assert "Traceback" not in result.stderr
    # a damaged model directory: the selector's weights missing, then an architecture this version lacks
    broken = tmp_path / "broken"
    broken.mkdir()
    manifest = json.loads((model / "manifest.json").read_text())
    (broken / "manifest.json").write_text(json.dumps(manifest))
    result = run("link", "--index", tfidf_index, "--reranker", broken, input='{"id": "m", "mention": "seizure"}\n')
    assert result.exit_code == 2 and "selector.safetensors is missing" in result.stderr
    (broken / "selector.safetensors").write_bytes(b"not a safetensors file")
    result = run("link", "--index", tfidf_index, "--reranker", broken, input='{"id": "m", "mention": "seizure"}\n')
    assert result.exit_code == 2 and "selector.safetensors" in result.stderr and "Traceback" not in result.stderr
    (broken / "manifest.json").write_text(json.dumps({**manifest, "reading": {"kind": "telepathy"}}))
    result = run("link", "--index", tfidf_index, "--reranker", broken, input='{"id": "m", "mention": "seizure"}\n')
    assert result.exit_code == 2 and "reading block is damaged or unknown" in result.stderr
    # a version-1 model (its selecting stage saw no ranks) is refused with a retrain message
    (broken / "manifest.json").write_text(json.dumps({key: value for key, value in manifest.items()
                                                      if key != "version"}))
    result = run("link", "--index", tfidf_index, "--reranker", broken, input='{"id": "m", "mention": "seizure"}\n')
    assert result.exit_code == 2 and "ReS reranker of version 1" in result.stderr and "retrain it" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    (broken / "manifest.json").write_text(json.dumps({**manifest, "architecture": "future"}))
    result = run("link", "--index", tfidf_index, "--reranker", broken, input='{"id": "m", "mention": "seizure"}\n')
    assert result.exit_code == 2 and "architecture 'future'" in result.stderr


def test_a_missing_gold_goes_in_at_the_drawn_rank(small_ontology_path):
    """The injected gold takes the given rank and that rank's retriever score; the last candidate drops out (so
    the gold's rank is the seed's draw, not always the last)."""
    from ontolink.reranking.train_read_and_select import candidate_group

    ontology = load_ontology(small_ontology_path)
    entities = list(ontology)[:5]
    retrieved = [{"id": entity.id, "name": entity.name, "score": 0.9 - n / 10} for n, entity in enumerate(entities[:4])]
    gold = entities[4].id
    for rank in range(4):
        group, label = candidate_group(retrieved, gold, ontology, rank)
        assert label == rank and group[rank]["id"] == gold and len(group) == 4
        assert [c["id"] for c in group if c["id"] != gold] == [c["id"] for c in retrieved[:3]]
        assert group[rank]["score"] == retrieved[rank]["score"]
        assert [c["score"] for c in group] == sorted((c["score"] for c in group), reverse=True)
    assert candidate_group(retrieved, entities[2].id, ontology, 0) == (retrieved, 2)  # present: left alone


def test_a_res_reranker_moves_between_gpu_and_cpu_machines(frozen_res, tfidf_index, tmp_path):
    """A frozen reader's manifest records the precision of the machine that trained it: fp16 (torch) from a GPU,
    int8 from a CPU. The loader takes it through the index loaders' resolver, so a GPU-made reranker links on a
    CPU (in fp32) and a CPU-made one on a GPU (in fp16, checked through the resolver: no GPU here)."""
    import shutil

    from ontolink.core.device import portable_precision

    model, entities = frozen_res
    built_on_cpu = json.loads((model / "manifest.json").read_text())["reading"]["encoder"]["precision"]
    assert built_on_cpu == "int8" and portable_precision(built_on_cpu, "cuda") == "fp16"
    assert portable_precision(built_on_cpu, "cpu") == "int8"
    gpu_made = tmp_path / "res-gpu"
    shutil.copytree(model, gpu_made)
    manifest = json.loads((gpu_made / "manifest.json").read_text())
    manifest["reading"]["encoder"].update(precision="fp16", runtime="torch")  # what `--device cuda` records
    (gpu_made / "manifest.json").write_text(json.dumps(manifest))
    reranker = load_reranker(gpu_made, device="cpu")
    assert reranker.reader.encoder.precision == "fp32"
    mentions, retrieved = linked_slice(tfidf_index, entities)
    result = run("link", "--index", tfidf_index, "--reranker", gpu_made, "--top-k", 6, "--device", "cpu",
                 input=mentions)
    assert result.exit_code == 0, result.stderr
    reranked = parse_jsonl(result.stdout)
    assert [sorted(c["id"] for c in record["candidates"]) for record in reranked] == [
        sorted(c["id"] for c in record["candidates"]) for record in retrieved]
