"""Progress for logs: with stderr not a terminal (a log file, CI, nohup) a long command writes a plain progress
line every ONTOLINK_PROGRESS_INTERVAL seconds (count, rate; share done and ETA when the total is known), with no
terminal control characters; --quiet silences it and the one-line summary stays."""

import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from ontolink.core.progress import PlainProgress

REPO = Path(__file__).resolve().parents[1]
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # \r, ESC (colour, cursor moves), backspace: a bar's drawing
LINK_LINE = re.compile(r"^ontolink: link[^:]*: (\d+) mentions, [\d.]+ mentions/s, \d+:\d\d elapsed$")


def _link(index, *options, interval="0.05"):
    """`ontolink link` in its own process over 12,000 mentions, stderr a pipe (not a terminal)."""
    words = ["seizure", "myopia", "absence seizure", "cataract", "focal clonic seizure", "eye abnormality"]
    mentions = "".join(json.dumps({"id": f"m{n}", "mention": words[n % len(words)] + f" {n % 7}"}) + "\n"
                       for n in range(12000))
    env = {**os.environ, "ONTOLINK_PROGRESS_INTERVAL": interval,
           "PYTHONPATH": os.pathsep.join([str(REPO / "toolbox"), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-m", "ontolink", "link", "--index", str(index), "--top-k", "3",
                             *options], input=mentions, capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert len(result.stdout.splitlines()) == 12000
    return result.stderr.splitlines()


def test_a_log_gets_plain_progress_lines_and_quiet_silences_them(tfidf_index):
    lines = _link(tfidf_index)
    progress = [line for line in lines if LINK_LINE.match(line)]
    assert progress, f"no progress line in stderr: {lines}"
    counts = [int(LINK_LINE.match(line).group(1)) for line in progress]
    assert counts == sorted(counts) and counts[-1] > 0 and max(counts) <= 12000, counts
    assert not any(CONTROL.search(line) for line in lines), [line for line in lines if CONTROL.search(line)]
    assert lines[-1].startswith("ontolink: linked 12000 mentions"), lines[-1]

    quiet = _link(tfidf_index, "--quiet")
    assert len(quiet) == 1 and quiet[0].startswith("ontolink: linked "), quiet
    unset = _link(tfidf_index, interval="0")  # 0: no lines, the summary only
    assert len(unset) == 1 and unset[0].startswith("ontolink: linked "), unset


def test_a_line_comes_on_time_while_one_step_takes_longer():
    """The lines come from a clock, not from updates: a step longer than the interval still shows the work is alive,
    and a known total gives the share done and the time left."""
    stream = io.StringIO()
    with PlainProgress(total=400, desc="index (dense)", unit="token", interval=0.05, stream=stream) as progress:
        progress.update(100)
        time.sleep(0.4)  # one long step: no update
    lines = stream.getvalue().splitlines()
    assert len(lines) >= 3, lines
    assert all(re.fullmatch(r"ontolink: index \(dense\): 100/400 tokens \(25%\), [\d.]+ tokens/s, 0:0\d elapsed, "
                            r"ETA \d+:\d\d", line) for line in lines), lines
    count = len(lines)
    time.sleep(0.2)
    assert len(stream.getvalue().splitlines()) == count  # nothing after the work ended


def test_a_bad_interval_is_refused_before_the_work(tfidf_index):
    env = {**os.environ, "ONTOLINK_PROGRESS_INTERVAL": "ten",
           "PYTHONPATH": os.pathsep.join([str(REPO / "toolbox"), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-m", "ontolink", "link", "--index", str(tfidf_index)], input="",
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "ONTOLINK_PROGRESS_INTERVAL='ten'" in result.stderr


def test_start_up_counts_from_the_exec_not_from_the_shell_that_ran_before(tfidf_index):
    """`sh -c 'a && ontolink link ...'` (a Makefile line) runs link in the shell's own process, started before
    `a`: link's summary reports its own start-up, not the seconds `a` took."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "toolbox"), os.environ.get("PYTHONPATH", "")])}
    command = f"sleep 6 && {sys.executable} -m ontolink link -q --index {tfidf_index} seizures"
    result = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    start_up = float(re.search(r"start-up ([\d.]+) s", result.stderr).group(1))
    assert 0 < start_up < 6, result.stderr
