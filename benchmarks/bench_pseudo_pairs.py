"""Run the zero-shot pseudo-label pipe and measure it: wall time per stage, LLM cost, pair precision.

    ontolink index | select-entities | gen-aliases | filter | make-pairs

exactly as a user runs it (each stage a subprocess), on an unlabeled corpus.
When the corpus has gold ids (GSC+), they are stripped before the pipe and used
ONLY to score the pairs: precision = share of pairs whose entity is a gold id
(or an alt id of one), for P_Gen without filter, P_Gen, P_Syn, P_Gen ∪ P_Syn.

    python benchmarks/bench_pseudo_pairs.py                          # GSC+ on hpo
    python benchmarks/bench_pseudo_pairs.py --mentions ../shared/data/ncbi_disease/unlabeled_mentions.jsonl
    python benchmarks/bench_pseudo_pairs.py --ontology ../shared/data/sci-zsel/lpt_kb.json \
        --mentions ../shared/data/sci-zsel/lpt_test_grag.PARTIAL_first42.json
    ... [--max-entities N] [--workdir DIR] [-- extra gen-aliases options]

--max-entities keeps the N most-mentioned selected entities (LLM time on a CPU).
Intermediate files stay in --workdir, so a rerun reuses the index and the
gen-aliases response cache (a rerun costs no LLM call).
"""

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from tabulate import tabulate

from setup_work import ONTOLINK, working_folder  # beside this script
from results_file import run_and_record  # beside this script

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data"


def convert_scizsel_mentions(path, target):
    """Sci-ZSEL test JSON ({mention, mention_context with [MENTION_START]...}) to Mention JSONL."""
    with open(path, encoding="utf-8") as handle:
        items = json.load(handle)
    with open(target, "w", encoding="utf-8") as out:
        for item in items:
            left, _, rest = item["mention_context"].partition("[MENTION_START]")
            _, _, right = rest.partition("[MENTION_END]")
            record = {"id": str(item["sample_id"]), "mention": item["mention"], "context_left": left.rstrip() + " ",
                      "context_right": " " + right.lstrip(), "gold": [g["id"] for g in item.get("ground_truth", [])]}
            out.write(json.dumps(record) + "\n")


def stage(name, command, times, stdin=None, stdout=None):
    started = time.perf_counter()
    result = subprocess.run(command, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, text=True)
    times.append((name, time.perf_counter() - started))
    summary = [line for line in result.stderr.splitlines() if line.startswith("ontolink")]
    print(f"[{name}] {times[-1][1]:.1f} s  " + (summary[-1] if summary else ""), flush=True)
    if result.returncode:
        sys.exit(f"{name} failed:\n{result.stderr}")
    return result.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ontology", default="hpo")
    parser.add_argument("--mentions", default=str(SHARED / "gscplus" / "mentions.jsonl"))
    parser.add_argument("--workdir", default="/tmp/ontolink-bench-pairs")
    parser.add_argument("--max-entities", type=int, default=0)
    parser.add_argument("gen_options", nargs="*", help="extra options for gen-aliases (after --)")
    args = parser.parse_args()
    work = working_folder(args.workdir, args.mentions)
    if work is None:
        return
    ontolink = ONTOLINK
    times = []

    labeled = work / "labeled.jsonl"
    if args.mentions.endswith(".json"):
        convert_scizsel_mentions(args.mentions, labeled)
    else:
        labeled.write_bytes(Path(args.mentions).read_bytes())
    gold = {}
    unlabeled = work / "unlabeled.jsonl"
    with open(labeled, encoding="utf-8") as source, open(unlabeled, "w", encoding="utf-8") as target:
        for line in source:
            if line.strip():
                record = json.loads(line)
                gold[record["id"]] = record.pop("gold", None) or []
                target.write(json.dumps(record) + "\n")
    has_gold = any(gold.values())

    index = work / f"idx-{re.sub(r'[^A-Za-z0-9]+', '_', Path(args.ontology).name)}"
    if not (index / "manifest.json").exists():
        stage("index", ontolink + ["index", "--ontology", args.ontology, str(index)], times)
    selected = work / "selected.jsonl"
    stage("select-entities", ontolink + ["select-entities", "--ontology", args.ontology, "--index", str(index),
                                         "-i", str(unlabeled), "-o", str(selected)], times)
    if args.max_entities:
        lines = selected.read_text(encoding="utf-8").splitlines()[: args.max_entities]
        selected.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        print(f"kept the {len(lines)} most-mentioned selected entities")
    aliases, filtered = work / "aliases.jsonl", work / "filtered.jsonl"
    stage("gen-aliases", ontolink + ["gen-aliases", "--ontology", args.ontology, "-i", str(selected),
                                     "-o", str(aliases)] + args.gen_options, times)
    stage("filter", ontolink + ["filter", "--ontology", args.ontology, "-i", str(aliases), "-o", str(filtered)], times)

    settings = [("P1 (names only)", None, "name"), ("P_Gen without filter", aliases, "name,alias"),
                ("P_Gen", filtered, "name,alias"), ("P_Syn", None, "synonym"),
                ("P_Gen ∪ P_Syn", filtered, "name,alias,synonym")]
    hits = _hit_ids(args.ontology) if has_gold else None
    rows = []
    for label, alias_file, sources in settings:
        pairs = work / f"pairs-{re.sub(r'[^A-Za-z]+', '_', label)}.jsonl"
        stage(f"make-pairs {label}", ontolink + ["make-pairs", "--ontology", args.ontology, "--mentions",
                                                 str(unlabeled), "--sources", sources, "-i",
                                                 str(alias_file or "/dev/null"), "-o", str(pairs)], times)
        records = [json.loads(line) for line in pairs.read_text(encoding="utf-8").splitlines() if line.strip()]
        row = [label, len(records), len({r["entity_id"] for r in records})]
        if hits is not None:
            correct = sum(r["entity_id"] in hits(gold[r["id"]]) for r in records)
            row.append(f"{correct / len(records):.3f}" if records else "-")
        rows.append(row)
    print()
    print(tabulate(rows, headers=["pairs", "count", "entities"] + (["precision"] if hits else [])))
    print()
    print(tabulate([(name, f"{seconds:.1f}") for name, seconds in times], headers=["stage", "seconds"]))


def _hit_ids(ontology_spec):
    from ontolink.ontology import load_ontology
    from ontolink.evaluation.evaluate import hit_ids

    ontology = load_ontology(ontology_spec)
    return lambda gold: hit_ids(gold, ontology)


if __name__ == "__main__":
    sys.exit(run_and_record(main, __file__))
