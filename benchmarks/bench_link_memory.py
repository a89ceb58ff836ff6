"""Peak memory (RSS) of `ontolink link` on many distinct mentions, at several --top-k: what the link memo costs.

Mentions are generated: two to four words drawn (seeded) from the words of HPO's names, each text distinct, so
no search result is reused and the memo only grows. Each run is a child process; its peak RSS comes from the
kernel (``wait4``). A run whose RSS passes --rss-cap-gb is stopped there (so that measuring code with an
unbounded memo cannot take a shared machine's memory) and reported as "> cap".

    python benchmarks/bench_link_memory.py [--workdir DIR] [--index DIR] [--mentions 200000] [--top-k 64 512]
        [--code DIR ...]  # toolbox/ directories of checkouts to measure on the same input (default: this one)
"""

import argparse
import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

from results_file import run_and_record  # beside this script
from setup_work import hpo_index, working_folder  # beside this script

REPO = Path(__file__).resolve().parent.parent


def write_mentions(path, count, seed=0):
    """``count`` distinct Mention records made of HPO name words (seeded)."""
    from ontolink.ontology import load_ontology

    words = sorted({word for entity in load_ontology("hpo") for word in entity.name.lower().split() if word.isalpha()})
    generator = random.Random(seed)
    seen = set()
    with open(path, "w", encoding="utf-8") as handle:
        while len(seen) < count:
            text = " ".join(generator.choices(words, k=generator.randint(2, 4)))
            if text not in seen:
                seen.add(text)
                handle.write(json.dumps({"id": f"m{len(seen)}", "mention": text}) + "\n")


def _rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return 0.0
    return 0.0


def peak_rss(command, environment, cap_mb):
    """(peak RSS in MB, seconds, whether it was stopped at the cap) of one child process."""
    started = time.perf_counter()
    child = subprocess.Popen(command, env=environment, stdout=subprocess.DEVNULL)
    capped = threading.Event()

    def watch():
        while child.poll() is None:
            if _rss_mb(child.pid) > cap_mb:
                capped.set()
                child.kill()
                return
            time.sleep(0.2)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    watcher.join()
    if child.returncode != 0 and not capped.is_set():
        raise SystemExit(f"{' '.join(command)} failed with status {child.returncode}")
    return usage.ru_maxrss / 1024, time.perf_counter() - started, capped.is_set()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", default=str(REPO / "benchmarks" / "work"))
    parser.add_argument("--index", help="an index directory (default: the default HPO index, built in --workdir)")
    parser.add_argument("--mentions", type=int, default=200_000)
    parser.add_argument("--top-k", type=int, nargs="+", default=[64, 512])
    parser.add_argument("--code", nargs="+", help="toolbox/ directories of the code to measure, in turn "
                                                 "(default: this checkout's)")
    parser.add_argument("--rss-cap-gb", type=float, default=6.0)
    options = parser.parse_args()
    work = working_folder(options.workdir)
    index = Path(options.index) if options.index else hpo_index(work / "hpo-index")
    mentions = work / f"distinct-{options.mentions}.jsonl"
    if not mentions.exists():
        write_mentions(mentions, options.mentions)
    print(f"link on {options.mentions:,} distinct mentions ({mentions.name}), index {index} "
          f"({json.loads((index / 'manifest.json').read_text())['index']['method']})")
    print(f"{'code':>14} {'top-k':>6} {'peak RSS MB':>12} {'seconds':>8}")
    for code in options.code or [REPO / "toolbox"]:
        code = Path(code).resolve()
        label = subprocess.run(["git", "-C", str(code), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                               text=True).stdout.strip() or code.name
        environment = {**os.environ, "PYTHONPATH": str(code)}
        for top_k in options.top_k:
            command = [sys.executable, "-m", "ontolink", "link", "--index", str(index), "-i", str(mentions),
                       "-o", os.devnull, "--top-k", str(top_k)]
            megabytes, seconds, capped = peak_rss(command, environment, options.rss_cap_gb * 1024)
            shown = f"> {options.rss_cap_gb * 1024:.0f}" if capped else f"{megabytes:.0f}"
            print(f"{label:>14} {top_k:>6} {shown:>12} {seconds:>8.0f}{'  (stopped at the cap)' if capped else ''}",
                  flush=True)


if __name__ == "__main__":
    run_and_record(main, __file__)
