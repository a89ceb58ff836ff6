"""Rebuild the ranker packaged with ontolink (toolbox/ontolink/ranking/packaged/), reproducibly, and say why its
feature groups are the ones it has.

    python benchmarks/build_packaged_ranker.py [--workdir DIR] [--compare] [--write]

It builds the default HPO index (all-MiniLM-L6-v2, ONNX int8, no ranker), makes 4,000 synonym queries of it
(seed 0; each synonym searched with its own text held out of the index), keeps those of the entities that
``ontolink.ranking.default.held_out_entity`` leaves in (the rest are the held-out queries every `index` measures
rankers on: HPO's held-out queries are new to the packaged ranker too), and fits the groups of ``GROUPS`` at
`link`'s depth (10). No corpus and no gold label is read. ``--write`` replaces the packaged ranker;
``--compare`` fits each set of ``CANDIDATES`` and prints its held-out R@1 beside its cost on `link` (CPU seconds
of the 6,284-mention corpus, NCBI-disease unlabeled + GSC+ mentions, against plain `link`; labels unread), the
measurements the choice of ``GROUPS`` rests on. Results: benchmarks/results/build_packaged_ranker.md.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data"
sys.path.insert(0, str(REPO / "benchmarks"))

from results_file import run_and_record  # noqa: E402  (beside this script)

GROUPS = ("dense", "lexical", "prior", "abbreviation", "depth", "kind")
CANDIDATES = {
    "default groups": GROUPS,
    "default + overlap": GROUPS + ("overlap",),
    "default + hierarchy": GROUPS + ("hierarchy",),
    "default - abbreviation": tuple(group for group in GROUPS if group != "abbreviation"),
    "dense, lexical, kind": ("dense", "lexical", "kind"),
}
QUERIES = 4000
SEED = 0


def fitted(loaded, groups, queries):
    """(weights, report, features) of ``groups`` fitted on ``queries`` at the default depth."""
    from ontolink.ranking.default import DEPTH
    from ontolink.ranking.features import CandidateFeatures
    from ontolink.ranking.fit import fit_ranker
    from ontolink.ranking.tables import ranker_tables

    features = CandidateFeatures(loaded, list(groups), top_k=DEPTH, prior_rows=ranker_tables(loaded).prior)
    weights, report = fit_ranker(features, queries)
    return weights, report, features


def held_out_top1(features, weights, held):
    from ontolink.ranking.default import _top1
    from ontolink.ranking.fit import training_matrix

    matrix, labels, groups, _ = training_matrix(features, held)
    dense = _top1(matrix[:, features.columns.index("dense")], labels, groups, len(held))
    ranked = _top1(((matrix - weights["mean"]) / weights["scale"]) @ weights["coefficients"], labels, groups,
                   len(held))
    return dense, ranked


def save(directory, groups, weights, report, features, loaded, queries):
    from ontolink.ranking.default import DEPTH
    from ontolink.ranking.ranker import save_ranker

    manifest = {
        "features": {"groups": list(groups), "columns": features.columns, **features.recorded()},
        "weights": dict(zip(features.columns, [round(float(value), 4) for value in weights["coefficients"]])),
        "training": {"index": "the default HPO index (ontolink index --ontology hpo --ranker none)",
                     "ontology": loaded.manifest["ontology"], "prior": "auto", "top_k": DEPTH,
                     "regularisation": 0.01, "synonym_queries": queries, "pair_queries": 0, "split": "by entity",
                     "seed": SEED, "built_by": "benchmarks/build_packaged_ranker.py --write"},
        "report": report,
    }
    manifest = save_ranker(directory, weights, manifest, force=True)
    # the manifest a rebuild writes is the same file: no date, no command line
    path = Path(directory) / "manifest.json"
    written = json.loads(path.read_text(encoding="utf-8"))
    for key in ("created", "command"):
        written.pop(key, None)
    written["versions"] = {"ontolink": written.get("versions", {}).get("ontolink")}
    path.write_text(json.dumps(written, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def link_cpu(index, ranker, corpus):
    """CPU seconds (user + system, threads included) of one `ontolink link` process over ``corpus``."""
    command = [sys.executable, "-m", "ontolink", "link", "--index", str(index), "-i", str(corpus), "-o", "/dev/null"]
    command += ["--ranker", str(ranker)] if ranker else ["--no-ranker"]
    started = time.perf_counter()
    result = subprocess.run(["/usr/bin/time", "-f", "%U %S", *command], capture_output=True, text=True, check=True)
    user, system = result.stderr.strip().splitlines()[-1].split()
    return float(user) + float(system), time.perf_counter() - started


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--compare", action="store_true")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    from ontolink.indexes.artifact import load_index
    from ontolink.indexes.build import build_index
    from ontolink.ontology import load_ontology
    from ontolink.ranking.default import PACKAGED, split_by_entity
    from ontolink.ranking.queries import synonym_queries

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="packaged-ranker-"))
    index = workdir / "hpo"
    if not (index / "manifest.json").is_file():
        build_index(load_ontology("hpo"), index, device="cpu", ranker="none")
    loaded = load_index(index, device="cpu")
    fit_queries, held = split_by_entity(synonym_queries(loaded, QUERIES, seed=SEED), loaded, SEED)
    print(f"HPO synonym queries (seed {SEED}): {len(fit_queries)} to fit on, {len(held)} held out by entity\n")
    rows = []
    sets = CANDIDATES if args.compare else {"default groups": GROUPS}
    corpus = workdir / "corpus.jsonl"
    if args.compare:
        corpus.write_text("".join(open(SHARED / part, encoding="utf-8").read() for part in (
            "ncbi_disease/unlabeled_mentions.jsonl", "gscplus/mentions.jsonl")), encoding="utf-8")
        plain_cpu, plain_wall = link_cpu(index, None, corpus)
        rows.append(("plain link (no ranker)", "", "", f"{plain_cpu:.1f}", "1.00"))
    for label, groups in sets.items():
        weights, report, features = fitted(loaded, groups, fit_queries)
        dense, ranked = held_out_top1(features, weights, held)
        row = [label, f"{dense:.4f}", f"{ranked:.4f}"]
        if args.compare:
            candidate = workdir / f"ranker-{len(rows)}"
            save(candidate, groups, weights, report, features, loaded, len(fit_queries))
            cpu, _ = link_cpu(index, candidate, corpus)
            row += [f"{cpu:.1f}", f"{plain_cpu / cpu:.2f}"]
        rows.append(tuple(row))
        if groups == GROUPS and args.write:
            save(PACKAGED, groups, weights, report, features, loaded, len(fit_queries))
            print(f"wrote {PACKAGED.relative_to(REPO)} ({', '.join(groups)})\n")
    header = ["groups", "held-out R@1, retriever", "held-out R@1, ranker"]
    header += ["link CPU s (6,284 mentions)", "rate vs plain (CPU)"] if args.compare else []
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    run_and_record(main, __file__)
