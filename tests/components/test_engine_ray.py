"""The Ray engine (Ray Data ``map_batches`` over an actor pool) on a real local Ray cluster (2 CPUs,
started once for this module): the same bytes as the local engine, bad records, an actor killed mid-run."""

import json
import logging
import os
import signal

import pytest
from conftest import interruptible, run, shared_slice

from ontolink.indexes.artifact import load_index
from ontolink.engines import open_engine
from ontolink.core.io import read_records, record_batches
from ontolink.linking.link import LinkBatches, link_mentions

pytestmark = pytest.mark.slow  # loads all-MiniLM-L6-v2 in each actor


@pytest.fixture(scope="module")
def ray_cluster():
    import ray

    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def mentions(tmp_path_factory):
    return shared_slice(tmp_path_factory.mktemp("gscplus"), 200, "gscplus", "mentions.jsonl")


def test_link_on_ray_writes_the_same_bytes_as_local(ray_cluster, dense_index, mentions):
    local = run("link", "--index", dense_index, "--top-k", 5, "--batch-size", 16, "-i", mentions)
    assert local.exit_code == 0, local.output
    assert len(local.stdout.splitlines()) == 200
    for workers in (1, 2):  # the file read by a Ray Data task
        on_ray = run("link", "--index", dense_index, "--top-k", 5, "--batch-size", 16, "-i", mentions,
                     "--engine", "ray", "--workers", workers)
        assert on_ray.exit_code == 0, on_ray.output
        assert on_ray.stdout == local.stdout, workers
    # stdin, read here and sent to Ray Data in windows
    on_ray = run("link", "--index", dense_index, "--top-k", 5, "--batch-size", 16, "--engine", "ray", "--workers", 2,
                 input=mentions.read_text(encoding="utf-8"))
    assert on_ray.exit_code == 0, on_ray.output
    assert on_ray.stdout == local.stdout


def test_link_of_a_subset_on_ray_writes_the_same_bytes_as_local(ray_cluster, dense_index, mentions, tmp_path):
    """`link --entities`: each actor loads the index from its directory and keeps to the subset the command chose
    (it travels with the batch function), so its candidates are local's."""
    ids = load_index(dense_index, device="cpu").entity_ids[::5]
    (tmp_path / "ids.txt").write_text("\n".join(ids) + "\n")
    options = ("--index", dense_index, "--entities", tmp_path / "ids.txt", "--top-k", 5, "--batch-size", 32,
               "-i", mentions)
    local = run("link", *options)
    assert local.exit_code == 0, local.output
    records = [json.loads(line) for line in local.stdout.splitlines()]
    assert all({candidate["id"] for candidate in record["candidates"]} <= set(ids) for record in records)
    on_ray = run("link", *options, "--engine", "ray", "--workers", 2)
    assert on_ray.exit_code == 0, on_ray.output
    assert on_ray.stdout == local.stdout and len(records) == 200


def test_link_with_a_ranker_on_ray_writes_the_same_bytes_as_local(ray_cluster, dense_index, mentions, tmp_path):
    """Each actor loads the ranker from its directory (nothing bound travels) and features the same."""
    from ontolink.ranking.train import train_ranker
    from ontolink.ranking.queries import synonym_queries

    loaded = load_index(dense_index, device="cpu")
    train_ranker(loaded, tmp_path / "ranker", synonym_queries(loaded, 100), prior="none")
    options = ("--index", dense_index, "--ranker", tmp_path / "ranker", "--top-k", 5, "--batch-size", 32, "-i", mentions)
    local = run("link", *options)
    assert local.exit_code == 0, local.output
    on_ray = run("link", *options, "--engine", "ray", "--workers", 2)
    assert on_ray.exit_code == 0, on_ray.output
    assert on_ray.stdout == local.stdout and len(local.stdout.splitlines()) == 200


def test_a_bad_record_on_ray_is_the_local_error_after_the_records_before_it(ray_cluster, dense_index, mentions,
                                                                           tmp_path):
    lines = mentions.read_text(encoding="utf-8").splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(lines[:40]) + '{"id": "broken", "mention": \n' + "".join(lines[40:60]), encoding="utf-8")
    results = [run("link", "--index", dense_index, "--top-k", 3, "--batch-size", 16, "-i", bad, *engine)
               for engine in ((), ("--engine", "ray", "--workers", 2))]
    for result in results:
        assert result.exit_code == 2
        assert result.stderr.strip().splitlines()[-1].startswith(f"ontolink: error: {bad}:41: ")
        assert "Traceback" not in result.stderr
        assert len(result.stdout.splitlines()) == 40
    assert results[0].stdout == results[1].stdout
    # skipped instead: the reading task's warning and counts reach the command's stderr
    skipped = run("link", "--index", dense_index, "--top-k", 3, "-i", bad, "--skip-invalid", "--engine", "ray")
    assert skipped.exit_code == 0, skipped.output
    assert len(skipped.stdout.splitlines()) == 60
    assert f"{bad}:41: " in skipped.stderr and "(skipped)" in skipped.stderr
    assert "read 60 records, 1 invalid line skipped" in skipped.stderr


def test_a_killed_actor_is_restarted_and_its_batch_redone(ray_cluster, dense_index, mentions, tmp_path, capsys):
    records = list(read_records(mentions))
    loaded = load_index(dense_index, device="cpu")
    expected = list(link_mentions(records, loaded, top_k=5, batch_size=8, device="cpu"))

    class KilledOnItsFifthBatch(LinkBatches):
        """Links as the step does; the actor running the fifth batch is killed (SIGKILL, once)."""

        def __call__(self, batch):
            with open(tmp_path / "runs", "a", encoding="utf-8") as runs:
                runs.write(f"{batch[0]['id']} {os.getpid()}\n")
            if batch[0]["id"] == records[32]["id"] and not (tmp_path / "killed").exists():
                (tmp_path / "killed").touch()
                os.kill(os.getpid(), signal.SIGKILL)
            return super().__call__(batch)

    function = KilledOnItsFifthBatch(loaded, top_k=5, device="cpu")
    with open_engine("ray", workers=2, device="cpu") as engine:
        got = [record for batch in engine.map(function, record_batches(iter(records), 8)) for record in batch]
    assert json.dumps(got) == json.dumps(expected)  # none lost, none duplicated, same order
    runs = [line.split() for line in (tmp_path / "runs").read_text(encoding="utf-8").splitlines()]
    killed_pid, redone_pid = [pid for first_id, pid in runs if first_id == records[32]["id"]]
    assert killed_pid != redone_pid  # redone by another process: the restarted actor or the other one
    assert capsys.readouterr().out == ""  # Ray's notice of the retry went to stderr, not our output


def test_an_exception_of_a_batch_is_raised_after_the_batches_before_it(ray_cluster):
    class FailsOnBatchThree:  # defined here, so that it travels to the actors by value
        def __call__(self, batch):
            if batch == [3]:
                raise KeyError("three")
            return [number * number for number in batch]

    with open_engine("ray", workers=2, device="cpu") as engine:
        results = engine.map(FailsOnBatchThree(), ([number] for number in range(8)))
        assert [next(results) for _ in range(3)] == [[0], [1], [4]]
        with pytest.raises(KeyError, match="three"):
            next(results)


def test_index_on_ray_writes_the_same_faiss_index_as_local(ray_cluster, dense_index, small_ontology_path, tmp_path):
    for workers in (1, 2):
        directory = tmp_path / f"ray{workers}"
        # --no-cache: every name is encoded by the actors, none reused from the local build's cache
        result = run("index", "--ontology", small_ontology_path, "--no-cache", "--engine", "ray", "--workers",
                     workers, directory)
        assert result.exit_code == 0, result.output
        for name in ("index.faiss", "names.json"):
            assert (directory / name).read_bytes() == (dense_index / name).read_bytes(), (workers, name)


def test_engine_options_are_refused_where_they_do_not_apply(small_ontology_path, tmp_path):
    result = run("index", "--ontology", small_ontology_path, "--method", "tfidf", "--engine", "ray", tmp_path / "x")
    assert result.exit_code == 2 and "builds in this process only" in result.stderr
    result = run("index", "--ontology", small_ontology_path, "--workers", 2, tmp_path / "x")
    assert result.exit_code == 2 and "--workers and --ray-address need --engine ray" in result.stderr


def test_select_entities_on_ray_selects_what_local_does(ray_cluster, dense_index, small_ontology_path, mentions):
    common = ("select-entities", "--ontology", small_ontology_path, "--index", dense_index, "-i", mentions)
    local, on_ray = run(*common), run(*common, "--engine", "ray", "--workers", 2)
    assert local.exit_code == 0 and on_ray.exit_code == 0, on_ray.output
    assert local.stdout and on_ray.stdout == local.stdout


def test_gen_aliases_on_ray_answers_as_local_and_a_rerun_makes_no_call(ray_cluster, hpo, small_ontology_path,
                                                                      tmp_path, monkeypatch):
    # the default SmolLM2's converted copy is kept between sessions there (as in test_gen_aliases.py);
    # the engine forwards ONTOLINK_* settings to its actors
    monkeypatch.setenv("ONTOLINK_CACHE_DIR", os.environ.get("ONTOLINK_TEST_MODEL_CACHE",
                                                            os.path.expanduser("~/.cache/ontolink-test")))
    cache_path = tmp_path / "completions.sqlite3"
    monkeypatch.setattr("ontolink.aliases.llm.response_cache.default_cache_path", lambda: cache_path)
    entities = "".join(json.dumps(hpo[entity_id].to_record()) + "\n"
                       for entity_id in ("HP:0001250", "HP:0000316", "HP:0002650"))
    common = ("gen-aliases", "--ontology", small_ontology_path, "--device", "cpu", "--max-new-tokens", 16,
              "--batch-size", 1)
    local = run(*common, "--no-cache", input=entities)
    on_ray = run(*common, "--engine", "ray", "--workers", 2, input=entities)
    rerun = run(*common, "--engine", "ray", input=entities)
    assert local.exit_code == on_ray.exit_code == rerun.exit_code == 0, on_ray.output

    def replies(result):
        return [(record["id"], record["aliases"], record["llm"]["prompt_tokens"], record["llm"]["completion_tokens"])
                for record in map(json.loads, result.stdout.splitlines())]

    assert replies(on_ray) == replies(local) == replies(rerun) and len(replies(local)) == 3
    prompt_tokens = sum(reply[2] for reply in replies(on_ray))
    completion_tokens = sum(reply[3] for reply in replies(on_ray))
    assert f"3 LLM calls ({prompt_tokens} prompt + {completion_tokens} completion tokens" in on_ray.stderr
    assert "0 LLM calls" in rerun.stderr and "3 cached" in rerun.stderr


def test_link_on_ray_writes_one_output_shard_per_input_shard(ray_cluster, dense_index, mentions, tmp_path):
    import gzip

    lines = mentions.read_text(encoding="utf-8").splitlines(keepends=True)
    shards = tmp_path / "shards"
    shards.mkdir()
    (shards / "a.jsonl").write_text("".join(lines[:70]), encoding="utf-8")
    with gzip.open(shards / "b.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write("".join(lines[70:]))
    local = run("link", "--index", dense_index, "--top-k", 5, "-i", mentions)
    result = run("link", "--index", dense_index, "--top-k", 5, "-i", shards, "--output-dir", tmp_path / "out",
                 "--engine", "ray", "--workers", 2)
    assert result.exit_code == 0, result.output
    assert "from 2 shards" in result.stderr
    expected = local.stdout.splitlines(keepends=True)
    assert (tmp_path / "out" / "a.jsonl").read_text(encoding="utf-8") == "".join(expected[:70])
    with gzip.open(tmp_path / "out" / "b.jsonl.gz", "rt", encoding="utf-8") as handle:
        assert handle.read() == "".join(expected[70:])


def test_ctrl_c_shuts_the_local_cluster_down(dense_index, mentions):
    import signal
    import subprocess
    import sys

    env = {name: value for name, value in os.environ.items() if name != "RAY_ADDRESS"}  # its own local cluster
    link = subprocess.Popen([sys.executable, "-m", "ontolink", "link", "--index", str(dense_index), "--batch-size", "1",
                             "-i", str(mentions), "--engine", "ray"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, preexec_fn=interruptible)
    try:
        assert json.loads(link.stdout.readline())["candidates"]  # the cluster is up and linking
        cluster = descendants(link.pid)
        link.send_signal(signal.SIGINT)
        _, stderr = link.communicate(timeout=120)
    finally:
        link.kill()
    assert link.returncode == 130 and b"Traceback" not in stderr
    assert cluster and not running(cluster)


def descendants(pid):
    """The ids of the processes below ``pid`` (a local Ray cluster's GCS, raylet, workers)."""
    import subprocess

    children = {}
    for line in subprocess.run(["ps", "-eo", "pid=,ppid="], capture_output=True, text=True).stdout.splitlines():
        child, parent = map(int, line.split())
        children.setdefault(parent, []).append(child)
    found, todo = [], [pid]
    while todo:
        below = children.get(todo.pop(), [])
        found.extend(below)
        todo.extend(below)
    return found


def running(pids, seconds=15):
    """Those of ``pids`` still running (not exited, nor a zombie) after up to ``seconds``."""
    import time

    def alive(pid):
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
                return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
        except FileNotFoundError:
            return False

    deadline = time.monotonic() + seconds
    while [pid for pid in pids if alive(pid)] and time.monotonic() < deadline:
        time.sleep(0.5)
    return [pid for pid in pids if alive(pid)]
