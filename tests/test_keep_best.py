"""Trainers never silently lose: the held-out split by entity, "not improved" when nothing beats the start,
too few pairs refused (exit 2) unless --force, and one warning where such a model is used."""

import json

import pytest

from conftest import jsonl, parse_jsonl, run
from ontolink.core.errors import InputError
from ontolink.ontology import load_ontology
from ontolink.training.loop import holdout_split


def test_the_held_out_split_never_shares_an_entity_with_training():
    # pairs naming one entity, and labeled mentions naming two (a held one takes its item to the held side)
    items = [{"id": f"p{n}", "golds": [f"E:{n % 9}"] + ([f"E:{(n + 4) % 9}"] if n % 15 == 0 else [])}
             for n in range(60)]
    splits = {seed: holdout_split(items, lambda item: item["golds"], 0.3, seed) for seed in range(6)}
    for seed, (training, held) in splits.items():
        trained_entities = {gold for item in training for gold in item["golds"]}
        held_entities = {gold for item in held for gold in item["golds"]}
        assert held and training and not trained_entities & held_entities
        assert {item["id"] for item in training} | {item["id"] for item in held} == {item["id"] for item in items}
        assert holdout_split(items[::-1], lambda item: item["golds"], 0.3, seed)[1] == held[::-1]  # order-free
    assert len({tuple(item["id"] for item in held) for _, held in splits.values()}) > 1  # the seed draws it
    assert holdout_split(items, lambda item: item["golds"], 0, 0) == (items, [])
    one_entity = [{"id": f"q{n}", "golds": ["E:1"]} for n in range(20)]
    with pytest.raises(InputError, match="leaves no training pair"):
        holdout_split(one_entity, lambda item: item["golds"], 0.9, 0)
    with pytest.raises(InputError, match="leaves no held-out pair"):
        holdout_split(items, lambda item: item["golds"], 0.01, 0)


def single_name_pairs(ontology, count):
    """Pairs whose mention is the only name of its entity: the frozen encoder already puts each gold first."""
    entities = [entity for entity in ontology if len(ontology.names(entity)) == 1][:count]
    assert len(entities) == count
    return [{"id": f"p{n}", "mention": entity.name, "entity_id": entity.id} for n, entity in enumerate(entities)]


@pytest.mark.slow  # trains, scores all names of the slice twice, indexes: minutes on a busy 2-core machine
def test_a_retriever_that_cannot_improve_says_so_and_index_warns_once(small_ontology_path, tmp_path):
    """Every held-out gold is already first at the start (R@1 1.0): no epoch can beat it, so the run says
    NOT IMPROVED, the manifest "improved": false with the frozen encoder kept, and `index --model` warns once."""
    ontology = load_ontology(small_ontology_path)
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(jsonl(single_name_pairs(ontology, 30)))
    model = tmp_path / "retriever"
    result = run("train", "retriever", "--ontology", small_ontology_path, "-i", pairs, "--max-length", 32,
                 "--batch-size", 8, "--device", "cpu", model)
    assert result.exit_code == 0, result.stderr
    summary = result.stderr.strip().splitlines()[-1]
    assert "held-out R@1 1.000 from the frozen encoder" in summary
    assert "NOT IMPROVED, nothing beat the frozen encoder" in summary
    manifest = json.loads((model / "manifest.json").read_text())
    assert manifest["improved"] is False and manifest["kept_epoch"] == 0 and manifest["start_R@1"] == 1.0
    assert manifest["held_out"]["pairs"] == 6 and manifest["training_pairs"] == 24

    result = run("index", "--ontology", small_ontology_path, "--model", model, "--device", "cpu", "--no-cache",
                 tmp_path / "idx")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.count("did not improve on its start") == 1
    assert "held-out R@1 1.000 at its start, no epoch higher" in result.stderr


def too_few(small_ontology_path, tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(jsonl(single_name_pairs(load_ontology(small_ontology_path), 10)))
    return tmp_path / "retriever", ["train", "retriever", "--ontology", small_ontology_path, "-i", pairs,
                                    "--max-length", 32, "--device", "cpu", tmp_path / "retriever"]


def test_too_few_pairs_exit_2_before_any_model_is_loaded(small_ontology_path, tmp_path):
    model, options = too_few(small_ontology_path, tmp_path)
    result = run(*options)
    assert result.exit_code == 2, result.stderr
    assert "8 training pairs (after holding out 2) are fewer than one real optimiser step needs (16)" in result.stderr
    assert "--force" in result.stderr and "Traceback" not in result.output and not model.exists()


@pytest.mark.slow  # one training step and two scorings of the slice's names
def test_too_few_pairs_with_force_write_a_model_marked_not_improved(small_ontology_path, tmp_path):
    model, options = too_few(small_ontology_path, tmp_path)
    result = run(*options, "--force")
    assert result.exit_code == 0, result.stderr
    manifest = json.loads((model / "manifest.json").read_text())
    assert manifest["improved"] is False and "fewer than one real optimiser step" in manifest["not_improved_because"]
    assert "NOT IMPROVED" in result.stderr.strip().splitlines()[-1]


@pytest.mark.slow  # the frozen bi-encoder reads 30 x 6 candidates; two epochs; two links
def test_a_reranker_that_loses_to_the_index_order_is_not_applied_and_link_warns_once(
        small_ontology_path, tfidf_index, tmp_path):
    """Mentions that are their entity's only name: TF-IDF already ranks every gold first, so no reranker
    epoch beats the index's order; link then orders the candidates as it would without the reranker (the
    index's default ranker) and says so once."""
    ontology = load_ontology(small_ontology_path)
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(jsonl(single_name_pairs(ontology, 30)))
    model = tmp_path / "res"
    result = run("train", "reranker", "--ontology", small_ontology_path, "--index", tfidf_index, "-i", pairs,
                 "--architecture", "res", "--reading", "frozen", "--top-k", 6, "--epochs", 2, "--batch-size", 4,
                 "--select-width", 32, "--select-heads", 2, "--device", "cpu", model)
    assert result.exit_code == 0, result.stderr
    assert "held-out R@1 1.000 from the index order" in result.stderr
    assert "NOT IMPROVED, nothing beat the index order" in result.stderr
    manifest = json.loads((model / "manifest.json").read_text())
    assert manifest["improved"] is False and manifest["kept_epoch"] == 0
    assert [entry["epoch"] for entry in manifest["validation"]] == [0, 1, 2]

    mentions = jsonl([{"id": f"m{n}", "mention": entity.name.lower(), "context_left": "The patient had "}
                      for n, entity in enumerate(list(ontology)[:5])])
    without = run("link", "--index", tfidf_index, "--top-k", 6, input=mentions)
    reranked = run("link", "--index", tfidf_index, "--top-k", 6, "--reranker", model, input=mentions)
    assert reranked.exit_code == 0, reranked.stderr
    assert reranked.stderr.count("did not improve on its start") == 1
    assert "not applied, the candidates are ordered as without it" in reranked.stderr
    assert parse_jsonl(reranked.stdout) == parse_jsonl(without.stdout)


def test_a_rerankers_held_out_pair_is_searched_without_its_own_string_when_its_gold_has_another_name(
        small_ontology_path, tfidf_index):
    """make-pairs' pairs are exact matches: searched as they are, each gold comes first and no reranker could
    beat that start. Held out, a pair's own string leaves the index when its gold keeps another name."""
    from ontolink.indexes.artifact import load_index
    from ontolink.ontology import normalize
    from ontolink.reranking.held_out import held_out_candidates

    ontology = load_ontology(small_ontology_path)
    loaded = load_index(tfidf_index, device="cpu")
    several = [entity for entity in ontology if entity.synonyms][:5]
    single = [entity for entity in ontology if not entity.synonyms][:5]
    pairs = [{"id": f"p{n}", "mention": entity.name, "entity_id": entity.id}
             for n, entity in enumerate(several + single)]
    found = held_out_candidates(pairs, loaded, top_k=6)
    for pair, candidates in zip(pairs[:5], found[:5]):
        gold = [candidate for candidate in candidates if candidate["id"] == pair["entity_id"]]
        assert all(normalize(candidate["matched_name"]) != normalize(pair["mention"]) for candidate in candidates)
        assert not gold or gold[0]["matched_name"] != pair["mention"]  # found, if at all, by another name
    for pair, candidates in zip(pairs[5:], found[5:]):  # the only name stays: the gold is found by it
        assert candidates[0]["id"] == pair["entity_id"] and candidates[0]["matched_name"] == pair["mention"]
