"""Link throughput with the local engine and with Ray (1 and 2 workers), and the start-up cost of Ray.

    ontolink link --index IDX -i ncbi+gscplus.jsonl [--engine ray --workers N]

Input: the 5,133 NCBI-disease + 1,151 GSC+ mentions (6,284), linked against an HPO
index. Each engine runs as a child process (as a user runs it): "wall s" is the
whole process, "command s" the command's own "linked N mentions in S s" (from the
first record read to the last written, so for Ray it includes starting a local
cluster and the actors loading the index and encoder). Prints mentions/s and the
ratio to local for each, checks that every output is byte-identical to the local
one, and times `ray.init` + `ray.shutdown` of a local cluster alone and one trivial
Ray Data execution (what each window of batches and each shard pays to start).

    python benchmarks/bench_ray.py [--workdir DIR] [--index DIR] [--workers 1 2] [--repeat N]
"""

import argparse
import filecmp
import re
import subprocess
import sys
import time
from pathlib import Path

from tabulate import tabulate

from setup_work import ONTOLINK, hpo_index, working_folder  # beside this script
from results_file import run_and_record  # beside this script

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data"


def run_link(ontolink, index, mentions, output, engine_args):
    started = time.perf_counter()
    result = subprocess.run(ontolink + ["link", "--index", str(index), "-i", str(mentions), "-o", str(output),
                                        *engine_args], capture_output=True, text=True)
    wall = time.perf_counter() - started
    if result.returncode:
        sys.exit(result.stderr)
    linked, seconds = re.search(r"linked (\d+) mentions in ([\d.]+) s", result.stderr).groups()
    return int(linked), float(seconds), wall


def ray_start_up_seconds():
    """Seconds to start a local cluster, to run one trivial batch through the engine's Ray Data pipeline
    (an execution: planning, one actor started, the result back; each window of batches and each shard
    pays it), and to shut the cluster down."""
    code = ("import time; from ontolink.engines import open_engine; t = time.perf_counter(); "
            "engine = open_engine('ray', workers=1, device='cpu'); u = time.perf_counter(); "
            "assert list(engine.map(len, [[1, 2]])) == [2]; v = time.perf_counter(); engine.close(); "
            "print(u - t, v - u, time.perf_counter() - v)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    return [float(value) for value in result.stdout.split()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", default="/tmp/ontolink-bench-ray")
    parser.add_argument("--index", help="an HPO index (default: all-MiniLM-L6-v2 built in --workdir)")
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--repeat", type=int, default=1, help="runs of each engine (the best is kept)")
    args = parser.parse_args()
    sources = [SHARED / "ncbi_disease" / "unlabeled_mentions.jsonl", SHARED / "gscplus" / "mentions.jsonl"]
    work = working_folder(args.workdir, *sources)
    if work is None:
        return
    ontolink = ONTOLINK
    index = hpo_index(args.index or work / "idx-hpo")
    mentions = work / "ncbi+gscplus.jsonl"
    mentions.write_text("".join(source.read_text(encoding="utf-8") for source in sources), encoding="utf-8")

    engines = [("local", [])] + [(f"ray, {n} worker{'s' if n > 1 else ''}", ["--engine", "ray", "--workers", str(n)])
                                 for n in args.workers]
    rows, local_rate = [], None
    for label, engine_args in engines:
        output = work / f"linked-{label.replace(' ', '').replace(',', '-')}.jsonl"
        linked, seconds, wall = min((run_link(ontolink, index, mentions, output, engine_args)
                                     for _ in range(args.repeat)), key=lambda run: run[2])
        rate = linked / wall
        local_rate = local_rate or rate
        same = "reference" if not engine_args else filecmp.cmp(work / "linked-local.jsonl", output, shallow=False)
        rows.append([label, linked, f"{wall:.1f}", f"{seconds:.1f}", f"{rate:.0f}", f"{rate / local_rate:.2f}", same])
    print(tabulate(rows, headers=["engine", "mentions", "wall s", "command s", "mentions/s (wall)",
                                  "ratio to local", "byte-identical"]))
    start, execution, stop = ray_start_up_seconds()
    print(f"\nlocal Ray cluster alone: ray.init {start:.1f} s, one trivial Ray Data execution {execution:.1f} s, "
          f"ray.shutdown {stop:.1f} s")


if __name__ == "__main__":
    sys.exit(run_and_record(main, __file__))
