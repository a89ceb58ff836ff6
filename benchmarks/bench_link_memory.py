"""Peak memory (RSS) of `ontolink link` on many distinct mentions, at several --top-k: what the link memo costs.

Mentions are generated: two to four words drawn (seeded) from the words of HPO's names, each text distinct, so
no search result is reused and the memo only grows. Each run is a child process, all started at once (a busy
shared machine would not finish them one after the other); its peak RSS comes from the kernel (VmHWM, then
``wait4``). A run whose RSS passes --rss-cap-gb is stopped there (so that code with an unbounded memo cannot
take a shared machine's memory), as is one still going at --deadline-minutes: both are reported as "> peak",
with the number of mentions it had written when it was stopped (its stdout is counted, line by line, and
thrown away).

    python benchmarks/bench_link_memory.py [--workdir DIR] [--index DIR] [--mentions 20000 200000]
        [--top-k 64 512] [--code DIR ...]  # toolbox/ directories of checkouts to measure on the same input
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
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


def _status_mb(pid, field):
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return 0.0
    return 0.0


class Run:
    """One `link` child process, watched: its peak RSS (VmHWM while it runs, the kernel's ``wait4`` figure
    when it ends), stopped when its RSS passes ``cap_mb`` or when ``deadline`` (a monotonic time) passes."""

    def __init__(self, command, environment, cap_mb, deadline):
        self.started = time.monotonic()
        # stderr goes to a file: a pipe nobody reads until the end could fill and stop the child
        self.errors = tempfile.TemporaryFile()
        self.child = subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=self.errors)
        self.cap_mb, self.deadline = cap_mb, deadline
        self.peak_mb, self.stopped, self.seconds = 0.0, None, None
        self.lines = 0  # output records read so far: how far a stopped run got
        self.ended = None  # when the watcher first saw the child gone
        self.finished = False  # set once ``wait`` has reaped the child (polling it here would reap it first)
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()
        self.counter = threading.Thread(target=self._count, daemon=True)
        self.counter.start()

    def _count(self):
        while chunk := self.child.stdout.read1(1 << 20):
            self.lines += chunk.count(b"\n")

    def _watch(self):
        while not self.finished:
            rss = _status_mb(self.child.pid, "VmRSS")
            if rss == 0:  # ended (a zombie until ``wait`` reaps it): nothing left to watch or stop
                self.ended = self.ended or time.monotonic()
                time.sleep(0.5)
                continue
            self.peak_mb = max(self.peak_mb, _status_mb(self.child.pid, "VmHWM"))
            if rss > self.cap_mb:
                self.stopped = "stopped at the RSS cap"
            elif time.monotonic() > self.deadline:
                self.stopped = "stopped at the deadline, unfinished: peak so far"
            if self.stopped:
                self.child.kill()
                self.ended = time.monotonic()
                return
            time.sleep(0.5)

    def wait(self):
        _, status, usage = os.wait4(self.child.pid, 0)
        self.finished = True
        # when it ended, not when its turn to be reaped came (runs are reaped in the order they were started)
        self.seconds = (self.ended or time.monotonic()) - self.started
        self.thread.join()
        self.counter.join()
        self.peak_mb = max(self.peak_mb, usage.ru_maxrss / 1024)
        code = os.waitstatus_to_exitcode(status)
        if code != 0 and not self.stopped:
            self.errors.seek(0)
            raise SystemExit(f"link failed with status {code}: {self.errors.read().decode()[-500:]}")
        return self


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", default=str(REPO / "benchmarks" / "work"))
    parser.add_argument("--index", help="an index directory (default: the default HPO index, built in --workdir)")
    parser.add_argument("--mentions", type=int, nargs="+", default=[20_000, 200_000],
                        help="numbers of distinct mentions, each a run of every --code at every --top-k")
    parser.add_argument("--top-k", type=int, nargs="+", default=[64, 512])
    parser.add_argument("--code", nargs="+", help="toolbox/ directories of the code to measure, in turn "
                                                 "(default: this checkout's)")
    parser.add_argument("--labels", nargs="+", help="a name for each --code directory (default: its git commit)")
    parser.add_argument("--rss-cap-gb", type=float, default=6.0)
    parser.add_argument("--deadline-minutes", type=float, default=60.0,
                        help="stop every run still going after this long (reported as unfinished)")
    options = parser.parse_args()
    work = working_folder(options.workdir)
    index = Path(options.index) if options.index else hpo_index(work / "hpo-index")
    inputs = {}
    for count in options.mentions:
        inputs[count] = work / f"distinct-{count}.jsonl"
        if not inputs[count].exists():
            write_mentions(inputs[count], count)
    print(f"link on {' and '.join(f'{count:,}' for count in options.mentions)} distinct mentions, index {index} "
          f"({json.loads((index / 'manifest.json').read_text())['index']['method']}); every run at once, "
          f"RSS cap {options.rss_cap_gb:g} GB, deadline {options.deadline_minutes:g} min")
    deadline = time.monotonic() + options.deadline_minutes * 60
    runs = []
    codes = options.code or [REPO / "toolbox"]
    for position, code in enumerate(codes):
        code = Path(code).resolve()
        label = (options.labels[position] if options.labels and position < len(options.labels) else
                 subprocess.run(["git", "-C", str(code), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                                text=True).stdout.strip() or code.name)
        print(f"{label}: {code}")
        environment = {**os.environ, "PYTHONPATH": str(code)}
        for count, mentions in inputs.items():
            for top_k in options.top_k:
                command = [sys.executable, "-m", "ontolink", "link", "--index", str(index), "-i", str(mentions),
                           "--top-k", str(top_k)]
                runs.append((label, count, top_k, Run(command, environment, options.rss_cap_gb * 1024, deadline)))
    print(f"{'code':>24} {'mentions':>9} {'top-k':>6} {'peak RSS MB':>12} {'seconds':>8}")
    for label, count, top_k, run in runs:
        run.wait()
        shown = f">= {run.peak_mb:.0f}" if run.stopped else f"{run.peak_mb:.0f}"
        note = f"  ({run.stopped}, after {run.lines:,} of {count:,} mentions)" if run.stopped else ""
        print(f"{label:>24} {count:>9,} {top_k:>6} {shown:>12} {run.seconds:>8.0f}{note}", flush=True)
    print('">= N": the run was stopped (RSS cap or deadline) before it finished; N is its peak RSS until then.')


if __name__ == "__main__":
    run_and_record(main, __file__)
