"""Deadlines of the OpenAI-compatible client against real slow servers on 127.0.0.1: a reply sent a byte at a time
(each byte restarted the socket timeout: no request ever gave up), a run past --run-timeout, and Ctrl-C with eight
requests in flight (it exited only when they ended, 29.8 s against a slow server)."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import interruptible, jsonl
from ontolink.aliases.llm.openai_http import OpenAIBackend
from ontolink.core.errors import OntolinkError

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "toolbox"
MESSAGES = [{"role": "user", "content": "Other names of 'Seizure'?"}]
REPLY = json.dumps({"choices": [{"message": {"content": "fits\nconvulsions"}}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 2}}).encode()


def _serve(answer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                answer(self)
            except OSError:  # the client went away: what these tests want
                pass

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/v1"


@pytest.fixture
def server():
    started = []

    def start(answer):
        httpd, url = _serve(answer)
        started.append(httpd)
        return url

    yield start
    for httpd in started:
        httpd.shutdown()
        httpd.server_close()


def _drip(handler, seconds=20.0):
    """Headers at once, then a byte every 0.05 s for ``seconds``: never a socket timeout, never a whole reply."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(REPLY) + 10_000))
    handler.end_headers()
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        handler.wfile.write(b" ")
        handler.wfile.flush()
        time.sleep(0.05)


def test_a_reply_sent_a_byte_at_a_time_ends_at_the_request_deadline(server):
    url = server(_drip)
    backend = OpenAIBackend(model="m", base_url=url, api_key_env=None, retries=0, timeout=1.0)
    started = time.monotonic()
    with pytest.raises(OntolinkError, match=r"did not send a whole reply within 1 s \(--timeout\)"):
        backend.generate([MESSAGES])
    assert time.monotonic() - started < 3.0  # it read on for as long as the server sent (20 s here)


def test_the_run_ends_at_its_deadline_with_the_replies_received(server):
    answered = []

    def answer(handler):
        if len(answered) < 2:
            answered.append(1)
            handler.send_response(200)
            handler.send_header("Content-Length", str(len(REPLY)))
            handler.end_headers()
            handler.wfile.write(REPLY)
            return
        _drip(handler)

    url = server(answer)
    backend = OpenAIBackend(model="m", base_url=url, api_key_env=None, retries=0, timeout=60.0, run_timeout=1.5,
                            concurrency=4)
    received = []
    started = time.monotonic()
    with pytest.raises(OntolinkError, match=r"did not end within 1.5 s \(--run-timeout\)"):
        for index, completion in backend.stream([MESSAGES] * 6):
            received.append(completion.text)
    assert time.monotonic() - started < 3.5
    assert received == ["fits\nconvulsions"] * 2


def test_the_run_deadline_holds_across_batches(server):
    """Each batch is one stream(): the run's deadline was restarted by every batch, so a run of many batches
    (or of Ray workers, each starting its own clock) never ended at --run-timeout."""
    def answer(handler):
        time.sleep(0.8)
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(REPLY)))
        handler.end_headers()
        handler.wfile.write(REPLY)

    url = server(answer)
    backend = OpenAIBackend(model="m", base_url=url, api_key_env=None, retries=0, timeout=60.0, run_timeout=1.5)
    assert [completion.text for _, completion in backend.stream([MESSAGES])] == ["fits\nconvulsions"]
    with pytest.raises(OntolinkError, match=r"did not end within 1.5 s \(--run-timeout\)"):
        list(backend.stream([MESSAGES]))
    # a worker given the run's end (run_ends_at, as gen-aliases passes it to an engine's workers) keeps it
    ended = OpenAIBackend(model="m", base_url=url, api_key_env=None, retries=0, run_timeout=1.5,
                          run_ends_at=time.time() - 1)
    started = time.monotonic()
    with pytest.raises(OntolinkError, match=r"--run-timeout"):
        list(ended.stream([MESSAGES]))
    assert time.monotonic() - started < 0.7


def test_gen_aliases_refuses_a_timeout_that_is_not_positive(onto):
    from conftest import run

    result = run("gen-aliases", "--ontology", onto, "--backend", "openai", "--model", "m", "--timeout", "0", input="")
    assert result.exit_code == 2 and "--timeout" in result.output


def test_ctrl_c_with_eight_requests_in_flight_exits_at_once_keeping_the_replies(server, small_ontology_path, tmp_path):
    """12 entities at --concurrency 8: 4 replies come at once, the 8 requests after them hang; SIGINT then ends
    the command within 2 s (measured: see the closing note of issue 44), and the cache holds the 4 replies."""
    lock = threading.Lock()
    seen = {"answered": 0, "held": 0}

    def answer(handler):
        with lock:
            quick = seen["answered"] < 4
            seen["answered" if quick else "held"] += 1
        if quick:
            handler.send_response(200)
            handler.send_header("Content-Length", str(len(REPLY)))
            handler.end_headers()
            handler.wfile.write(REPLY)
            return
        time.sleep(60)  # a server that thinks for a minute

    url = server(answer)
    from ontolink.ontology import load_ontology

    small = load_ontology(str(small_ontology_path))
    records = [entity.to_record() for entity in small if entity.definition][:12]
    assert len(records) == 12
    source = tmp_path / "selected.jsonl"
    source.write_text(jsonl(records))
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_DIR), "ONTOLINK_CACHE_DIR": str(cache)}
    child = subprocess.Popen([sys.executable, "-m", "ontolink", "gen-aliases", "--ontology", str(small_ontology_path),
                              "--backend", "openai", "--model", "m", "--base-url", url, "--api-key-env", "NO_KEY",
                              "--concurrency", "8", "-i", str(source), "-o", str(tmp_path / "out.jsonl")],
                             stderr=subprocess.PIPE, env=env, preexec_fn=interruptible)
    try:
        deadline = time.monotonic() + 120
        while seen["held"] < 8:
            assert child.poll() is None and time.monotonic() < deadline, child.stderr.read().decode()
            time.sleep(0.01)
        time.sleep(0.2)  # the four replies stored
        interrupted = time.monotonic()
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=60)
        elapsed = time.monotonic() - interrupted
    finally:
        child.kill()
    assert child.returncode == 130 and b"Traceback" not in stderr, stderr
    assert elapsed < 2.0, f"{elapsed:.2f} s from SIGINT to exit"
    with sqlite3.connect(cache / "llm" / "completions.sqlite3") as database:
        assert database.execute("SELECT COUNT(*) FROM completions").fetchone()[0] == 4
    print(f"SIGINT to exit with 8 requests in flight: {elapsed:.2f} s")
