"""Quality gates on GSC+ (1,151 mentions) against the embedded HPO: R@1 and R@64 within ±0.005 of the values
measured on the current code. A change that moves either by more fails here; when a change is meant to
(a new default encoder, say), remeasure and update EXPECTED in the same commit, saying why.
"""

import pytest

from conftest import shared_path
from ontolink.indexes.artifact import load_index
from ontolink.core.io import read_records
from ontolink.evaluation.evaluate import file_metrics, score_file
from ontolink.indexes.build import build_index
from ontolink.linking.link import link_mentions

pytestmark = pytest.mark.slow

TOLERANCE = 0.005
# (method, --precision): (R@1, R@64), measured with this test's own code on a 2-core CPU.
EXPECTED = {
    # the default: all-MiniLM-L6-v2 in ONNX Runtime, int8 per token on CPU (PyTorch's per-batch int8, the
    # default before it, gave 0.7472 / 0.9618)
    ("dense", "auto"): (0.7472, 0.9644),
    ("dense", "fp32"): (0.7454, 0.9644),  # the exact model
    # char 3-gram TF-IDF; 0.6794 / 0.9279 before `link` put first a candidate whose name is the mention once
    # folded (plurals, spellings) as annotate folds names: TF-IDF often ranked a longer name above the exact one
    ("tfidf", "auto"): (0.7263, 0.9279),
}


@pytest.mark.parametrize("method, precision", list(EXPECTED))
def test_gscplus_recall(hpo, tmp_path, method, precision):
    mentions = list(read_records(shared_path("gscplus", "mentions.jsonl")))
    build_index(hpo, tmp_path / method, method=method, device="cpu", precision=precision)
    linked = link_mentions(mentions, load_index(tmp_path / method, ontology=hpo, device="cpu"), top_k=64)
    metrics = file_metrics(*score_file(linked, ontology=hpo))
    assert metrics["all"]["n"] == 1151
    assert sum(metrics[group]["n"] for group in ("HO", "LO", "NO")) == 1151
    measured = (metrics["all"]["R@1"], metrics["all"]["R@64"])
    assert measured == pytest.approx(EXPECTED[method, precision], abs=TOLERANCE), metrics["all"]


# The feature ranker (toolbox/ontolink/ranking) with its default features, fitted with no GSC+ label: HPO synonym queries
# and make-pairs over the unlabeled NCBI-disease corpus (benchmarks/bench_ranker.py prints the full table).
RANKER_EXPECTED = (0.7585, 0.9687)  # frozen: 0.7472 / 0.9644
# R@1 over the frozen index it reorders: a ranker that stops learning fails (measured +0.007, 0.754 against 0.747,
# since the ranker's TF-IDF tables are computed in numpy by `index`)
RANKER_GAIN = 0.006


def test_gscplus_ranker(hpo, tmp_path):
    from ontolink.ranking.ranker import Ranker
    from ontolink.ranking.train import ranker_queries, train_ranker
    from ontolink.aliases.pairs import build_matcher, make_pairs

    mentions = list(read_records(shared_path("gscplus", "mentions.jsonl")))
    corpus = read_records(shared_path("ncbi_disease", "unlabeled_mentions.jsonl"))
    build_index(hpo, tmp_path / "dense", method="dense", device="cpu")
    loaded = load_index(tmp_path / "dense", ontology=hpo, device="cpu")
    pairs = list(make_pairs(corpus, build_matcher(hpo, [], sources=("name", "synonym"))))
    queries, described = ranker_queries(loaded, pairs, synonym_count=2000, hold_out=0.5, seed=0)
    train_ranker(loaded, tmp_path / "ranker", queries, described=described, holdout_share=0)  # fitted on all, as measured
    linked = link_mentions(mentions, loaded, ranker=Ranker(tmp_path / "ranker"), top_k=64)
    metrics = file_metrics(*score_file(linked, ontology=hpo))["all"]
    assert (metrics["R@1"], metrics["R@64"]) == pytest.approx(RANKER_EXPECTED, abs=TOLERANCE), metrics
    assert metrics["R@1"] >= EXPECTED["dense", "auto"][0] + RANKER_GAIN
    assert metrics["R@64"] >= EXPECTED["dense", "auto"][1]


def test_the_int8_scan_finds_every_exact_top_name_on_gscplus(hpo, tmp_path):
    """The flat search's int8 scan plus exact rescoring gives the exact top names of every GSC+ mention at
    the depth `link` searches (with SCAN_MARGIN 0 it fails)."""
    import numpy as np

    from ontolink.indexes.flat_search import exact_search, flat_search
    from ontolink.linking.linker import Linker

    build_index(hpo, tmp_path / "dense", method="dense", device="cpu")
    loaded = load_index(tmp_path / "dense", ontology=hpo, device="cpu")
    name_index = loaded.name_index
    texts = sorted({record["mention"].strip() for record in read_records(shared_path("gscplus", "mentions.jsonl"))})
    queries = name_index.encoder.encode(texts)
    depth = Linker(loaded, top_k=64).names_to_search
    exact_scores, exact_rows = exact_search(name_index._flat_vectors(), queries, depth)
    scores, rows = flat_search(name_index._flat_vectors(), queries, depth, name_index._name_scan())
    assert name_index._name_scan() is not None
    assert all(set(found) == set(exact) for found, exact in zip(rows, exact_rows))
    assert np.abs(scores - exact_scores).max() <= 1e-5
