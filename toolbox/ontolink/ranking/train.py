"""`ontolink train ranker`: fit a candidate ranker on training queries made without gold labels, and save it."""

from typing import Any

from ontolink.ranking.groups import default_groups


def ranker_queries(loaded_index, pairs=(), synonym_count=2000, hold_out=0.5, seed=0):
    """(queries, what they are) for ``train_ranker``: ``synonym_count`` synonym queries and ``pairs`` (make-pairs
    records), a ``hold_out`` share of them searched without their matched name (see ontolink.ranking.queries)."""
    from ontolink.ranking.queries import pair_queries, synonym_queries

    from_synonyms = synonym_queries(loaded_index, synonym_count, seed=seed) if synonym_count else []
    from_pairs = pair_queries(pairs, loaded_index, hold_out, seed=seed)
    described = {"synonym_queries": len(from_synonyms), "pair_queries": len(from_pairs),
                 "pairs_held_out": sum(1 for _, _, held_out in from_pairs if held_out), "hold_out": hold_out,
                 "seed": seed}
    return from_synonyms + from_pairs, described


def train_ranker(loaded_index, directory, queries, groups=None, prior="auto", top_k=64, regularisation=0.01,
                 described=None, second_encoder=None, gate_coverage=None, force=False, holdout_share=None, seed=0):
    """Fit a ranker on ``queries`` (``ranker_queries``) over ``loaded_index`` with the feature ``groups`` (default:
    the default groups) and write it to ``directory`` (``force``: replace what is there, and fit even on too few
    queries); returns its manifest. No gold label is read.

    The queries of a ``holdout_share`` of their answer entities are held out (seeded) and ranked both in the
    index's order and by the fitted ranker: the manifest says whether the ranker beat that order
    ("improved"); when it did not, `link --ranker` keeps the index's order and says so."""
    from ontolink.ranking.ranker import resolve_prior, save_ranker
    from ontolink.ranking.features import CandidateFeatures
    from ontolink.ranking.fit import fit_ranker, held_out_scores
    from ontolink.ranking.priors import load_prior
    from ontolink.training.loop import DEFAULT_HOLDOUT_SHARE, Holdout, key

    holdout_share = DEFAULT_HOLDOUT_SHARE if holdout_share is None else holdout_share
    holdout = Holdout(list(queries), lambda query: [query[1]], holdout_share, seed, force=force, unit="queries")
    queries = holdout.training

    groups = default_groups() if groups is None else groups
    prior = resolve_prior(prior, loaded_index) if "prior" in groups else "none"
    features = CandidateFeatures(loaded_index, groups, prior=load_prior(prior), top_k=top_k,
                                 second_encoder=second_encoder)
    weights, report = fit_ranker(features, queries, regularisation=regularisation, gate_coverage=gate_coverage)
    judged: dict[str, Any] = {"held_out": {**holdout.describe(), "queries": len(holdout.held_out)}, "improved": None}
    if holdout.held_out:
        start, fitted = held_out_scores(features, holdout.held_out, weights)
        improved = key(fitted) > key(start) and not holdout.problem
        judged.update(validation=[{"epoch": 0, **start}, {"epoch": 1, **fitted}], kept_epoch=int(improved),
                      improved=improved, **{"start_R@1": start["R@1"], "kept_R@1": max(start, fitted, key=key)["R@1"]})
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
