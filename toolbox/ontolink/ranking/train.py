"""`ontolink train ranker`: fit a candidate ranker on training queries made without gold labels, and save it."""

from __future__ import annotations

from typing import Any

from ontolink.ranking import AUTO_PRIOR, FITTING_DEPTH
from ontolink.ranking.groups import default_groups, check_groups
from ontolink.ranking.options import TrainRankerOptions
from ontolink.core.errors import InputError
from ontolink.core.io import read_records, warn
from ontolink.core.records import validate_pair
from ontolink.indexes.artifact import load_index
from ontolink.ranking.features import CandidateFeatures
from ontolink.ranking.fit import NothingToFit, fit_ranker, held_out_scores
from ontolink.ranking.groups.second_encoder import second_encoder_spec
from ontolink.ranking.priors import load_prior
from ontolink.ranking.queries import pair_queries, synonym_queries
from ontolink.ranking.ranker import resolve_prior, save_ranker
from ontolink.training.loop import DEFAULT_HOLDOUT_SHARE, Holdout, held_out_summary, key as score_key
from ontolink.core.options import DEFAULT_SEED


def ranker_queries(loaded_index, pairs=(), synonym_count=TrainRankerOptions.synonym_queries,
                   hold_out=TrainRankerOptions.hold_out, seed=DEFAULT_SEED):
    """(queries, what they are) for ``train_ranker``: ``synonym_count`` synonym queries and ``pairs`` (make-pairs
    records), a ``hold_out`` share of them searched without their matched name (see ontolink.ranking.queries)."""
    from_synonyms = synonym_queries(loaded_index, synonym_count, seed=seed) if synonym_count else []
    from_pairs = pair_queries(pairs, loaded_index, hold_out, seed=seed)
    unknown = len(pairs) - len(from_pairs)
    if unknown:  # pairs made for another ontology, or a typo: said, not only visible in the counts
        held = set(loaded_index.entity_ids)
        example = next(pair["entity_id"] for pair in pairs if pair["entity_id"] not in held)
        warn(f"warning: {unknown} of {len(pairs)} pairs name an entity the index does not hold (e.g. {example!r}): "
             "skipped")
    described = {"synonym_queries": len(from_synonyms), "pair_queries": len(from_pairs),
                 "pairs_held_out": sum(1 for _, _, held_out in from_pairs if held_out), "hold_out": hold_out,
                 "seed": seed}
    return from_synonyms + from_pairs, described


def train_ranker(loaded_index, directory, queries, groups=None, prior=AUTO_PRIOR, top_k=FITTING_DEPTH,
                 regularisation=TrainRankerOptions.regularisation, described=None, second_encoder=None,
                 gate_coverage=None, force=TrainRankerOptions.force, holdout_share=TrainRankerOptions.holdout_share,
                 seed=DEFAULT_SEED):
    """Fit a ranker on ``queries`` (``ranker_queries``) over ``loaded_index`` with the feature ``groups`` (default:
    the default groups) and write it to ``directory`` (``force``: replace what is there, and fit even on too few
    queries); returns its manifest. No gold label is read.

    The queries of a ``holdout_share`` of their answer entities are held out (seeded) and ranked both in the
    index's order and by the fitted ranker: the manifest says whether the ranker beat that order
    ("improved"); when it did not, `link --ranker` orders the candidates as without it and says so."""
    holdout_share = DEFAULT_HOLDOUT_SHARE if holdout_share is None else holdout_share
    holdout = Holdout(list(queries), lambda query: [query[1]], holdout_share, seed, force=force, unit="queries")
    queries = holdout.training

    groups = default_groups() if groups is None else groups
    prior = resolve_prior(prior, loaded_index) if "prior" in groups else "none"
    features = CandidateFeatures(loaded_index, groups, prior=load_prior(prior), top_k=top_k,
                                 second_encoder=second_encoder)
    try:
        weights, report = fit_ranker(features, queries, regularisation=regularisation, gate_coverage=gate_coverage)
    except NothingToFit as error:  # not even --force can fit a ranker on no row
        raise InputError(f"nothing to learn from: none of the {error.queries} training queries "
                         f"(of {_query_counts(described)} queries) has its answer in the index's top {top_k}, so no "
                         "query tells the ranker which candidate is right (a held-out pair is searched without its "
                         "own name, the only name an entity of a names-only ontology has: try --hold-out 0)") from None
    judged: dict[str, Any] = {"held_out": {**holdout.describe(), "queries": len(holdout.held_out)}, "improved": None}
    if holdout.held_out:
        start, fitted = held_out_scores(features, holdout.held_out, weights)
        improved = score_key(fitted) > score_key(start) and not holdout.problem
        judged.update(validation=[{"epoch": 0, **start}, {"epoch": 1, **fitted}], kept_epoch=int(improved),
                      improved=improved, **{"start_R@1": start["R@1"],
                                            "kept_R@1": max(start, fitted, key=score_key)["R@1"]})
    if holdout.problem:
        judged.update(improved=False, not_improved_because=holdout.problem)
    manifest = {
        "features": {"groups": list(features.groups), "columns": features.columns, **features.recorded(),
                     **({"gate": {key: report["gate"][key] for key in ("groups", "margin")}} if "gate" in report
                        else {})},
        "weights": dict(zip(features.columns, [round(float(value), 4) for value in weights["coefficients"]])),
        "training": {"index": str(loaded_index.directory), "ontology": loaded_index.manifest["ontology"],
                     "prior": str(prior), "top_k": top_k, "regularisation": regularisation, **(described or {})},
        "report": report,
        **judged,
    }
    return save_ranker(directory, weights, manifest, force=force)


def _query_counts(described: dict[str, Any] | None) -> str:
    """"0 synonym, 500 pair": what the queries were made of, for messages."""
    described = described or {}
    return f"{described.get('synonym_queries', 0)} synonym, {described.get('pair_queries', 0)} pair"


def _no_queries(options: TrainRankerOptions, pairs: list[dict[str, Any]]) -> str:
    """Why ``ranker_queries`` made no query at all, each source with its count."""
    synonyms = ("--synonym-queries 0" if not options.synonym_queries
                else "no synonym in the index names one entity alone (a names-only ontology?)")
    pairs_reason = "no --pairs" if not pairs else f"none of the {len(pairs)} pairs names an entity of the index"
    return (f"nothing to learn from: 0 queries (0 synonym: {synonyms}; 0 pair: {pairs_reason}); give --pairs "
            "(make-pairs output) or index an ontology with synonyms")


def nothing_learned(manifest: dict[str, Any], top_k: int) -> str | None:
    """The warning for a ranker whose training queries cannot teach it anything: each one that found its answer
    in the top K had it first in the index's order already, so the fit only confirms that order (training top-1
    1.000 -> 1.000). None when some query's answer was below first."""
    report = manifest["report"]
    if report["queries"] > report.get("answer_first", 0):
        return None
    return (f"nothing to learn: all {report['queries']} training queries that retrieved their answer had it first in "
            f"the index's order already ({report['skipped_unretrieved']} more had it outside the top {top_k}; "
            f"{_query_counts(manifest['training'])} queries in all), so the ranker can only keep that order; give "
            "pairs whose mentions are not the entities' own names, or an ontology with synonyms")


def train_ranker_files(options: TrainRankerOptions) -> dict[str, Any]:
    """`ontolink train ranker`: the queries (synonyms and pairs), the fit, DIRECTORY and the summary line; returns
    the manifest. No gold label is read."""
    names = options.groups.split(",") if options.groups is not None else default_groups()
    groups = check_groups([group.strip() for group in names if group.strip()])
    loaded = load_index(options.index_dir, device=options.device)
    pairs = list(read_records(options.pairs_path, validate=validate_pair)) if options.pairs_path else []
    if not pairs and not options.synonym_queries:
        raise InputError("nothing to learn from: give --pairs or --synonym-queries above 0")
    queries, described = ranker_queries(loaded, pairs, synonym_count=options.synonym_queries,
                                        hold_out=options.hold_out, seed=options.seed)
    if not queries:
        raise InputError(_no_queries(options, pairs))
    manifest = train_ranker(loaded, options.directory, queries, groups=groups, prior=options.prior,
                            top_k=options.top_k, regularisation=options.regularisation, described=described,
                            second_encoder=second_encoder_spec(options.second_encoder),
                            gate_coverage=options.gate_coverage or None, force=options.force,
                            holdout_share=options.holdout_share, seed=options.seed)
    report = manifest["report"]
    warn(f"fitted ranker ({', '.join(groups)}) on {report['queries']} queries ({manifest['training']['synonym_queries']} "
         f"synonym, {manifest['training']['pair_queries']} pair; {report['skipped_unretrieved']} without their answer in "
         f"the top {options.top_k} skipped) in {report['seconds_features'] + report['seconds_fit']:.0f} s into "
         f"{options.directory}; training top-1 {report['training_top1_retriever']:.3f} -> "
         f"{report['training_top1_ranker']:.3f}"
         + (f"; gated {report['gate']['training_top1_gated_ranker']:.3f}, the encoder run for "
            f"{report['gate']['training_share_refined']:.0%} of them" if "gate" in report else "")
         + f"; {held_out_summary(manifest, 'the index order', fitted=True)}")
    warning = nothing_learned(manifest, options.top_k)
    if warning:
        warn(warning)
    return manifest
