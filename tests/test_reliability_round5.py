"""A hostile user's fifth round, on align, embed-kg, the cache and gzip outputs, one test each (each failed before
its fix)."""

import gzip
import json
import os

import pytest

from conftest import jsonl, run

TIED = [  # two pairs of one triple's entities whose triples read the same once verbalised
    {"pair_id": "a", "text": "Desmin mutations cause desminopathy.", "subject": {"id": "G:1", "name": "desmin"},
     "predicate": "Association", "object": {"id": "D:1", "name": "desminopathy"}},
    {"pair_id": "b", "text": "A second desmin gene variant was linked to desminopathy in one family.",
     "subject": {"id": "G:2", "name": "desmin"}, "predicate": "Association",
     "object": {"id": "D:1", "name": "desminopathy"}}]


def test_tied_candidates_rank_as_they_are_listed(tmp_path):
    """Both pairs had rank 1 (1 + those scoring strictly higher) while the list put one second: MRR 1.0."""
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(jsonl(TIED))
    result = run("align", "retrieve", "-q", "--baseline", "verbalized", "--retrieval", "d2t", "-i", pairs)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    for record in records:
        assert record["candidates"][0]["score"] == record["candidates"][1]["score"]  # the tie
        assert record["rank"] == [candidate["id"] for candidate in record["candidates"]].index(record["pair_id"]) + 1
    assert sorted(record["rank"] for record in records) == [1, 2]


def test_a_pair_missing_from_its_pool_counts_nothing_towards_mrr_and_hits(tmp_path):
    """A null rank (the pool held no true candidate) was scored as found at pool + 1: MRR 1/6 and a hit at 10 for a
    pool of 5."""
    from ontolink.evaluation.retrieval import retrieval_metrics

    records = [{"direction": "d2t", "rank": None, "pool": 5, "candidates": []},
               {"direction": "d2t", "rank": 1, "pool": 5, "candidates": []}]
    metrics = retrieval_metrics(records)["d2t"]
    assert (metrics["MRR"], metrics["Hits@1"], metrics["Hits@10"], metrics["median_rank"]) == (0.5, 0.5, 0.5, 3.5)


def test_a_gzip_output_is_the_same_bytes_each_run_and_names_itself(tmp_path):
    """Its header held the temporary's name ('.r.jsonl.gz.tmp-PID-...', which gunzip -N restores) and the time."""
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(jsonl(TIED))
    output = tmp_path / "r.jsonl.gz"
    written = []
    for _ in range(2):
        assert run("align", "retrieve", "-q", "--baseline", "verbalized", "-i", pairs, "-o", output).exit_code == 0
        written.append(output.read_bytes())
        os.utime(output, (0, 0))
    assert written[0] == written[1]
    header = written[0]
    assert header[4:8] == b"\0\0\0\0" and header[10:].startswith(b"r.jsonl\0")  # no time, the file's own name
    assert len(gzip.decompress(header).splitlines()) == 4


def test_a_file_where_the_cache_directory_goes_is_one_line_naming_the_variable(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    monkeypatch.setenv("ONTOLINK_CACHE_DIR", str(blocker))
    result = run("cache", "info")
    assert result.exit_code == 2 and "cannot be made (a file is in the way)" in result.stderr
    assert "ONTOLINK_CACHE_DIR" in result.stderr and "Traceback" not in result.output


def test_hard_negatives_never_copy_the_true_triple():
    """With one predicate, 'predicate' negatives were the positive itself and 'all' made one in four so, exit 0."""
    import torch

    from ontolink.core.errors import InputError
    from ontolink.kg.alignment.encoding import corrupt

    rows = torch.tensor([[5, 0, 7], [1, 0, 2]])
    mixed = corrupt(rows, "all", 8, 100, 1, torch.Generator().manual_seed(0))
    assert not (mixed == rows[:, None, :]).all(dim=2).any()
    with pytest.raises(InputError, match="--hard-negatives predicate replaces predicates, and there is 1"):
        corrupt(rows, "predicate", 4, 100, 1, torch.Generator().manual_seed(0))


def test_embed_kg_refuses_what_pykeen_cannot_train_in_one_line(tmp_path):
    """A one-entity graph was RuntimeError, --model-kwargs a model does not take TypeError: exit 1, no cause named."""
    pytest.importorskip("pykeen")
    loop = tmp_path / "loop.tsv"
    loop.write_text("a\tr\ta\n")
    result = run("embed-kg", "-q", "-i", loop, "--method", "TransE", "--epochs", 1, "--device", "cpu", tmp_path / "e1")
    assert result.exit_code == 2 and f"{loop}: the graph has 1 entity" in result.stderr
    pair = tmp_path / "pair.tsv"
    pair.write_text("a\tr\tb\n")
    result = run("embed-kg", "-q", "-i", pair, "--method", "TransE", "--epochs", 1, "--model-kwargs", '{"bogus": 1}',
                 "--device", "cpu", tmp_path / "e2")
    assert result.exit_code == 2 and "--model-kwargs: TransE refused them" in result.output


def test_embed_kg_of_an_ontology_says_the_terms_it_leaves_without_a_vector(tmp_path):
    pytest.importorskip("gensim")
    ontology = tmp_path / "onto.jsonl"
    ontology.write_text(jsonl([{"id": "X:1", "name": "root"}, {"id": "X:2", "name": "child", "parents": ["X:1"]},
                               {"id": "X:3", "name": "loner"}]))
    result = run("embed-kg", "--ontology", ontology, "--dim", 4, "--epochs", 1, "--walks", 2, tmp_path / "e")
    assert result.exit_code == 0, result.output
    assert "1 term of onto.jsonl with no parent and no child is in no is_a triple and gets no vector" in result.stderr
