"""benchmarks/results_file.py: a benchmark's output goes to benchmarks/results/<script>.md under a header
saying where it comes from; a run that measured nothing, or a benchmark run by another, writes no file."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = """
import sys
sys.path.insert(0, {benchmarks!r})
import results_file
results_file.RESULTS = results_file.Path({results!r})

def main():
    if "--absent" in sys.argv:
        results_file.nothing_measured("data absent; nothing measured")
        return 0
    if "--child" in sys.argv:
        import subprocess
        subprocess.run([sys.executable, __file__.replace("bench_example", "bench_child")], check=True)
    print("R@1 0.747 | 2,063 mentions/s")
    return 0

sys.exit(results_file.run_and_record(main, __file__, "bench_example_part" if "--part" in sys.argv else None))
"""


def run_benchmark(tmp_path, *args):
    script = tmp_path / "bench_example.py"
    for name in ("bench_example.py", "bench_child.py"):
        (tmp_path / name).write_text(SCRIPT.format(benchmarks=str(REPO / "benchmarks"), results=str(tmp_path / "results")))
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, check=True)


def test_a_run_writes_its_output_under_a_header(tmp_path):
    shown = run_benchmark(tmp_path, "--repeat", "3")
    assert "R@1 0.747 | 2,063 mentions/s" in shown.stdout  # still printed
    text = (tmp_path / "results" / "bench_example.md").read_text(encoding="utf-8")
    header, output = text.split("```text\n")
    assert header.startswith("# bench_example\n")
    assert "- commit: " in header and "- date: " in header and " UTC" in header
    assert "CPUs usable" in header.split("- machine: ")[1].splitlines()[0]
    assert header.split("- command: ")[1].splitlines()[0].endswith("bench_example.py --repeat 3`")
    assert output == "R@1 0.747 | 2,063 mentions/s\n```\n"
    assert not list((tmp_path / "results").glob(".*"))  # the temporary file was renamed


def test_nothing_measured_leaves_the_last_results_file(tmp_path):
    run_benchmark(tmp_path)
    before = (tmp_path / "results" / "bench_example.md").read_text(encoding="utf-8")
    shown = run_benchmark(tmp_path, "--absent")
    assert "nothing measured" in shown.stdout
    assert (tmp_path / "results" / "bench_example.md").read_text(encoding="utf-8") == before


def test_a_benchmark_started_by_another_writes_no_file_of_its_own(tmp_path):
    shown = run_benchmark(tmp_path, "--child")
    assert shown.stdout.count("R@1 0.747") == 2  # the child ran and printed
    assert [path.name for path in (tmp_path / "results").iterdir()] == ["bench_example.md"]


def test_a_part_run_alone_writes_its_own_file_and_leaves_the_whole_runs(tmp_path):
    run_benchmark(tmp_path)
    whole = (tmp_path / "results" / "bench_example.md").read_text(encoding="utf-8")
    run_benchmark(tmp_path, "--part")
    assert (tmp_path / "results" / "bench_example.md").read_text(encoding="utf-8") == whole
    part = (tmp_path / "results" / "bench_example_part.md").read_text(encoding="utf-8")
    assert part.startswith("# bench_example_part\n") and "bench_example.py --part`" in part
