"""Each benchmark script writes its own results file, ``benchmarks/results/<script>.md``.

A script's ``__main__`` block runs ``main`` through :func:`run_and_record`: what the script prints on
stdout is shown as usual and, when ``main`` ends without an error, also written under a header that
says where the numbers come from (commit, machine, date, exact command line). Numbers quoted in the
documentation are copied from these files, never typed in by hand, and the next run replaces them.

A run that measures nothing (its shared data absent) calls :func:`nothing_measured` and leaves the
last results file as it was. A benchmark started by another benchmark writes no file of its own: its
output belongs to the parent's.
"""

import io
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
REPO = BENCHMARKS.parent
RESULTS = BENCHMARKS / "results"
# Set while a benchmark records, so that a benchmark it starts as a child process does not record too.
RECORDING = "ONTOLINK_BENCHMARK_RECORDING"

_measured = {"nothing": False}


class _Tee(io.TextIOBase):
    """Writes to the terminal's stream and keeps a copy."""

    def __init__(self, stream):
        self.stream, self.copy = stream, io.StringIO()

    def write(self, text):
        self.copy.write(text)
        return self.stream.write(text)

    def flush(self):
        self.stream.flush()

    def isatty(self):
        return self.stream.isatty()

    @property
    def encoding(self):
        return self.stream.encoding


def nothing_measured(message):
    """Say why nothing was measured; the script's results file stays as the last run left it."""
    _measured["nothing"] = True
    print(message)


def commit():
    """The checked-out commit, marked when the code differs from it (the numbers are then not that commit's)."""
    def git(*args):
        return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True).stdout.strip()

    head = git("rev-parse", "--short=12", "HEAD") or "unknown (not a git checkout)"
    changed = git("status", "--porcelain", "--", "toolbox", "benchmarks/*.py", "pyproject.toml")
    return f"{head} with uncommitted changes" if changed else head


def machine():
    """CPU count (usable of all), the CPU's model name, Python and OS."""
    model = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = f", load average {os.getloadavg()[0]:.1f} at start" if hasattr(os, "getloadavg") else ""
    return (f"{usable} of {os.cpu_count()} CPUs usable, {model}; Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}{load}")


def command_line(script, argv):
    try:
        shown = Path(script).resolve().relative_to(REPO)
    except ValueError:
        shown = Path(script)
    return shlex.join(["python", str(shown), *argv])


def header_facts(script, argv):
    """What the header says, taken when the run starts (the code and the load of that moment)."""
    return {"started": time.time(), "commit": commit(), "machine": machine(),
            "command": command_line(script, argv)}


def header(script, facts, name=None):
    return "\n".join([
        f"# {name or Path(script).stem}",
        "",
        f"- commit: {facts['commit']}",
        f"- machine: {facts['machine']}",
        f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(facts['started']))}, "
        f"{time.time() - facts['started']:.0f} s of wall time",
        f"- command: `{facts['command']}`",
        "",
        "Written by the script itself; the next run replaces it.",
        "",
    ])


def write_results(script, output, facts, name=None):
    """``benchmarks/results/<script>.md`` (``<name>.md`` when given): the header and what the script printed,
    written atomically."""
    RESULTS.mkdir(exist_ok=True)
    target = RESULTS / f"{name or Path(script).stem}.md"
    text = header(script, facts, name) + "\n```text\n" + output.rstrip("\n") + "\n```\n"
    handle, temporary = tempfile.mkstemp(dir=RESULTS, prefix=f".{target.name}.")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temporary, target)
    return target


def run_and_record(main, script, name=None):
    """Run ``main()`` with stdout copied; on success write the copy to the script's results file, or to
    ``<name>.md`` (a part of a benchmark run alone, whose output must not replace the whole run's file)."""
    if os.environ.get(RECORDING):
        return main()
    os.environ[RECORDING] = Path(script).stem
    facts = header_facts(script, sys.argv[1:])
    tee = _Tee(sys.stdout)
    sys.stdout = tee
    try:
        status = main()
    finally:
        sys.stdout = tee.stream
        del os.environ[RECORDING]
    if status in (None, 0) and not _measured["nothing"] and tee.copy.getvalue().strip():
        target = write_results(script, tee.copy.getvalue(), facts, name)
        print(f"results written to {target}", file=sys.stderr)
    return status
