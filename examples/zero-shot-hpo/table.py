"""Collect `ontolink eval --format json` files of the grid into one Markdown table.

Retrievers are judged by Recall@64 and rerankers (reranker: BLINK-style; res-frozen, res-cross: ReS) by Recall@1
(docs/evaluation.md): the HO/LO/NO columns give that metric per overlap group. Training seconds come from each model's manifest.
"""

import json
import sys
from pathlib import Path

MODEL_FOLDER = {"linked": "retriever", "reranked": "reranker", "reranked-res-frozen": "res-frozen",
                "reranked-res-cross": "res-cross"}


def cell(value):
    """A metric of one run (a number) or of several seeds ({mean, std}); null (a K past the candidates a run
    holds) is n/a."""
    if value is None:
        return "n/a"
    if not isinstance(value, dict):
        return f"{value:.3f}"
    return f"{value['mean']:.3f} ± {value['std']:.3f}" if value["std"] else f"{value['mean']:.3f}"


def training_seconds(linked_files):
    """Mean training time of the models behind the linked files (OUT/linked/RUN.jsonl.gz -> OUT/retriever/RUN)."""
    seconds = []
    for name in linked_files:
        linked = Path(name)
        run = linked.name.removesuffix(".jsonl.gz")
        manifest = linked.parent.parent / MODEL_FOLDER.get(linked.parent.name, "") / run / "manifest.json"
        if manifest.exists():
            seconds.append(json.loads(manifest.read_text()).get("seconds", 0))
    return f"{sum(seconds) / len(seconds):.0f}" if seconds else "-"


print("| stage | setting | negatives | seeds | R@1 | R@64 | MRR | HO | LO | NO | train (s) |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for path in map(Path, sys.argv[1:]):
    scores = json.loads(path.read_text())
    stage, metrics = path.parent.name, scores["metrics"]
    setting, _, negatives = path.stem.partition("__")
    main = "R@64" if stage == "retriever" else "R@1"  # every other stage is a reranker (BLINK or ReS)
    row = [stage, setting, negatives or "-", str(len(scores["files"])), cell(metrics["all"]["R@1"]),
           cell(metrics["all"]["R@64"]), cell(metrics["all"]["MRR"])]
    row += [cell(metrics[group][main]) if group in metrics else "-" for group in ("HO", "LO", "NO")]
    print("| " + " | ".join(row + [training_seconds(scores["files"])]) + " |")
