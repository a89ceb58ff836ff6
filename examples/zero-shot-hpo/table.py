"""Collect `ontolink eval --format json` files of the grid into one Markdown table."""

import json
import sys
from pathlib import Path

METRICS = [("retriever", "R@64"), ("reranker", "R@1")]


def cell(value):
    return f"{value['mean']:.3f} ± {value['std']:.3f}" if value["std"] else f"{value['mean']:.3f}"


rows = []
for path in map(Path, sys.argv[1:]):
    stage = path.parent.name
    setting, _, negatives = path.stem.partition("__")
    metrics = json.loads(path.read_text())["metrics"]
    main = dict(METRICS)[stage]
    seeds = len(json.loads(path.read_text())["files"])
    rows.append([stage, setting, negatives or "-", str(seeds), cell(metrics["all"][main]), cell(metrics["all"]["MRR"])]
                + [cell(metrics[group][main]) if group in metrics else "-" for group in ("HO", "LO", "NO")])
print("| stage | setting | negatives | seeds | R@64 (retriever) / R@1 (reranker) | MRR | HO | LO | NO |")
print("|---|---|---|---|---|---|---|---|---|")
for row in rows:
    print("| " + " | ".join(row) + " |")
