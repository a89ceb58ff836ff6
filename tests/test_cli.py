import json
import shutil
import subprocess
import sys
import threading

import pytest

from conftest import interruptible, jsonl, parse_jsonl, run, shared_path
from ontolink.cli.main import cli

MENTIONS = [
    {"id": "m1", "mention": "seizures", "context_left": "The child had ", "context_right": ".", "doc": "d1"},
    {"id": "m2", "mention": "Myopia", "gold": ["HP:0000545"]},
    {"id": "m3", "mention": "fits", "meta": {"kept": True}},
]


def test_version_and_help_of_every_command():
    assert run("--version").output.startswith("ontolink, version ")
    for name, command in cli.commands.items():
        result = run(name, "--help")
        assert result.exit_code == 0, name
        assert "Examples:" in result.output and f"ontolink {name}" in result.output, name


@pytest.mark.parametrize("via", ["stdin", "file"])
def test_link_adds_ranked_unique_candidates_and_keeps_fields(tfidf_index, tmp_path, via):
    # the index's own scores and order (the default ranker's: tests/test_default_ranker.py)
    if via == "stdin":
        result = run("link", "--index", tfidf_index, "--no-ranker", "--top-k", 5, input=jsonl(MENTIONS))
    else:
        path = tmp_path / "mentions.jsonl"
        path.write_text(jsonl(MENTIONS))
        result = run("link", "--index", tfidf_index, "--no-ranker", "--top-k", 5, "-i", path)
    assert result.exit_code == 0, result.stderr
    records = parse_jsonl(result.stdout)
    assert [record["id"] for record in records] == ["m1", "m2", "m3"]
    assert records[0]["doc"] == "d1" and records[2]["meta"] == {"kept": True}
    for record in records:
        candidates = record["candidates"]
        assert len(candidates) == 5
        assert len({candidate["id"] for candidate in candidates}) == 5
        scores = [candidate["score"] for candidate in candidates]
        assert scores == sorted(scores, reverse=True)
    assert records[0]["candidates"][0]["id"] == "HP:0001250"  # "Seizures" is a synonym of Seizure
    assert records[1]["candidates"][0] == {"id": "HP:0000545", "name": "Myopia", "score": 1.0, "matched_name": "Myopia",
                                           "matched_kind": "name", "matched_by": "exact"}
    assert "linked 3 mentions" in result.stderr


def test_link_writes_gzip_output(tfidf_index, tmp_path):
    out = tmp_path / "linked.jsonl.gz"
    assert run("link", "--index", tfidf_index, "-o", out, input=jsonl(MENTIONS)).exit_code == 0
    assert out.read_bytes()[:2] == b"\x1f\x8b"


@pytest.mark.parametrize("name, line", [
    ("invalid_json_line3.jsonl", 3), ("missing_mention_line2.jsonl", 2), ("not_an_object_line1.jsonl", 1),
    ("latin1_line2.jsonl", 2), ("wrong_types.jsonl", 1),
])
def test_link_bad_line_is_one_line_exit_2(tfidf_index, name, line):
    path = shared_path("bad_inputs", name)
    result = run("link", "--index", tfidf_index, "-i", path)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1].startswith(f"ontolink: error: {path}:{line}: ")
    assert "Traceback" not in result.stderr


def test_link_keeps_records_before_a_bad_line_and_skip_invalid(tfidf_index):
    path = shared_path("bad_inputs", "invalid_json_line3.jsonl")
    result = run("link", "--index", tfidf_index, "-i", path)
    assert [record["id"] for record in parse_jsonl(result.stdout)] == ["m1", "m2"]
    result = run("link", "--index", tfidf_index, "-i", path, "--skip-invalid")
    assert result.exit_code == 0
    assert [record["id"] for record in parse_jsonl(result.stdout)] == ["m1", "m2", "m4"]
    assert "1 invalid line skipped" in result.stderr


def test_link_empty_input_is_empty_output(tfidf_index):
    result = run("link", "--index", tfidf_index, "-i", shared_path("bad_inputs", "empty.jsonl"))
    assert result.exit_code == 0 and result.stdout == ""


def test_link_says_duplicate_ids_and_when_it_stopped_recording_them(tfidf_index, monkeypatch):
    """The first duplicate named with its line and the first's, the rest counted; with a budget for a few dozen
    ids (ONTOLINK_DUPLICATE_IDS_BYTES) the summary says among how many records duplicates were looked for."""
    from ontolink.core.seen_ids import SeenIds

    capacity = SeenIds(budget=1024).capacity
    assert 10 < capacity < 35
    mentions = [{"id": f"m{number}", "mention": "seizures"} for number in range(40)]
    mentions += [{"id": "m1", "mention": "fits"}, {"id": "m2", "mention": "fits"}, {"id": "m35", "mention": "fits"}]
    result = run("link", "--index", tfidf_index, "--top-k", 1, input=jsonl(mentions))
    assert result.exit_code == 0, result.stderr
    assert "<stdin>:41: duplicate id 'm1' (first at line 2)" in result.stderr
    assert "read 43 records, 3 duplicate ids" in result.stderr and "checked among" not in result.stderr
    monkeypatch.setenv("ONTOLINK_DUPLICATE_IDS_BYTES", "1K")
    result = run("link", "--index", tfidf_index, "--top-k", 1, input=jsonl(mentions))
    assert result.exit_code == 0, result.stderr
    assert len(parse_jsonl(result.stdout)) == 43
    assert "<stdin>:41: duplicate id 'm1' (first at line 2)" in result.stderr
    assert f"<stdin>:{capacity + 1}: duplicate ids are checked among the first {capacity} records only" in result.stderr
    assert f"read 43 records, 2 duplicate ids, duplicate ids checked among the first {capacity} records" \
        in result.stderr
    monkeypatch.setenv("ONTOLINK_DUPLICATE_IDS_BYTES", "lots")
    result = run("link", "--index", tfidf_index, "--top-k", 1, input=jsonl(mentions))
    assert result.exit_code == 2 and "ONTOLINK_DUPLICATE_IDS_BYTES='lots' is not a number of bytes" in result.stderr
    assert "Traceback" not in result.stderr


def test_truncated_index_is_refused(tfidf_index, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(tfidf_index, broken)
    (broken / "tfidf.safetensors").write_bytes((broken / "tfidf.safetensors").read_bytes()[:100])
    result = run("link", "--index", broken, input=jsonl(MENTIONS))
    assert result.exit_code == 2 and "damaged or truncated" in result.stderr
    (broken / "tfidf.safetensors").unlink()
    result = run("link", "--index", broken, input=jsonl(MENTIONS))
    assert result.exit_code == 2 and "tfidf.safetensors is missing" in result.stderr
    result = run("link", "--index", tmp_path / "nowhere", input=jsonl(MENTIONS))
    assert result.exit_code == 2 and "not a directory" in result.stderr


def test_index_for_another_ontology_is_refused(tfidf_index):
    lpt = shared_path("sci-zsel", "lpt_kb.json")
    result = run("link", "--index", tfidf_index, "--ontology", lpt, input=jsonl(MENTIONS))
    assert result.exit_code == 2
    assert "was built for ontology hpo_slice.jsonl" in result.stderr and "lpt_kb.json" in result.stderr


@pytest.mark.parametrize("name, words", [
    ("cycle.obo", "is_a cycle: CYC:"), ("not_an_ontology.obo", "not_an_ontology.obo:1: not valid OBO"),
    ("truncated.obo", "truncated.obo:10:"),
])
def test_index_refuses_bad_ontologies(tmp_path, name, words):
    result = run("index", "--ontology", shared_path("bad_inputs", name), "--method", "tfidf", tmp_path / "idx")
    assert result.exit_code == 2 and words in result.stderr
    assert not (tmp_path / "idx").exists()


def test_index_unknown_format_and_missing_file(tmp_path):
    odd = tmp_path / "terms.docx"
    odd.write_text("id,name\n")
    result = run("index", "--ontology", odd, "--method", "tfidf", tmp_path / "idx")
    assert result.exit_code == 2 and "--ontology-format" in result.stderr
    result = run("index", "--ontology", tmp_path / "none.obo", "--method", "tfidf", tmp_path / "idx")
    assert result.exit_code == 2 and "no such ontology file" in result.stderr


def test_dangling_parent_loads_with_warning(tmp_path):
    result = run("index", "--ontology", shared_path("bad_inputs", "dangling_parent.obo"), "--method", "tfidf",
                 tmp_path / "idx")
    assert result.exit_code == 0 and "DANG:999" in result.stderr
    assert json.loads((tmp_path / "idx" / "manifest.json").read_text())["entities"] == 2


def test_config_file_sets_defaults_and_command_line_wins(tfidf_index, tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text(f"index: {tfidf_index}\nlink:\n  top-k: 2\n")
    records = parse_jsonl(run("link", "--config", config, input=jsonl(MENTIONS[:1])).stdout)
    assert len(records[0]["candidates"]) == 2
    records = parse_jsonl(run("link", "--config", config, "--top-k", 4, input=jsonl(MENTIONS[:1])).stdout)
    assert len(records[0]["candidates"]) == 4
    config.write_text("link:\n  top-kk: 2\n")
    result = run("link", "--config", config, "--index", tfidf_index, input="")
    assert result.exit_code == 2 and "top-kk" in result.stderr


def test_eval_formats_and_seeds(tfidf_index, small_ontology_path, tmp_path):
    labeled = [{"id": "a", "mention": "Myopia", "gold": ["HP:0000545"]},
               {"id": "b", "mention": "short sighted", "gold": ["HP:0000545"]},
               {"id": "c", "mention": "fits", "gold": ["HP:0001250"]},
               {"id": "d", "mention": "eye abnormality", "gold": ["HP:0000478"]}]
    linked = tmp_path / "linked.jsonl"
    linked.write_text(run("link", "--index", tfidf_index, input=jsonl(labeled)).stdout)
    result = run("eval", linked, "--ontology", small_ontology_path, "--format", "json")
    assert result.exit_code == 0, result.stderr
    metrics = json.loads(result.stdout)["metrics"]
    assert metrics["all"]["n"] == 4  # one file: plain values
    assert [metrics[group]["n"] for group in ("HO", "LO", "NO")] == [1, 1, 2]
    assert metrics["HO"]["R@1"] == 1.0
    several = json.loads(run("eval", linked, linked, "--ontology", small_ontology_path, "--format", "json").stdout)
    assert several["metrics"]["all"]["R@1"] == {"mean": metrics["all"]["R@1"], "std": 0.0}
    table = run("eval", linked, linked, "--ontology", small_ontology_path, "--format", "markdown").stdout
    assert "| all" in table and "± 0.000" in table
    tsv = run("eval", linked, "--format", "tsv").stdout.splitlines()
    assert tsv[0].split("\t")[:3] == ["mentions", "n", "R@1"]


def test_eval_empty_and_unlabeled_inputs(tfidf_index, tmp_path):
    result = run("eval", shared_path("bad_inputs", "empty.jsonl"))
    assert result.exit_code == 2 and "no records" in result.stderr
    unlabeled = run("link", "--index", tfidf_index, input=jsonl(MENTIONS[:1])).stdout
    result = run("eval", "-", input=unlabeled)
    assert result.exit_code == 2 and "no gold ids" in result.stderr
    gold = tmp_path / "gold.jsonl"
    gold.write_text(jsonl([{**MENTIONS[0], "gold": ["HP:0001250"]}]))
    result = run("eval", "-", "--gold", gold, "--format", "json", input=unlabeled)
    assert json.loads(result.stdout)["metrics"]["all"]["R@1"] == 1.0


def _ontolink(*args):
    return [sys.executable, "-m", "ontolink", *map(str, args)]


def test_closed_pipe_prints_no_traceback(tfidf_index, tmp_path):
    mentions = tmp_path / "many.jsonl"
    mentions.write_text(jsonl([{"id": f"m{n}", "mention": "seizures"} for n in range(5000)]))
    command = " ".join(_ontolink("link", "--index", tfidf_index, "--batch-size", 10, "-i", mentions))
    result = subprocess.run(f"set -o pipefail; {command} | head -1", shell=True, executable="/bin/bash",
                            capture_output=True, text=True, timeout=120)
    assert json.loads(result.stdout)["id"] == "m0"
    assert result.stderr == ""
    assert result.returncode == 141  # 128 + SIGPIPE, like a process the signal ended


def test_link_streams_batches_while_input_is_open(tfidf_index):
    link = subprocess.Popen(_ontolink("link", "--index", tfidf_index, "--batch-size", 2), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    link.stdin.write(jsonl([{"id": "m1", "mention": "myopia"}, {"id": "m2", "mention": "fits"}]).encode())
    link.stdin.flush()
    try:
        timer = threading.Timer(60, link.kill)  # a regression must fail, not hang the suite
        timer.start()
        first = link.stdout.readline()  # arrives before stdin is closed
        assert json.loads(first)["id"] == "m1"
        link.stdin.close()
        assert json.loads(link.stdout.readline())["id"] == "m2"
        assert link.wait(timeout=60) == 0
    finally:
        timer.cancel()
        link.kill()


def test_eval_dispatches_retrieved_records(tmp_path):
    folds = []
    for fold, true_rank in enumerate((1, 3)):
        path = tmp_path / f"fold{fold}.jsonl"
        records = [{"pair_id": f"p{n}", "direction": direction, "predicate": "treats", "rank": true_rank,
                    "candidates": [{"id": "x", "score": 1.0}]} for n in range(4) for direction in ("d2t", "t2d")]
        path.write_text(jsonl(records))
        folds.append(path)
    result = run("eval", *folds, "--format", "json")
    assert result.exit_code == 0, result.stderr
    metrics = json.loads(result.stdout)["metrics"]
    assert metrics["d2t"]["MRR"]["mean"] == pytest.approx((1 + 1 / 3) / 2)
    assert metrics["t2d"]["Hits@1"]["mean"] == 0.5 and metrics["t2d"]["Hits@1"]["std"] == 0.5
    result = run("eval", "-", "--format", "json", input=folds[0].read_text())
    assert json.loads(result.stdout)["metrics"]["d2t"]["median_rank"] == 1


def test_eval_tables_of_retrieved_records_name_queries_and_print_plain_median_ranks(tmp_path):
    def retrieved(path, ranks, directions=("d2t", "t2d"), **fields):
        path.write_text(jsonl([{"pair_id": f"p{n}", "direction": direction, "predicate": "treats", "rank": rank,
                                "candidates": [{"id": "x"}], **fields}
                               for n, rank in enumerate(ranks) for direction in directions]))
        return path

    one = retrieved(tmp_path / "one.jsonl", (1, 2, 3))  # median 2
    two = retrieved(tmp_path / "two.jsonl", (1, 2, 3, 4))  # median 2.5
    three = retrieved(tmp_path / "three.jsonl", (2, 3, 4))  # median 3
    result = run("eval", one, "--format", "tsv")
    assert result.exit_code == 0, result.stderr
    header, d2t = (line.split("\t") for line in result.stdout.splitlines()[:2])
    assert header[0] == "queries" and "mentions" not in result.stdout
    assert d2t[header.index("median_rank")] == "2" and d2t[header.index("MRR")] == "0.611"
    result = run("eval", one, three, "--format", "markdown", "--aggregate")
    assert "| queries " in result.stdout and "mentions" not in result.stdout
    assert "| 2.5 ± 0.5 " in result.stdout and "mean ± std over 2 files (--aggregate)" in result.stdout
    result = run("eval", one, three, "--format", "tsv")  # two systems, by their names: side by side
    assert [line.split("\t")[:2] for line in result.stdout.splitlines()[:3]] == [
        ["queries", "file"], ["d2t", "one"], ["d2t", "three"]]
    header, *rows = (line.split("\t") for line in result.stdout.splitlines())
    assert [row[header.index("median_rank")] for row in rows[:2]] == ["2", "3"]
    result = run("eval", "--format", "table", input=two.read_text())
    assert result.stdout.splitlines()[0].startswith("queries ") and " 2.5 " in result.stdout
    t2d_only = retrieved(tmp_path / "t2d.jsonl", (1, 2, 3, 4), directions=("t2d",))
    result = run("eval", t2d_only, "--format", "markdown", "--by-predicate")
    assert result.stdout.startswith("| triples ") and "| t2d treats " in result.stdout
    folds = [retrieved(tmp_path / f"fold-{fold}.jsonl", (2 * fold - 1, 5), directions=("d2t",), fold=fold)
             for fold in (1, 2)]  # as `align cv` writes them
    result = run("eval", *folds, "--format", "table")
    assert result.stdout.startswith("texts ") and "mean ± std over 2 folds" in result.stdout
    assert " 3.5 ± 0.5 " in result.stdout


def test_link_checks_the_ontology_by_hash_without_parsing_it(tfidf_index, small_ontology_path, tmp_path):
    mention = jsonl([{"id": "m1", "mention": "seizures"}])
    same = run("link", "--index", tfidf_index, "--ontology", small_ontology_path, input=mention)
    assert same.exit_code == 0, same.output
    garbage = tmp_path / "garbage.obo"  # not an ontology at all: a parse would fail on it
    garbage.write_text("this is not OBO\n")
    result = run("link", "--index", tfidf_index, "--ontology", garbage, input=mention)
    assert result.exit_code == 2 and "was built for ontology hpo_slice.jsonl" in result.stderr
    assert "garbage.obo (sha256" in result.stderr


# SIGTERM: 143 where an output holds it (ontolink.core.signal_guard), else the signal's own end (a shell says 143)
@pytest.mark.parametrize("signal_name, statuses", [("SIGINT", (130,)), ("SIGTERM", (143, -15))])
def test_ctrl_c_exits_130_quietly(tfidf_index, signal_name, statuses):
    """Ctrl-C (130) or a `kill` while `link` waits for input: no traceback, no abort. Its input stays open,
    as a terminal's does: the thread that reads it is still waiting when the process exits (a daemon holding
    stdin's lock made the interpreter's shutdown abort, status -6)."""
    import signal

    link = subprocess.Popen(_ontolink("link", "--index", tfidf_index, "--batch-size", 1), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=interruptible)
    try:
        link.stdin.write(jsonl([{"id": "m1", "mention": "myopia"}]).encode())
        link.stdin.flush()
        # its first record written: the index is loaded and it waits for more input (however busy the machine)
        assert json.loads(link.stdout.readline())["id"] == "m1"
        link.send_signal(getattr(signal, signal_name))
        link.wait(timeout=60)
        stderr = link.stderr.read()
    finally:
        link.kill()
        link.stdin.close()
    assert link.returncode in statuses and stderr == b""


def test_config_refuses_a_key_no_command_has(tfidf_index, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("top-k: 3\nmin-df: 2\ntopk: 5\n")  # min-df is index's: allowed in a shared file
    result = run("link", "--index", tfidf_index, "--config", config, input="")
    assert result.exit_code == 2 and "no command has an option 'topk'" in result.stderr


def test_top_level_help_lists_whole_short_helps():
    text = " ".join(run("--help").stdout.split())
    assert "eval Score Linked-mention or Retrieved files: Recall@K, MRR, error classes and more. " in text
    assert "gen-aliases Generate aliases for Selected-entity records with an instruction LLM. " in text
    assert "..." not in text.split("Commands:")[1]


@pytest.mark.parametrize("words, expected", [
    ("ontolink index --method ", {"plain,dense", "plain,multivector", "plain,tfidf"}),
    ("ontolink link -i mentions", {"file,mentions"}),
    ("ontolink link --index ", {"dir,"}),
])
def test_shell_completion_offers_registered_names_and_paths(words, expected):
    import os

    env = {**os.environ, "_ONTOLINK_COMPLETE": "bash_complete", "COMP_WORDS": words,
           "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1))}
    result = subprocess.run([sys.executable, "-c", "from ontolink.cli.main import main; main()"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert set(result.stdout.split()) == expected, result.stderr


def test_link_reads_a_glob_of_shards_into_one_stream_or_one_output_per_shard(tfidf_index, tmp_path):
    mentions = [{"id": f"m{number}", "mention": text} for number, text in
                enumerate(["seizures", "red eye", "cataract", "absence seizures", "myopia"])]
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "part-1.jsonl").write_text(jsonl(mentions[:2]), encoding="utf-8")
    (tmp_path / "in" / "part-2.jsonl").write_text(jsonl(mentions[2:]), encoding="utf-8")
    whole = run("link", "--index", tfidf_index, "--top-k", 2, input=jsonl(mentions))
    glob = run("link", "--index", tfidf_index, "--top-k", 2, "-i", tmp_path / "in" / "part-*.jsonl")
    assert glob.exit_code == 0 and glob.stdout == whole.stdout
    per_shard = run("link", "--index", tfidf_index, "--top-k", 2, "-i", tmp_path / "in", "--output-dir",
                    tmp_path / "out")
    assert per_shard.exit_code == 0, per_shard.output
    assert [(tmp_path / "out" / name).read_text() for name in ("part-1.jsonl", "part-2.jsonl")] == \
        ["".join(whole.stdout.splitlines(keepends=True)[:2]), "".join(whole.stdout.splitlines(keepends=True)[2:])]
    refused = run("link", "--index", tfidf_index, "-i", tmp_path / "in", "--output-dir", tmp_path / "in")
    assert refused.exit_code == 2 and "overwritten by its own output" in refused.stderr
    assert run("link", "--index", tfidf_index, "--output-dir", tmp_path / "o", input="").exit_code == 2


def test_running_one_command_imports_that_command_only(small_ontology_path, tmp_path):
    # each command's module is imported when it is run, listed or asked for help: `annotate` starts without the
    # other commands' modules (nor numpy, which they and the indexes import)
    docs = tmp_path / "docs.txt"
    docs.write_text("d1\tThe boy had seizures.\n", encoding="utf-8")
    code = ("import sys; from ontolink.cli.main import main; sys.argv = ['ontolink', 'annotate', '--ontology', sys.argv[1], "
            "'-i', sys.argv[2]]\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('ontolink.cli.commands.')), 'numpy' in sys.modules, "
            "file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", code, str(small_ontology_path), str(docs)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert '"mention": "seizures"' in result.stdout or '"mention":"seizures"' in result.stdout
    assert result.stderr.strip().splitlines()[-1] == "['ontolink.cli.commands.annotate'] False"
    assert list(cli.commands) == ["convert", "annotate", "index", "link", "eval", "select-entities", "gen-aliases",
                                  "filter", "make-pairs", "train", "embed-kg", "align", "cache"]  # all, when listed


@pytest.mark.slow  # exports all-MiniLM-L6-v2 to ONNX int8 into an empty cache
def test_the_first_index_says_the_encoder_was_exported_once(small_ontology_path, tmp_path, monkeypatch):
    monkeypatch.setenv("ONTOLINK_CACHE_DIR", str(tmp_path / "cache"))
    first = run("index", "--ontology", small_ontology_path, tmp_path / "first")
    assert first.exit_code == 0, first.stderr
    assert "; the encoder was exported to ONNX in " in first.stderr
    assert "s, once: the user cache keeps it for every later run (`ontolink cache info`)" in first.stderr
    again = run("index", "--ontology", small_ontology_path, tmp_path / "again")
    assert again.exit_code == 0, again.stderr
    assert "exported to ONNX" not in again.stderr and "from the embedding cache" in again.stderr
