"""ReS against the BLINK-style reranker on GSC+, pseudo pairs only: R@1 and MRR by HO / LO / NO.

Training uses no GSC+ label: the pairs are `make-pairs --sources synonym` over the unlabeled corpus
(NCBI-disease mentions + GSC+ mentions stripped of their labels), as in examples/zero-shot-hpo. The
retriever is the frozen all-MiniLM-L6-v2 index (the example's best retriever at one epoch); every
reranker rescores the same top-K candidates of it:

    retriever         the index's own order
    blink             `train reranker` (cross-encoder, each candidate alone)
    res frozen        `train reranker --architecture res --reading frozen` (only the selecting transformer trains)
    res cross         `train reranker --architecture res` (reading cross-encoder + selecting transformer)
    res cross from blink  the same, its reading cross-encoder starting from the trained blink model

One run trains and scores them all on the whole of GSC+ and prints one table. The default budgets
are what two shared CPU cores allow in about an hour (printed with the table): top 8 candidates,
128 word pieces (at 64, longest-first truncation cuts the mention itself out of most GSC+ inputs,
whose context is the whole abstract), the two cross-encoder models on the same first pseudo pairs
for one epoch; pass larger ones on a GPU. Every stage is a file in --workdir, so a rerun skips what
is done (use a new --workdir when changing a budget).

    python benchmarks/bench_res.py [--workdir DIR] [--top-k 8] [--limit 200] [--models 'blink,res frozen'] ...
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from tabulate import tabulate

from setup_work import ONTOLINK, working_folder  # beside this script
from results_file import run_and_record  # beside this script

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", default="/tmp/ontolink-bench-res")
    parser.add_argument("--index", help="the retriever's HPO index (default: all-MiniLM-L6-v2 built in --workdir)")
    parser.add_argument("--top-k", type=int, default=8, help="candidates every reranker rescores")
    parser.add_argument("--pairs", type=int, default=848, help="pseudo pairs for the frozen ReS (first N)")
    parser.add_argument("--cross-pairs", type=int, default=160,
                        help="pseudo pairs for blink and res cross (first N of the same)")
    parser.add_argument("--limit", type=int, help="score the first N GSC+ mentions only (default: all 1,151)")
    parser.add_argument("--models", default="blink,res frozen,res cross",
                        help="the rerankers to train and score (comma-separated)")
    parser.add_argument("--frozen-epochs", type=int, default=10)
    parser.add_argument("--cross-epochs", type=int, default=1)
    parser.add_argument("--max-length", type=int, default=128, help="word pieces per cross-encoder input")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    gscplus = SHARED / "gscplus" / "mentions.jsonl"
    ncbi = SHARED / "ncbi_disease" / "unlabeled_mentions.jsonl"
    work = working_folder(args.workdir, gscplus, ncbi)
    if work is None:
        return
    ontolink = ONTOLINK
    seconds = {}

    def stage(name, target, command):
        """Run ``command`` unless ``target`` exists; remember its wall time."""
        if not Path(target).exists():
            started = time.perf_counter()
            subprocess.run(ontolink + [str(part) for part in command], check=True)
            seconds[name] = time.perf_counter() - started

    corpus = work / "corpus.jsonl"
    if not corpus.exists():
        with open(corpus, "w", encoding="utf-8") as out:
            for path in (ncbi, gscplus):
                for line in path.read_text(encoding="utf-8").splitlines():
                    if line.strip():
                        out.write(json.dumps({k: v for k, v in json.loads(line).items() if k != "gold"}) + "\n")
    pairs = work / "pairs-synonym.jsonl"
    stage("pairs", pairs, ["make-pairs", "--ontology", "hpo", "--mentions", corpus, "--sources", "synonym",
                           "-i", "/dev/null", "-o", pairs])
    lines = pairs.read_text(encoding="utf-8").splitlines(keepends=True)
    subsets = {}
    for name, count in (("frozen", args.pairs), ("cross", args.cross_pairs)):
        subsets[name] = work / f"pairs-{count}.jsonl"
        subsets[name].write_text("".join(lines[:count]), encoding="utf-8")
    test = work / f"gscplus-{args.limit or 'all'}.jsonl"
    test.write_text("".join(gscplus.read_text(encoding="utf-8").splitlines(keepends=True)[:args.limit]),
                    encoding="utf-8")
    index = Path(args.index) if args.index else work / "idx-frozen"
    stage("index", index / "manifest.json", ["index", "--ontology", "hpo", "--device", args.device, index])

    common = ["--ontology", "hpo", "--index", index, "--top-k", args.top_k, "--seed", args.seed,
              "--device", args.device]
    cross = ["--epochs", args.cross_epochs, "--max-length", args.max_length, "--lr", "1e-4", "--head-lr", "1e-3",
             "--batch-size", 16]
    models = {
        "blink": cross + ["--negatives", args.top_k - 1, "-i", subsets["cross"]],
        "res frozen": ["--architecture", "res", "--reading", "frozen", "--epochs", args.frozen_epochs,
                       "--batch-size", 16, "-i", subsets["frozen"]],
        "res cross": cross + ["--architecture", "res", "-i", subsets["cross"]],
        # the reading cross-encoder starts from the trained BLINK model (its logit is one reading feature)
        "res cross from blink": cross + ["--architecture", "res", "--model", work / "blink", "-i", subsets["cross"]],
    }
    chosen = [name.strip() for name in args.models.split(",") if name.strip()]
    unknown = sorted(set(chosen) - set(models))
    if unknown:
        sys.exit(f"unknown --models {', '.join(unknown)} (choose from {', '.join(models)})")
    suffix = f"{args.top_k}-{test.stem}"
    linked = {"retriever": work / f"linked-retriever-{suffix}.jsonl"}
    stage("link retriever", linked["retriever"], ["link", "--index", index, "--top-k", args.top_k, "--device",
                                                  args.device, "-i", test, "-o", linked["retriever"]])
    for name in chosen:
        model = work / name.replace(" ", "-")
        stage(f"train {name}", model / "manifest.json", ["train", "reranker", *common, *models[name], "--resume",
                                                         model])
        linked[name] = work / f"linked-{model.name}-{suffix}.jsonl"
        stage(f"rerank {name}", linked[name], ["link", "--index", index, "--reranker", model, "--top-k", args.top_k,
                                               "--device", args.device, "-i", test, "-o", linked[name]])

    rows = []
    for name, path in linked.items():
        scores = work / f"{path.stem}.eval.json"
        subprocess.run(ontolink + ["eval", str(path), "--ontology", "hpo", "--format", "json", "-o", str(scores)],
                       check=True)
        # one file per eval: each metric is a plain number
        metrics = json.loads(scores.read_text())["metrics"]
        row = [name, metrics["all"]["R@1"], metrics["all"]["MRR"]]
        for group in ("HO", "LO", "NO"):
            row += [metrics[group]["R@1"], metrics[group]["MRR"]] if group in metrics else ["-", "-"]
        model = work / name.replace(" ", "-") / "manifest.json"
        row.append(round(json.loads(model.read_text())["seconds"]) if model.exists() else "-")
        rows.append(row)
    counts = {group: int(values["n"]) for group, values in
              json.loads((work / f"{linked['retriever'].stem}.eval.json").read_text())["metrics"].items()}
    print(f"GSC+{f' (first {args.limit})' if args.limit else ''}: {counts['all']} mentions (HO {counts['HO']}, "
          f"LO {counts['LO']}, NO {counts['NO']}), top {args.top_k} candidates of {index}; pseudo pairs: synonym, "
          f"first {args.pairs} for res frozen ({args.frozen_epochs} epochs), first {args.cross_pairs} for blink and "
          f"res cross ({args.cross_epochs} epoch(s), batch 16, {args.max_length} word pieces)")
    print(tabulate(rows, headers=["reranker", "R@1", "MRR", "HO R@1", "HO MRR", "LO R@1", "LO MRR", "NO R@1",
                                  "NO MRR", "train (s)"], tablefmt="github", floatfmt=".3f"))
    if seconds:
        print("stage wall times (s): " + ", ".join(f"{name} {value:.0f}" for name, value in seconds.items()))


if __name__ == "__main__":
    sys.exit(run_and_record(main, __file__))
