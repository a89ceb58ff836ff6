"""The feature ranker on GSC+, fitted with no GSC+ label: R@1 / R@64 / MRR by HO / LO / NO beside the frozen
index, an ablation (each feature group removed in turn, each optional group added, and each kind of training
query alone), its fitting data and time, the same rankers unchanged on LPT, and link speed with and without it.

    python benchmarks/bench_ranker.py [--workdir DIR] [--synonym-queries 2000] [--hold-out 0.5] [--seed 0] [--trees]
    python benchmarks/bench_ranker.py --speed-only [--workdir DIR]    # again, the speed of the rankers saved there

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

from results_file import run_and_record  # noqa: E402  (beside this script)

DEFAULT = ("dense", "lexical", "prior", "abbreviation", "depth", "kind")


def linked_by(features_found, records, entity_ids, scorer=None):
    """Linked records from per-record (entities, scores, matrix), ordered by ``scorer`` (None: retrieval)."""
    for record, (entities, _, matrix, *_) in zip(records, features_found):
        order = np.argsort(-scorer(matrix), kind="stable") if scorer is not None and len(entities) else \
            np.arange(len(entities))
        yield {**record, "candidates": [{"id": entity_ids[int(entities[slot])]} for slot in order.tolist()]}


def metrics_row(label, linked, ontology):
    from ontolink.evaluation.evaluate import file_metrics, score_file

    metrics = file_metrics(*score_file(list(linked), ontology=ontology))
    row = [label]
    for group in ("all", "HO", "LO", "NO"):
        row += [f"{metrics[group]['R@1']:.4f}", f"{metrics[group]['MRR']:.4f}"]
    return row + [f"{metrics['all']['R@64']:.4f}"]


def scorer_of(weights, keep):
    return lambda matrix: ((matrix[:, keep] - weights["mean"]) / weights["scale"]) @ weights["coefficients"]


def cascade_scorer(gate, full, margin):
    """Scores by ``gate``, or by ``full`` where the gate's top-1 margin is at most ``margin`` (as Ranker.scored)."""
    from ontolink.ranking.margin import top_margin

    def score(matrix):
        scores = gate(matrix)
        return full(matrix) if top_margin(scores) <= margin else scores
    return score


def bridged_pairs(ontology):
    """Distinct (mention, entity) pairs of the BC5CDR and BioRED disease mentions whose MeSH concept
    `make-pairs --sources concept` bridges to ``ontology``."""
    from ontolink.formats import read_documents
    from ontolink.formats.convert import document_mentions
    from ontolink.aliases.pairs import build_matcher, concept_bridge, distinct_pairs, make_pairs

    raw = SHARED / "align" / "raw"
    mentions = []
    for paths, kind in ((sorted((raw / "bc5cdr").glob("*.PubTator.txt")), "Disease"),
                        (sorted((raw / "biored").glob("*.PubTator")), "DiseaseOrPhenotypicFeature")):
        for path in paths:
            mentions += document_mentions(read_documents(str(path), "pubtator"), types={kind},
                                          id_prefixes={"": "MESH:"})
    concepts = concept_bridge(mentions, ontology)
    return list(distinct_pairs(make_pairs(mentions, build_matcher(ontology, [], ("concept",)), concepts=concepts)))


def main():
    from ontolink.indexes.artifact import load_index
    from ontolink.core.io import read_records
    from ontolink.ontology import load_ontology
    from ontolink.ranking.features import CandidateFeatures
    from ontolink.ranking.fit import fit_conditional_logit, fit_gate, training_matrix
    from ontolink.ranking.groups import feature_columns
    from ontolink.ranking.groups.second_encoder import second_encoder_spec
    from ontolink.ranking.margin import top_margin
    from ontolink.ranking.queries import pair_queries
    from ontolink.ranking.priors import load_prior
    from ontolink.indexes.build import build_index
    from ontolink.linking.link import link_mentions
    from ontolink.aliases.pairs import build_matcher, make_pairs
    from ontolink.ranking.train import ranker_queries

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", default="/tmp/ontolink-bench-ranker")
    parser.add_argument("--synonym-queries", type=int, default=2000)
    parser.add_argument("--hold-out", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--trees", action="store_true",
                        help="also boosted trees over the ranker (minutes each): on the no-gold queries, and "
                             "cross-validated on GSC+ gold as a diagnostic")
    parser.add_argument("--second-encoder", default="auto:multilingual-e5-small", metavar="RUNTIME[:MODEL]",
                        help="the encoder of the second_encoder rows (as `train ranker --second-encoder`)")
    parser.add_argument("--repeats", type=int, default=3, help="link timings alternated this many times (best kept)")
    parser.add_argument("--speed-only", action="store_true",
                        help="only the link speed, with the rankers an earlier run saved in --workdir")
    args = parser.parse_args()
    second_encoder = second_encoder_spec(args.second_encoder)
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    if args.speed_only:
        gscplus = list(read_records(str(SHARED / "gscplus" / "mentions.jsonl")))
        corpus = list(read_records(str(SHARED / "ncbi_disease" / "unlabeled_mentions.jsonl")))
        link_speed(work, load_index(work / "hpo", device="cpu"), speed_corpora(gscplus, corpus), args.repeats)
        return

    hpo = load_ontology("hpo")
    if not (work / "hpo" / "manifest.json").exists():
        build_index(hpo, work / "hpo", device="cpu")
    index = load_index(work / "hpo", device="cpu")
    corpus = list(read_records(str(SHARED / "ncbi_disease" / "unlabeled_mentions.jsonl")))
    pairs = list(make_pairs(corpus, build_matcher(hpo, [], sources=("name", "synonym"))))
    queries, described = ranker_queries(index, pairs, args.synonym_queries, args.hold_out, args.seed)
    synonym_count = described["synonym_queries"]
    default_count = len(queries)
    # and queries from another corpus's labels: BC5CDR + BioRED disease mentions (MeSH), bridged to HPO by
    # `make-pairs --sources concept --distinct` (no GSC+ document among them)
    bridged = bridged_pairs(hpo)
    queries += pair_queries(bridged, index, args.hold_out, seed=args.seed)
    gscplus = list(read_records(str(SHARED / "gscplus" / "mentions.jsonl")))
    prior = load_prior("hpo")

    # features of every group once (and once without abbreviations, which changes the candidates themselves)
    optional = ("context", "overlap", "hierarchy", "second_encoder")
    every = [*DEFAULT, *optional]
    computed = {}
    for label, groups in (("all", every), ("no-abbreviation", [g for g in every if g != "abbreviation"])):
        features = CandidateFeatures(index, groups, prior=prior, second_encoder=second_encoder)
        started = time.perf_counter()
        matrix, labels, query_of, skipped = training_matrix(features, queries)
        seconds = time.perf_counter() - started
        computed[label] = (features.columns, matrix, labels, query_of, features(gscplus), seconds, skipped)

    rows, fit_rows = [], []
    plain = link_mentions(gscplus, index, top_k=64)  # the ranker's depth: R@64 is the same list's
    rows.append(metrics_row("frozen index (link, no ranker)", plain, hpo))
    columns, _, _, _, found, _, _ = computed["all"]
    rows.append(metrics_row("+ abbreviation long forms, retrieval order", linked_by(found, gscplus, index.entity_ids), hpo))

    def fit_and_score(label, groups, source="all", queries_from=None):
        key = "all" if "abbreviation" in groups else "no-abbreviation"
        all_columns, matrix, labels, query_of, found, seconds, skipped = computed[key]
        keep = [all_columns.index(column) for column in feature_columns(groups)]
        chosen = query_of < default_count
        if queries_from == "synonyms":
            chosen = query_of < synonym_count
        elif queries_from == "pairs":
            chosen = (query_of >= synonym_count) & chosen
        elif queries_from == "with bridged":
            chosen = np.ones(len(labels), dtype=bool)
        started = time.perf_counter()
        weights = fit_conditional_logit(matrix[chosen][:, keep], labels[chosen], query_of[chosen])
        fit_rows.append([label, len(np.unique(query_of[chosen])), int(chosen.sum()), f"{seconds:.0f}",
                         f"{time.perf_counter() - started:.1f}"])
        rows.append(metrics_row(label, linked_by(found, gscplus, index.entity_ids, scorer_of(weights, keep)), hpo))
        return weights, keep

    default_weights, default_keep = fit_and_score("ranker (default features)", DEFAULT)
    added = {}
    for group in optional:
        added[group] = fit_and_score(f"ranker + {group}", [*DEFAULT, group])
    added["overlap, hierarchy"] = fit_and_score("ranker + overlap + hierarchy", [*DEFAULT, "overlap", "hierarchy"])
    for group in DEFAULT[1:]:
        fit_and_score(f"ranker - {group}", [g for g in DEFAULT if g != group])
    fit_and_score("ranker, synonym queries only", DEFAULT, queries_from="synonyms")
    fit_and_score("ranker, pair queries only", DEFAULT, queries_from="pairs")
    with_bridged = fit_and_score(f"ranker + {len(bridged)} bridged BC5CDR/BioRED pairs", DEFAULT,
                                 queries_from="with bridged")
    # a second encoder (multilingual-e5-small) beside the retriever, with the bridged pairs, and with word overlap
    second = [*DEFAULT, "second_encoder"]
    added["second_encoder, bridged"] = fit_and_score("ranker + second_encoder + bridged pairs", second,
                                                     queries_from="with bridged")
    added["overlap, second_encoder, bridged"] = fit_and_score(
        "ranker + overlap + second_encoder + bridged pairs", [*DEFAULT, "overlap", "second_encoder"],
        queries_from="with bridged")
    # gated: the same ranker, e5 run only where a ranker without it is unsure (train ranker --gate-coverage);
    # 0.95 is the default, chosen before this was measured
    gated_groups = [*DEFAULT, "overlap", "second_encoder"]
    full_weights, full_keep = added["overlap, second_encoder, bridged"]
    gates = {}
    for coverage in (0.9, 0.95, 0.99):
        all_columns, matrix, labels, query_of, found, _, _ = computed["all"]
        gate_weights, gate_report = fit_gate(matrix[:, full_keep], labels, query_of, feature_columns(gated_groups),
                                             scorer_of(full_weights, full_keep)(matrix), [*DEFAULT, "overlap"],
                                             coverage, 0.01)
        gate_keep = [all_columns.index(column) for column in feature_columns([*DEFAULT, "overlap"])]
        gates[coverage] = (gate_weights, gate_report)
        refined = [top_margin(scorer_of(gate_weights, gate_keep)(matrix)) <= gate_report["margin"]
                   for _, _, matrix, *_ in found]
        scorer = cascade_scorer(scorer_of(gate_weights, gate_keep), scorer_of(full_weights, full_keep),
                                gate_report["margin"])
        rows.append(metrics_row(f"  gated at coverage {coverage} (e5 for {np.mean(refined):.0%} of GSC+ mentions, "
                                f"{gate_report['training_share_refined']:.0%} of training)",
                                linked_by(found, gscplus, index.entity_ids, scorer), hpo))

    # not results: how far these features go at all. (a) Boosted trees over the ranker, fitted on the same no-gold
    # queries (rounds chosen on a fifth of them). (b) The ranker, and with --trees the trees, fitted on GSC+ gold
    # itself, 5-fold by document, each mention scored by the fold that did not see its abstract.
    both = [*DEFAULT, "overlap", "hierarchy"]
    ceiling_rows = []
    gold_hits = [np.array([index.entity_ids[int(e)] in set(record["gold"]) for e in entities])
                 for record, (entities, *_) in zip(gscplus, found)]
    documents = sorted({record["doc_id"] for record in gscplus})
    np.random.default_rng(args.seed).shuffle(documents)
    fold_of = {document: number % 5 for number, document in enumerate(documents)}
    for label, groups in (("default features", DEFAULT), ("+ overlap + hierarchy", both)):
        keep = [columns.index(column) for column in feature_columns(groups)]
        kinds = [("linear", False)] + ([("linear + trees", True)] if args.trees else [])
        if args.trees:
            from ranker_trees import boosted_scorer

            _, matrix, labels, query_of, _, _, _ = computed["all"]
            scorer = boosted_scorer(matrix[:, keep], labels, query_of, keep, args.seed)
            ceiling_rows.append(metrics_row(f"ranker {label} + boosted trees (no gold)",
                                            linked_by(found, gscplus, index.entity_ids, scorer), hpo))
        for kind, trees in kinds:
            scorers = {}
            for fold in range(5):
                # the first gold hit of each mention whose abstract is not in this fold is its answer
                train = [n for n, record in enumerate(gscplus)
                         if fold_of[record["doc_id"]] != fold and gold_hits[n].any()]
                answers = [np.eye(len(gold_hits[n]), dtype=np.int8)[np.argmax(gold_hits[n])] for n in train]
                matrix = np.concatenate([found[n][2][:, keep] for n in train])
                query_of = np.concatenate([np.full(len(gold_hits[n]), n) for n in train])
                if trees:
                    scorers[fold] = boosted_scorer(matrix, np.concatenate(answers), query_of, keep, args.seed,
                                                   min_leaf=30)
                else:
                    scorers[fold] = scorer_of(fit_conditional_logit(matrix, np.concatenate(answers), query_of), keep)
            linked = [next(linked_by([found[n]], [record], index.entity_ids, scorers[fold_of[record["doc_id"]]]))
                      for n, record in enumerate(gscplus)]
            ceiling_rows.append(metrics_row(f"{kind}, {label}, GSC+ gold 5-fold CV", linked, hpo))

    print(f"GSC+ ({len(gscplus)} mentions, HPO); fitted on {described['synonym_queries']} synonym queries + "
          f"{described['pair_queries']} NCBI-disease pair queries ({described['pairs_held_out']} with the name "
          f"held out), seed {args.seed}; no GSC+ label used in fitting")
    print(tabulate(rows, headers=["system", "R@1", "MRR", "HO R@1", "HO MRR", "LO R@1", "LO MRR", "NO R@1",
                                  "NO MRR", "R@64"]))
    print()
    print(tabulate(fit_rows, headers=["fit", "queries with answer", "candidate rows", "feature s (shared)",
                                      "fit s"]))
    print()
    print("Not results: what these features reach at all (no-gold trees; GSC+ gold cross-validated by abstract)")
    print(tabulate(ceiling_rows, headers=["system", "R@1", "MRR", "HO R@1", "HO MRR", "LO R@1", "LO MRR", "NO R@1",
                                          "NO MRR", "R@64"]))
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
    lpt_groups = [*DEFAULT, *optional]
    lpt_found = CandidateFeatures(lpt_index, lpt_groups, prior=None, second_encoder=second_encoder)(lpt_mentions)
    lpt_columns = feature_columns(lpt_groups)

    def lpt_row(label, weights, keep):
        # keep: columns of the GSC+ feature matrix; the same columns of the LPT one
        lpt_keep = [lpt_columns.index(columns[position]) for position in keep]
        return metrics_row(label, linked_by(lpt_found, lpt_mentions, lpt_index.entity_ids,
                                            scorer_of(weights, lpt_keep)), lpt)

    lpt_rows = [metrics_row("frozen index", link_mentions(lpt_mentions, lpt_index, top_k=64), lpt),
                lpt_row("HPO-fitted ranker, unchanged", default_weights, default_keep)]
    lpt_rows += [lpt_row(f"HPO-fitted ranker + {label}, unchanged", *added[label])
                 for label in ("overlap", "hierarchy", "overlap, hierarchy")]
    lpt_rows.append(lpt_row("HPO-fitted ranker + bridged pairs, unchanged", *with_bridged))
    lpt_rows += [lpt_row(f"HPO-fitted ranker + {label}, unchanged", *added[label])
                 for label in ("second_encoder", "second_encoder, bridged", "overlap, second_encoder, bridged")]
    print()
    print(f"LPT ({len(lpt_mentions)} test mentions: the partial file, a check, not a benchmark)")
    print(tabulate(lpt_rows, headers=["system", "R@1", "MRR", "HO R@1", "HO MRR", "LO R@1", "LO MRR", "NO R@1",
                                      "NO MRR", "R@64"]))

    # speed: the rankers saved, then timed in link_speed
    from ontolink.ranking.ranker import save_ranker

    both = [*DEFAULT, "overlap", "hierarchy"]
    for name, groups, weights in (
            ("ranker", DEFAULT, default_weights),
            ("ranker-both", both, added["overlap, hierarchy"][0]),
            ("ranker-second", [*DEFAULT, "overlap", "second_encoder"], added["overlap, second_encoder, bridged"][0]),
            ("ranker-gated", [*DEFAULT, "overlap", "second_encoder"], added["overlap, second_encoder, bridged"][0])):
        gate = {}
        if name == "ranker-gated":
            weights = {**weights, **{f"gate_{key}": value for key, value in gates[0.95][0].items()}}
            gate = {"gate": {"groups": gates[0.95][1]["groups"], "margin": gates[0.95][1]["margin"]}}
        encoder = {"second_encoder": second_encoder} if "second_encoder" in groups else {}
        save_ranker(work / name, weights, {"features": {"groups": list(groups), "columns": feature_columns(groups),
                                                        **encoder, **gate}})
    link_speed(work, index, speed_corpora(gscplus, corpus), args.repeats)


def speed_corpora(gscplus, corpus):
    # the evaluation corpus alone, and with an unlabeled corpus of another kind (diseases, many no HPO term)
    return {f"GSC+ and NCBI-disease ({len(gscplus) + len(corpus)} mentions)": gscplus + corpus,
            f"GSC+ alone ({len(gscplus)} mentions)": gscplus}


SPEED_RANKERS = (("retrieval + ranker", "ranker"), ("retrieval + ranker + overlap + hierarchy", "ranker-both"),
                 ("retrieval + ranker + overlap + second_encoder", "ranker-second"),
                 ("retrieval + ranker + overlap + second_encoder, gated (0.95)", "ranker-gated"))


def link_speed(work, index, corpora, repeats=3):
    """Link each corpus (label -> mentions) with and without each ranker saved in ``work``, alternating, in this
    process."""
    from ontolink.ranking.ranker import Ranker
    from ontolink.linking.link import link_mentions

    rankers = {}
    for label, name in SPEED_RANKERS:
        started = time.perf_counter()
        rankers[label] = (Ranker(work / name).bind(index, prior="hpo"), time.perf_counter() - started)
    for corpus, mentions in corpora.items():
        timings = {"retrieval": [], **{label: [] for label in rankers}}
        refined = {}  # share of the mentions a gated ranker ran the second encoder for
        for _ in range(repeats):
            for label in timings:
                options = {"ranker": rankers[label][0], "prior": "hpo"} if label in rankers else {}
                for ranker, _ in rankers.values():  # as in a new process: no mention searched or encoded yet
                    ranker.features.linker.row_cache.clear()
                    if "second_encoder" in ranker.groups:
                        ranker.features.second_known.clear_mentions()
                    ranker.refined = ranker.ranked = 0
                started, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
                count = sum(1 for _ in link_mentions(mentions, index, top_k=64, **options))
                after = resource.getrusage(resource.RUSAGE_SELF)
                timings[label].append((time.perf_counter() - started, after.ru_utime + after.ru_stime
                                       - cpu.ru_utime - cpu.ru_stime, count))
                if label in rankers and rankers[label][0].gate is not None:
                    refined[label] = rankers[label][0].refined / rankers[label][0].ranked
        print(f"\nLink speed on {corpus}")
        speed_rows = []
        for label, runs in timings.items():
            wall = min(run[0] for run in runs)
            cpu = min(run[1] for run in runs)
            speed_rows.append([label, runs[0][2], f"{wall:.2f}", f"{cpu:.2f}", f"{runs[0][2] / wall:.0f}"])
        print(tabulate(speed_rows, headers=["link", "mentions", f"wall s (best of {repeats})", "CPU s", "mentions/s"]))
        for row in speed_rows[1:]:
            print(f"{row[0]} / retrieval: {float(row[2]) / float(speed_rows[0][2]):.2f}x wall, "
                  f"{float(row[3]) / float(speed_rows[0][3]):.2f}x CPU"
                  + (f"; the second encoder ran for {refined[row[0]]:.0%} of the mentions" if row[0] in refined else ""))
    for label, (_, seconds) in rankers.items():
        print(f"{label}: {seconds:.1f} s once per run to bind it to the index (TF-IDF of the names, prior, name maps)")


if __name__ == "__main__":
    sys.exit(run_and_record(main, __file__))
