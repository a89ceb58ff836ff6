"""Comparing systems with `eval`: two TF-IDF linkers of GSC+ against HPO side by side, one linked 10 deep
(its ranker, link's default depth) and one 64 deep (--no-ranker); the same files asked for mean ± std; the
misses of a names-only HPO (is_a dropped) named from the ontology; the size of the HTML page, its misses
capped.

    ontolink eval ranked.jsonl plain.jsonl --ontology hpo --format markdown
    ontolink eval ranked.jsonl plain.jsonl --ontology hpo --format markdown --aggregate
    ontolink eval flat.jsonl --ontology flat-hpo.jsonl --errors misses.jsonl --format html -o flat.html

    python benchmarks/bench_eval_compare.py [--workdir DIR]
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from setup_work import ONTOLINK, working_folder  # beside this script
from results_file import run_and_record  # beside this script

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("ONTOLINK_SHARED_DATA", REPO.parent / "shared" / "data"))


def ontolink(*args):
    result = subprocess.run(ONTOLINK + [str(arg) for arg in args], capture_output=True, text=True)
    if result.returncode:
        sys.exit(f"ontolink {' '.join(map(str, args[:2]))} failed: {result.stderr[-2000:]}")
    return result.stdout


def names_only_hpo(path):
    """HPO as Entity JSONL without its parents: an ontology that names everything and has no is_a."""
    from ontolink.ontology import load_ontology

    with open(path, "w", encoding="utf-8") as handle:
        for entity in load_ontology("hpo"):
            record = entity.to_record()
            record.pop("parents", None)
            handle.write(json.dumps(record) + "\n")
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", default="/tmp/ontolink-bench-eval-compare")
    args = parser.parse_args()
    gscplus = SHARED / "gscplus" / "mentions.jsonl"
    work = working_folder(args.workdir, gscplus)
    if work is None:
        return
    index = work / "idx-tfidf"
    if not (index / "manifest.json").exists():
        ontolink("index", "--ontology", "hpo", "--method", "tfidf", index)
    ranked, plain = work / "ranked.jsonl", work / "plain.jsonl"
    ontolink("link", "--index", index, "--top-k", 10, "-i", gscplus, "-o", ranked)
    ontolink("link", "--index", index, "--top-k", 64, "--no-ranker", "-i", gscplus, "-o", plain)
    print(f"GSC+ ({gscplus.name}) against HPO, a TF-IDF index: ranked = its ranker, 10 candidates; "
          "plain = --no-ranker --top-k 64\n")
    print("$ ontolink eval ranked.jsonl plain.jsonl --ontology hpo --format markdown\n")
    print(ontolink("eval", ranked, plain, "--ontology", "hpo", "--format", "markdown"))
    print("\n$ ontolink eval ranked.jsonl plain.jsonl --ontology hpo --format markdown --aggregate\n")
    print(ontolink("eval", ranked, plain, "--ontology", "hpo", "--format", "markdown", "--aggregate"))
    page = work / "report.html"
    ontolink("eval", ranked, plain, "--ontology", "hpo", "--format", "html", "-o", page)
    print(f"\nHTML page of the two: {page.stat().st_size:,} bytes")

    flat_ontology = names_only_hpo(work / "flat-hpo.jsonl")
    flat_index = work / "idx-flat"
    if not (flat_index / "manifest.json").exists():
        ontolink("index", "--ontology", flat_ontology, "--method", "tfidf", flat_index)
    flat = work / "flat.jsonl"
    ontolink("link", "--index", flat_index, "--top-k", 10, "--candidate-fields", "id,score", "-i", gscplus,
             "-o", flat)
    misses, flat_page = work / "misses.jsonl", work / "flat.html"
    ontolink("eval", flat, "--ontology", flat_ontology, "--errors", misses, "--format", "html", "-o", flat_page)
    records = [json.loads(line) for line in misses.read_text().splitlines()]
    named = sum(1 for record in records if record["gold_name"]), sum(1 for record in records
                                                                     if record["predicted_name"])
    print(f"\nHPO without is_a ({flat_ontology.name}), candidates written without names (--candidate-fields id,score):"
          f"\n  {len(records)} misses; gold_name given for {named[0]}, predicted_name for {named[1]}; "
          f"HTML page {flat_page.stat().st_size:,} bytes")


if __name__ == "__main__":
    sys.exit(run_and_record(main, __file__))
