"""The ranker on the default path: `ontolink index` picks one, `ontolink link` applies it unless `--no-ranker`.

Two rankers compete for an index: the one packaged with ontolink (``packaged/``: fitted once on HPO's synonym
queries, by benchmarks/build_packaged_ranker.py; it reads nothing ontology-specific, so it travels), and one
`index` fits on the ontology's own synonyms when it has enough. Both, and the retriever's own order, are scored
on synonym queries of entities neither ranker was fitted on (split by entity, seeded); the best wins and the index
manifest records the choice and the three numbers ("ranker"). A ranker that measures worse than the retriever is
not chosen: then `link` writes the index's order, as `--no-ranker` does.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from ontolink.ranking.features import CandidateFeatures
from ontolink.ranking.fit import fit_ranker, training_matrix
from ontolink.ranking.queries import synonym_queries
from ontolink.ranking.ranker import Ranker, save_ranker
from ontolink.ranking.tables import FILES, RankerTables, ranker_tables
from ontolink.core.options import DEFAULT_SEED
from ontolink.indexes.options import IndexOptions

PACKAGED = Path(__file__).resolve().parent / "packaged"
FITTED_DIR = "ranker"  # the fitted ranker's directory inside the index directory
CHOICES = ("auto", "packaged", "none")
CHOSEN = "index --ranker {}"  # the reason a ranker block gives when the user chose, not a measurement
DEPTH = 10  # candidates a default ranker orders: plain `link`'s depth
SYNONYM_QUERIES = 2000
HELD_OUT_SHARE = 0.3  # of the entities whose synonyms are queries
MIN_HELD_OUT = 50  # held-out queries below which nothing is measured (the packaged ranker is kept)
MIN_FIT = 200  # training queries below which no ranker is fitted


def held_out_entity(entity_id, seed=DEFAULT_SEED, share=HELD_OUT_SHARE):
    """A stable per-entity coin: an entity's synonyms are all held out or all not, whatever the ontology's order
    (the packaged ranker was fitted on HPO's entities this leaves in, so HPO's held-out queries are new to it)."""
    digest = hashlib.blake2b(f"{seed}:{entity_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2 ** 64 < share


def split_by_entity(queries, loaded_index, seed=DEFAULT_SEED):
    """(training queries, held-out queries) of synonym queries, split by their answer's entity."""
    fit, held = [], []
    for query in queries:
        (held if held_out_entity(loaded_index.entity_ids[query[1]], seed) else fit).append(query)
    return fit, held


def packaged_ranker():
    return Ranker(PACKAGED)


def add_ranker(directory, loaded_index, choice=IndexOptions.ranker, seed=DEFAULT_SEED):
    """Write the ranker tables into the index being built in ``directory`` (``ranking.tables``) and choose its
    default ranker (``choice``: auto, packaged or none), fitting one into ``directory``/ranker when it wins.
    Updates ``loaded_index.manifest`` (the manifest about to be written)."""
    manifest = loaded_index.manifest
    tables = RankerTables.compute(loaded_index.names, loaded_index.entity_ids, manifest["ontology"].get("label"))
    tables.save(Path(directory))
    loaded_index._ranker_tables = tables
    manifest["ranker_tables"] = tables.describe()
    manifest["files"] = [*manifest["files"], *FILES]
    if choice in ("none", "packaged"):
        manifest["ranker"] = {"choice": choice, "reason": CHOSEN.format(choice)}
    else:
        manifest["ranker"] = choose_ranker(directory, loaded_index, seed)
    if manifest["ranker"]["choice"] == "fitted":
        manifest["files"].append(FITTED_DIR)
    return manifest["ranker"]


def choose_ranker(directory, loaded_index, seed=DEFAULT_SEED):
    """The "ranker" block of the index manifest: the packaged ranker, one fitted on the ontology's synonyms, or
    none, whichever has the best R@1 on held-out synonym queries (ties: packaged, then fitted)."""
    if loaded_index.name_kinds is None:
        return {"choice": "packaged", "reason": "the index records no kinds of names: no synonym queries"}
    packaged = packaged_ranker()
    queries = synonym_queries(loaded_index, SYNONYM_QUERIES, seed=seed)
    fit_queries, held = split_by_entity(queries, loaded_index, seed)
    block = {"synonym_queries": len(queries), "fitted_on": 0, "held_out": len(held), "seed": seed}
    if len(held) < MIN_HELD_OUT:
        return {"choice": "packaged", **block,
                "reason": f"{len(held)} held-out synonym queries: too few to measure on (fewer than {MIN_HELD_OUT})"}
    features = CandidateFeatures(loaded_index, packaged.groups, top_k=DEPTH,
                                 prior_rows=ranker_tables(loaded_index).prior)
    if features.columns != packaged.columns:
        return {"choice": "packaged", **block, "reason": "the packaged ranker's features differ from this version's"}
    matrix, labels, groups, _ = training_matrix(features, held)
    if matrix is None:
        return {"choice": "packaged", **block, "reason": "no held-out synonym query found its entity in the top "
                                                         f"{DEPTH}: nothing to measure on"}
    scores = {"retriever": _top1(matrix[:, features.columns.index("dense")], labels, groups, len(held)),
              "packaged": _top1(packaged.scores(matrix), labels, groups, len(held))}
    fitted = None
    if len(fit_queries) >= MIN_FIT:
        try:
            fitted = fit_ranker(features, fit_queries)
        except ValueError:  # no training query found its entity: nothing to fit
            fitted = None
    if fitted is not None:
        weights, report = fitted
        block["fitted_on"] = report["queries"]
        standard = (matrix - weights["mean"]) / weights["scale"]
        scores["fitted"] = _top1(standard @ weights["coefficients"], labels, groups, len(held))
    block["held_out_R@1"] = scores
    best = max(scores.values())
    choice = next(name for name in ("packaged", "fitted", "retriever") if scores.get(name) == best)
    if choice == "fitted":
        _save_fitted(Path(directory) / FITTED_DIR, features, *fitted, loaded_index, len(fit_queries), seed)
    return {"choice": "none" if choice == "retriever" else choice, **block}


def _top1(scores, labels, groups, total):
    """Share of ``total`` queries whose best-scored candidate is the answer (unretrieved answers count as
    misses; ties: the retriever's order)."""
    if scores is None or not len(scores):
        return 0.0
    boundaries = np.flatnonzero(np.diff(groups)) + 1
    correct = sum(int(answers[int(np.argmax(part))]) for part, answers in zip(np.split(scores, boundaries),
                                                                               np.split(labels, boundaries)))
    return round(correct / max(1, total), 4)


def _save_fitted(directory, features, weights, report, loaded_index, queries, seed):
    manifest = {
        "features": {"groups": list(features.groups), "columns": features.columns, **features.recorded()},
        "weights": dict(zip(features.columns, [round(float(value), 4) for value in weights["coefficients"]])),
        "training": {"index": "the index this directory is in", "ontology": loaded_index.manifest["ontology"],
                     "prior": "auto", "top_k": DEPTH, "regularisation": 0.01, "synonym_queries": queries,
                     "pair_queries": 0, "split": "by entity", "seed": seed},
        "report": report,
    }
    save_ranker(directory, weights, manifest)


def index_ranker(loaded_index):
    """(the ``Ranker`` `link` applies to ``loaded_index`` by default or None, what it is: "packaged", "fitted" or
    "none"). An index written before the default ranker gets the packaged one (its tables computed, with a note);
    a multi-vector index, or one too old to say which names are synonyms, none."""
    manifest = loaded_index.manifest
    if manifest.get("kind") != "single-vector" or loaded_index.name_kinds is None \
            or loaded_index.entity_depths is None:
        return None, "none"
    choice = (manifest.get("ranker") or {}).get("choice", "packaged")
    if choice == "fitted":
        return Ranker(loaded_index.directory / FITTED_DIR), "fitted"
    if choice == "packaged":
        return packaged_ranker(), "packaged"
    return None, "none"


def unmeasured(manifest):
    """Whether the index's default ranker is the packaged one because nothing could be measured on its ontology
    (no synonyms to hold out): not chosen by the user, not chosen by a measurement. It may then rank worse than
    the retriever alone (names-only HPO: R@1 0.568 -> 0.559 on GSC+) or better (where mentions are short forms
    their documents define, which it searches by their long forms), so `index` and `link` say so."""
    block = manifest.get("ranker") or {}
    return block.get("choice") == "packaged" and not block.get("held_out_R@1") \
        and block.get("reason") != CHOSEN.format("packaged")


def ranker_summary(manifest):
    """What `index` says of its ranker choice: "ranker: fitted (held-out R@1: retriever 0.512, packaged 0.530,
    fitted 0.561 on 412 synonym queries)"."""
    block = manifest.get("ranker")
    if not block:
        return ""
    scores = block.get("held_out_R@1")
    if not scores:
        caution = "; not measured on this ontology: `link --no-ranker` writes the retriever's order" \
            if unmeasured(manifest) else ""
        return f"ranker: {block['choice']} ({block['reason']}){caution}"
    measured = ", ".join(f"{name} {value:.3f}" for name, value in scores.items())
    return f"ranker: {block['choice']} (held-out R@1: {measured} on {block['held_out']} synonym queries)"
