"""NIL detection on a mixed set: GSC+ mentions (linkable to HPO) + LPT test mentions (livestock traits, not in HPO).

    ontolink link --index IDX --nil-threshold auto -i mixed.jsonl | ontolink eval --ontology hpo

The LPT mentions (../shared/data/sci-zsel/, only the first 42 test records are
in shared data) get "gold": [] (unlinkable). Prints, for the auto threshold and
for fixed ones: NIL precision / recall / F1 on the mixed set, and R@1 on GSC+
alone without NIL marks and with them (a linkable mention marked NIL is a miss).

    python benchmarks/bench_nil.py [--workdir DIR] [--index DIR] [--thresholds 0.6 0.7 ...]
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

from tabulate import tabulate

from setup_work import ONTOLINK, hpo_index, working_folder  # beside this script
from results_file import run_and_record  # beside this script

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))


def main():
    from bench_pseudo_pairs import convert_scizsel_mentions

    from ontolink.linking.nil import mark_nil, nil_metrics

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", default="/tmp/ontolink-bench-nil")
    parser.add_argument("--index", help="an HPO index (default: all-MiniLM-L6-v2 built in --workdir)")
    parser.add_argument("--thresholds", type=float, nargs="*", default=[0.6, 0.65, 0.7, 0.75, 0.8])
    args = parser.parse_args()
    gscplus = SHARED / "gscplus" / "mentions.jsonl"
    lpt = SHARED / "sci-zsel" / "lpt_test_grag.PARTIAL_first42.json"
    work = working_folder(args.workdir, gscplus, lpt)
    if work is None:
        return
    ontolink = ONTOLINK
    index = hpo_index(args.index or work / "idx-hpo")
    convert_scizsel_mentions(str(lpt), work / "lpt.jsonl")
    mixed = work / "mixed.jsonl"
    with open(mixed, "w", encoding="utf-8") as out:
        out.write(gscplus.read_text(encoding="utf-8"))
        for line in (work / "lpt.jsonl").read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            out.write(json.dumps({**record, "id": f"lpt:{record['id']}", "gold": []}) + "\n")
    linked = work / "linked_auto.jsonl"
    result = subprocess.run(ontolink + ["link", "--index", str(index), "--top-k", "5", "--nil-threshold", "auto",
                                        "-i", str(mixed), "-o", str(linked)], capture_output=True, text=True)
    if result.returncode:
        sys.exit(result.stderr)
    auto_line = next(line for line in result.stderr.splitlines() if "NIL threshold" in line)
    print(auto_line)
    auto = float(auto_line.split("NIL threshold ")[1].split()[0])
    records = [json.loads(line) for line in linked.read_text(encoding="utf-8").splitlines()]
    plain = [{**record, "nil": False} for record in records]
    hpo_ids = _hit_ids(records)
    rows = [_row("none", plain, hpo_ids, nil_metrics)]
    rows.append(_row(f"auto ({auto:.3f})", records, hpo_ids, nil_metrics))
    for threshold in args.thresholds:
        rows.append(_row(f"{threshold:.2f}", list(mark_nil([dict(r) for r in records], threshold)), hpo_ids,
                         nil_metrics))
    print(f"{sum(1 for r in records if r['gold'])} GSC+ mentions (linkable) + "
          f"{sum(1 for r in records if not r['gold'])} LPT mentions (NIL) against HPO, index {index}")
    print(tabulate(rows, headers=["NIL threshold", "marked NIL", "NIL P", "NIL R", "NIL F1", "GSC+ R@1",
                                  "GSC+ R@1 with NIL marks"], tablefmt="github", disable_numparse=True))


def _hit_ids(records):
    """Gold ids with their alt ids resolved, as `eval --ontology hpo` counts hits."""
    from ontolink.ontology import load_ontology
    from ontolink.evaluation.evaluate import hit_ids

    ontology = load_ontology("hpo")
    return {record["id"]: hit_ids(record["gold"], ontology) for record in records}


def _row(name, records, hits, nil_metrics):
    outcomes = []
    for record in records:
        right = bool(record["gold"]) and record["candidates"][0]["id"] in hits[record["id"]]
        outcomes.append((not record["gold"], bool(record.get("nil")), right))
    metrics = nil_metrics(outcomes)
    r1 = sum(right for gold, _, right in outcomes if not gold) / metrics["linkable"]
    return [name, metrics["nil_predicted"], f"{metrics['P']:.3f}", f"{metrics['R']:.3f}", f"{metrics['F1']:.3f}",
            f"{r1:.3f}", f"{metrics['R@1_linkable']:.3f}"]


if __name__ == "__main__":
    sys.exit(run_and_record(main, __file__))
