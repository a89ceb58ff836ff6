"""The feature ranker on GSC+, fitted with no GSC+ label: R@1 / R@64 / MRR by HO / LO / NO beside the frozen
index, an ablation (each feature group removed in turn, and each kind of training query alone), its fitting
data and time, the same ranker unchanged on LPT, and link speed with and without it.

    python benchmarks/bench_ranker.py [--workdir DIR] [--synonym-queries 2000] [--hold-out 0.5] [--seed 0]

Training queries: HPO synonyms searched with themselves held out of the index, and `make-pairs` (names and
synonyms) over the unlabeled NCBI-disease corpus, half of them searched with their matched name held out.
GSC+ gold is read only to score. The LPT test file in shared data is the first 42 records of the real one
(SOURCE.md: partial): its row is a check that the ranker does not carry HPO habits over, not a benchmark.
"""

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np
from tabulate import tabulate

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

DEFAULT = ("dense", "lexical", "prior", "abbreviation", "depth", "kind")


def linked_by(features_found, records, entity_ids, scorer=None):
    """Linked records from per-record (entities, scores, matrix), ordered by ``scorer`` (None: retrieval)."""
    for record, (entities, _, matrix) in zip(records, features_found):
        order = np.argsort(-scorer(matrix), kind="stable") if scorer is not None and len(entities) else \
            np.arange(len(entities))
        yield {**record, "candidates": [{"id": entity_ids[int(entities[slot])]} for slot in order.tolist()]}


def metrics_row(label, linked, ontology):
    from toolbox.steps.eval import file_metrics, score_file

    metrics = file_metrics(*score_file(list(linked), ontology=ontology))
    row = [label]
    for group in ("all", "HO", "LO", "NO"):
        row += [f"{metrics[group]['R@1']:.4f}", f"{metrics[group]['MRR']:.4f}"]
    return row + [f"{metrics['all']['R@64']:.4f}"]


def scorer_of(weights, keep):
    return lambda matrix: ((matrix[:, keep] - weights["mean"]) / weights["scale"]) @ weights["coefficients"]


def main():
    from toolbox.artifacts.index import load_index
    from toolbox.io import read_records
    from toolbox.ontology import load_ontology
    from toolbox.ranking.features import CandidateFeatures, feature_columns
    from toolbox.ranking.fit import fit_conditional_logit, ranker_queries, training_matrix
    from toolbox.ranking.priors import load_prior
    from toolbox.steps.index import build_index
    from toolbox.steps.link import link_mentions
    from toolbox.steps.make_pairs import build_matcher, make_pairs

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", default="/tmp/ontolink-bench-ranker")
    parser.add_argument("--synonym-queries", type=int, default=2000)
    parser.add_argument("--hold-out", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)

    hpo = load_ontology("hpo")
    if not (work / "hpo" / "manifest.json").exists():
        build_index(hpo, work / "hpo", device="cpu")
    index = load_index(work / "hpo", device="cpu")
    corpus = list(read_records(str(SHARED / "ncbi_disease" / "unlabeled_mentions.jsonl")))
    pairs = list(make_pairs(corpus, build_matcher(hpo, [], sources=("name", "synonym"))))
    queries, described = ranker_queries(index, pairs, args.synonym_queries, args.hold_out, args.seed)
    synonym_count = described["synonym_queries"]
    gscplus = list(read_records(str(SHARED / "gscplus" / "mentions.jsonl")))
    prior = load_prior("hpo")

    # features of every group once (and once without abbreviations, which changes the candidates themselves)
    every = [*DEFAULT, "context"]
    computed = {}
    for label, groups in (("all", every), ("no-abbreviation", [g for g in every if g != "abbreviation"])):
        features = CandidateFeatures(index, groups, prior=prior)
        started = time.perf_counter()
        matrix, labels, query_of, skipped = training_matrix(features, queries)
        seconds = time.perf_counter() - started
        computed[label] = (features.columns, matrix, labels, query_of, features(gscplus), seconds, skipped)

    rows, fit_rows = [], []
    plain = link_mentions(gscplus, index)
    rows.append(metrics_row("frozen index (link, no ranker)", plain, hpo))
    columns, _, _, _, found, _, _ = computed["all"]
    rows.append(metrics_row("+ abbreviation long forms, retrieval order", linked_by(found, gscplus, index.entity_ids), hpo))

    def fit_and_score(label, groups, source="all", queries_from=None):
        key = "all" if "abbreviation" in groups else "no-abbreviation"
        all_columns, matrix, labels, query_of, found, seconds, skipped = computed[key]
        keep = [all_columns.index(column) for column in feature_columns(groups)]
        chosen = np.ones(len(labels), dtype=bool)
        if queries_from == "synonyms":
            chosen = query_of < synonym_count
        elif queries_from == "pairs":
            chosen = query_of >= synonym_count
        started = time.perf_counter()
        weights = fit_conditional_logit(matrix[chosen][:, keep], labels[chosen], query_of[chosen])
        fit_rows.append([label, len(np.unique(query_of[chosen])), int(chosen.sum()), f"{seconds:.0f}",
                         f"{time.perf_counter() - started:.1f}"])
        rows.append(metrics_row(label, linked_by(found, gscplus, index.entity_ids, scorer_of(weights, keep)), hpo))
        return weights, keep

    default_weights, default_keep = fit_and_score("ranker (default features)", DEFAULT)
    fit_and_score("ranker + context", every)
    for group in DEFAULT[1:]:
        fit_and_score(f"ranker - {group}", [g for g in DEFAULT if g != group])
    fit_and_score("ranker, synonym queries only", DEFAULT, queries_from="synonyms")
    fit_and_score("ranker, pair queries only", DEFAULT, queries_from="pairs")

    # not a result: the same default features fitted on GSC+ gold itself and scored there, to see how far a
    # linear combination of them can go at all
    keep = [columns.index(column) for column in feature_columns(DEFAULT)]
    gold_rows = [(matrix[:, keep], np.array([index.entity_ids[int(e)] in set(record["gold"]) for e in entities]))
                 for record, (entities, _, matrix) in zip(gscplus, found)]
    gold_rows = [(matrix, hits) for matrix, hits in gold_rows if hits.sum() == 1]
    ceiling = fit_conditional_logit(np.concatenate([m for m, _ in gold_rows]),
                                    np.concatenate([h for _, h in gold_rows]).astype(np.int8),
                                    np.concatenate([np.full(len(h), n) for n, (_, h) in enumerate(gold_rows)]))
    rows.append(metrics_row("(fitted on GSC+ gold itself: not a result)", linked_by(found, gscplus, index.entity_ids,
                                                                            scorer_of(ceiling, keep)), hpo))

    print(f"GSC+ ({len(gscplus)} mentions, HPO); fitted on {described['synonym_queries']} synonym queries + "
          f"{described['pair_queries']} NCBI-disease pair queries ({described['pairs_held_out']} with the name "
          f"held out), seed {args.seed}; no GSC+ label used in fitting")
    print(tabulate(rows, headers=["system", "R@1", "MRR", "HO R@1", "HO MRR", "LO R@1", "LO MRR", "NO R@1",
                                  "NO MRR", "R@64"]))
    print()
    print(tabulate(fit_rows, headers=["fit", "queries with answer", "candidate rows", "feature s (shared)",
                                      "fit s"]))
    print("default weights (standardised):",
          {column: round(float(w), 3) for column, w in zip(feature_columns(DEFAULT), default_weights["coefficients"])})

    # LPT: the HPO-fitted weights, unchanged, on another ontology (no prior there)
    from bench_pseudo_pairs import convert_scizsel_mentions

    lpt_kb = SHARED / "sci-zsel" / "lpt_kb.json"
    lpt = load_ontology(str(lpt_kb))
    if not (work / "lpt" / "manifest.json").exists():
        build_index(lpt, work / "lpt", device="cpu")
    lpt_index = load_index(work / "lpt", device="cpu")
    convert_scizsel_mentions(SHARED / "sci-zsel" / "lpt_test_grag.PARTIAL_first42.json", work / "lpt_mentions.jsonl")
    lpt_mentions = list(read_records(str(work / "lpt_mentions.jsonl")))
    lpt_found = CandidateFeatures(lpt_index, list(DEFAULT), prior=None)(lpt_mentions)
    lpt_rows = [metrics_row("frozen index", link_mentions(lpt_mentions, lpt_index), lpt),
                metrics_row("HPO-fitted ranker, unchanged", linked_by(lpt_found, lpt_mentions, lpt_index.entity_ids,
                                                                     scorer_of(default_weights, default_keep)), lpt)]
    print()
    print(f"LPT ({len(lpt_mentions)} test mentions: the partial file, a check, not a benchmark)")
    print(tabulate(lpt_rows, headers=["system", "R@1", "MRR", "HO R@1", "HO MRR", "LO R@1", "LO MRR", "NO R@1",
                                      "NO MRR", "R@64"]))

    # speed: link GSC+ + the NCBI corpus with and without the ranker, alternating, in this process
    from toolbox.artifacts.ranker import Ranker, save_ranker

    save_ranker(work / "ranker", default_weights, {"features": {"groups": list(DEFAULT),
                                                                "columns": feature_columns(DEFAULT)}})
    started = time.perf_counter()
    ranker = Ranker(work / "ranker").bind(index, prior="hpo")
    bind_seconds = time.perf_counter() - started
    mentions = gscplus + corpus
    timings = {"retrieval": [], "retrieval + ranker": []}
    for _ in range(2):
        for label in timings:
            options = {"ranker": ranker, "prior": "hpo"} if "ranker" in label else {}
            ranker.features.linker.row_cache.clear()  # as in a new process: no mention searched yet
            started, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
            count = sum(1 for _ in link_mentions(mentions, index, **options))
            after = resource.getrusage(resource.RUSAGE_SELF)
            timings[label].append((time.perf_counter() - started, after.ru_utime + after.ru_stime
                                   - cpu.ru_utime - cpu.ru_stime, count))
    print()
    speed_rows = []
    for label, runs in timings.items():
        wall = min(run[0] for run in runs)
        cpu = min(run[1] for run in runs)
        speed_rows.append([label, runs[0][2], f"{wall:.1f}", f"{cpu:.1f}", f"{runs[0][2] / wall:.0f}"])
    ratio_wall = float(speed_rows[1][2]) / float(speed_rows[0][2])
    ratio_cpu = float(speed_rows[1][3]) / float(speed_rows[0][3])
    print(tabulate(speed_rows, headers=["link", "mentions", "wall s (best of 2)", "CPU s", "mentions/s"]))
    print(f"ranker / retrieval: {ratio_wall:.2f}x wall, {ratio_cpu:.2f}x CPU; plus {bind_seconds:.1f} s once per "
          "run to bind the ranker to the index (TF-IDF of the names, prior, name maps)")


if __name__ == "__main__":
    main()
