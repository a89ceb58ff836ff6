"""Concept recognition from raw text, end to end: `annotate | link | eval --spans` on GSC+.

The GSC+ abstracts are rebuilt from ../shared/data/gscplus/mentions.jsonl
(context_left + mention + context_right is the whole abstract, grouped by
doc_id) and written as plain-text documents WITHOUT their spans. Each setting
runs the pipe exactly as a user does (each stage a subprocess):

    ontolink annotate --ontology hpo [...] -i docs.txt | ontolink link --index IDX | ontolink eval --spans --gold GOLD

and scores mention-level precision / recall / F1 of (span, top-1 id) against
the gold mentions (strict: same span; overlap: overlapping span; span: any id).
Published figures on GSC+ are printed beside it; they were measured on the
whole corpus or its test set, this on the split kept in shared data (122 abstracts).

    python benchmarks/bench_annotate.py [--workdir DIR] [--mentions FILE] [--dense-threshold T ...]
"""

import argparse
import json
import subprocess
import sys
import time
from collections import OrderedDict
from pathlib import Path

from tabulate import tabulate

from setup_work import ONTOLINK, hpo_index, working_folder  # beside this script
from results_file import run_and_record  # beside this script

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data"
# Published figures (mention level) for reference: FastHPOCR from its paper's abstract; PhenoTagger
# v1.1 (GSC+ test set) from the table in the ncbi-nlp/PhenoTagger README.
PUBLISHED = [("FastHPOCR (Groza et al. 2024, Bioinformatics 40:btae406)", None, None, "0.76"),
             ("PhenoTagger v1.1, CNN (Luo et al. 2021)", "0.802", "0.703", "0.749"),
             ("PhenoTagger v1.1, BioBERT (Luo et al. 2021)", "0.773", "0.741", "0.757")]


def rebuild_documents(mentions_path, target):
    """GSC+ abstracts as 'DOC<TAB>text' lines, in first-seen order; returns (documents, mentions)."""
    texts = OrderedDict()
    count = 0
    with open(mentions_path, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            text = record["context_left"] + record["mention"] + record["context_right"]
            if texts.setdefault(record["doc_id"], text) != text:
                sys.exit(f"document {record['doc_id']} has two different texts in {mentions_path}")
            count += 1
    with open(target, "w", encoding="utf-8") as out:
        for doc_id, text in texts.items():
            out.write(f"{doc_id}\t{' '.join(text.splitlines())}\n")
    return len(texts), count


def pipe(stages, stdin_path, stdout_path):
    """Run ``stages`` (argument lists) as one shell-style pipe; stderr summaries are printed."""
    processes = []
    source = open(stdin_path, "rb")
    for index, stage in enumerate(stages):
        last = index == len(stages) - 1
        sink = open(stdout_path, "wb") if last else subprocess.PIPE
        process = subprocess.Popen(stage, stdin=source, stdout=sink, stderr=subprocess.PIPE)
        if source is not None and hasattr(source, "close"):
            source.close()
        source = process.stdout
        processes.append(process)
    failed = False
    for stage, process in zip(stages, processes):
        _, err = process.communicate()
        for line in err.decode().splitlines():
            if line.startswith("ontolink"):
                print(f"    {line}")
        failed |= process.returncode != 0
    if failed:
        sys.exit(f"pipe failed: {' | '.join(' '.join(stage[2:4]) for stage in stages)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mentions", default=str(SHARED / "gscplus" / "mentions.jsonl"))
    parser.add_argument("--workdir", default="/tmp/ontolink-bench-annotate")
    parser.add_argument("--dense-threshold", type=float, nargs="*", default=[0.9])
    args = parser.parse_args()
    work = working_folder(args.workdir, args.mentions)
    if work is None:
        return
    ontolink = ONTOLINK
    documents = work / "gscplus_docs.txt"
    n_docs, n_mentions = rebuild_documents(args.mentions, documents)
    print(f"GSC+ (public split): {n_docs} abstracts, {n_mentions} gold mentions, rebuilt without spans")
    index = hpo_index(work / "idx-hpo")
    settings = [("dictionary, all of HPO", []),
                ("dictionary, under HP:0000118", ["--roots", "HP:0000118"]),
                ("dictionary --nesting all, under HP:0000118", ["--roots", "HP:0000118", "--nesting", "all"]),
                ("dictionary --nesting ancestor, under HP:0000118", ["--roots", "HP:0000118"])]
    settings += [(f"dictionary + dense n-grams >= {threshold}, under HP:0000118",
                  ["--roots", "HP:0000118", "--index", str(index), "--dense-threshold", str(threshold)])
                 for threshold in args.dense_threshold]
    rows = []
    for name, options in settings:
        print(f"[{name}]")
        scored = work / "scores.json"
        started = time.perf_counter()
        pipe([ontolink + ["annotate", "--ontology", "hpo", "-i", str(documents)] + options,
              ontolink + ["link", "--index", str(index), "--top-k", "5"],
              ontolink + ["eval", "--spans", "--gold", args.mentions, "--ontology", "hpo", "--format", "json"]],
             documents, scored)
        seconds = time.perf_counter() - started
        metrics = json.loads(scored.read_text())["metrics"]
        strict, overlap, spans = metrics["strict"], metrics["overlap"], metrics["span"]
        rows.append([name, f"{_value(strict['predicted']):.0f}", f"{_value(strict['P']):.3f}",
                     f"{_value(strict['R']):.3f}", f"{_value(strict['F1']):.3f}", f"{_value(overlap['F1']):.3f}",
                     f"{_value(spans['F1']):.3f}", f"{seconds:.0f}"])
    for name, precision, recall, f1 in PUBLISHED:
        rows.append([f"published: {name}", "", precision or "", recall or "", f1, "", "", ""])
    print()
    print(tabulate(rows, headers=["setting", "predicted", "P", "R", "F1 (span+id)", "F1 overlap", "F1 span only",
                                  "seconds"], tablefmt="github", disable_numparse=True))


def _value(metric):
    """`eval --format json` gives one run's metric as a number (several runs: {"mean", "std"})."""
    return metric["mean"] if isinstance(metric, dict) else metric


if __name__ == "__main__":
    sys.exit(run_and_record(main, __file__))
