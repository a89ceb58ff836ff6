"""Error anatomy on GSC+: the is_a classes of the top-1 misses of three linkers, the span classes of
`annotate | link`, and what --plot / --format html cost at import.

Three linkers over HPO (the default all-MiniLM-L6-v2 index, a label-free ranker over it, TF-IDF), each
linking the 1,151 GSC+ mentions with --top-k 64; then, as a user runs it:

    ontolink eval frozen.jsonl ranker.jsonl tfidf.jsonl --ontology hpo --format markdown [--table errors]
    ontolink eval ... --plot gsc.png --format html -o gsc.html --errors misses.jsonl

and the GSC+ abstracts as raw text through `annotate --roots HP:0000118 | link | eval --spans`. Last, the
import time of `eval --help` and whether matplotlib is loaded without --plot (median of 5 runs).

    python benchmarks/bench_eval_classes.py [--workdir DIR] [--index DIR]
"""

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from setup_work import ONTOLINK, hpo_index, working_folder  # beside this script
from results_file import run_and_record  # beside this script
from bench_annotate import pipe, rebuild_documents  # beside this script

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("ONTOLINK_SHARED_DATA", REPO.parent / "shared" / "data"))


def ontolink(*args, quiet=False):
    result = subprocess.run(ONTOLINK + [str(arg) for arg in args], capture_output=True, text=True)
    if result.returncode:
        sys.exit(f"ontolink {' '.join(map(str, args[:2]))} failed: {result.stderr[-2000:]}")
    if not quiet:
        for line in result.stderr.splitlines():
            if line.startswith("ontolink") and "warning" not in line:
                print(f"    {line}")
    return result.stdout


def import_profile(arguments):
    """(median ms of importing ontolink.cli.main over 5 runs, whether matplotlib was imported) for one command."""
    times, loaded = [], False
    for _ in range(5):
        result = subprocess.run([sys.executable, "-X", "importtime", "-m", "ontolink", *map(str, arguments)],
                                capture_output=True, text=True)
        for line in result.stderr.splitlines():
            if line.rstrip().endswith("| ontolink.cli.main"):
                times.append(int(line.split("|")[1]) / 1000)
        loaded |= "matplotlib" in result.stderr
    return (statistics.median(times) if times else float("nan")), loaded


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", default="/tmp/ontolink-bench-eval")
    parser.add_argument("--index", help="an HPO index (default: all-MiniLM-L6-v2 built in --workdir)")
    args = parser.parse_args()
    gscplus = SHARED / "gscplus" / "mentions.jsonl"
    work = working_folder(args.workdir, gscplus)
    if work is None:
        return
    frozen_index = hpo_index(args.index or work / "idx-hpo")
    tfidf_index = work / "idx-tfidf"
    if not (tfidf_index / "manifest.json").exists():
        ontolink("index", "--ontology", "hpo", "--method", "tfidf", tfidf_index)
    ranker = work / "ranker"
    if not (ranker / "manifest.json").exists():
        ontolink("train", "ranker", "--index", frozen_index, ranker)
    runs = {"frozen": ["--index", frozen_index], "ranker": ["--index", frozen_index, "--ranker", ranker],
            "tfidf": ["--index", tfidf_index]}
    files = []
    print(f"GSC+ ({gscplus.name}), HPO 2025-01-16, link --top-k 64")
    for label, options in runs.items():
        path = work / f"{label}.jsonl"
        ontolink("link", *options, "--top-k", 64, "-i", gscplus, "-o", path)
        files.append(path)
    labels = [option for label in runs for option in ("--label", label)]
    print("\n" + ontolink("eval", *files, "--ontology", "hpo", "--format", "markdown", quiet=True))
    for label, path in zip(runs, files):
        print(f"\nTop-1 misses of {label} by is_a class:\n")
        print(ontolink("eval", path, "--ontology", "hpo", "--format", "markdown", "--table", "errors", quiet=True))
    ontolink("eval", *files, "--ontology", "hpo", *labels, "--plot", work / "gsc.png", "--format", "html",
             "-o", work / "gsc.html", "--errors", work / "misses.jsonl", quiet=True)
    print(f"\nplot {work / 'gsc.png'} ({(work / 'gsc.png').stat().st_size} bytes), page {work / 'gsc.html'} "
          f"({(work / 'gsc.html').stat().st_size} bytes), misses {work / 'misses.jsonl'}")

    documents = work / "docs.txt"
    count, mentions = rebuild_documents(gscplus, documents)
    spans = work / "annotated_linked.jsonl"
    print(f"\nannotate --roots HP:0000118 | link (frozen) on {count} GSC+ abstracts ({mentions} gold mentions):")
    pipe([ONTOLINK + ["annotate", "--ontology", "hpo", "--roots", "HP:0000118"],
          ONTOLINK + ["link", "--index", str(frozen_index), "--top-k", "1"]], documents, spans)
    print("\n" + ontolink("eval", "--spans", spans, "--gold", gscplus, "--ontology", "hpo", "--format", "markdown",
                          quiet=True))
    print("\n" + ontolink("eval", "--spans", spans, "--gold", gscplus, "--ontology", "hpo", "--format", "markdown",
                          "--table", "errors", quiet=True))

    print("\nimport of ontolink.cli.main (median of 5, ms), and whether matplotlib is loaded:")
    for arguments in (["eval", "--help"], ["eval", files[0], "--ontology", "hpo", "-o", work / "report.json"],
                      ["eval", files[0], "--ontology", "hpo", "-o", work / "report.json", "--plot", work / "one.svg"]):
        milliseconds, loaded = import_profile(arguments)
        shown = " ".join(str(argument).replace(str(work) + "/", "") for argument in arguments)
        print(f"  ontolink {shown}: {milliseconds:.0f} ms, matplotlib {'imported' if loaded else 'not imported'}")


if __name__ == "__main__":
    sys.exit(run_and_record(main, __file__))
