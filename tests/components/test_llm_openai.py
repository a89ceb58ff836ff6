"""The OpenAI-compatible HTTP backend of gen-aliases, against a local server: replies in input order,
retries, give-ups, bad replies, streamed caching."""

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from click.testing import CliRunner
from conftest import HYPERTELORISM, MICROCEPHALY, SEIZURE, jsonl, parse_jsonl, selected

from ontolink.aliases.llm.response_cache import ResponseCache
from ontolink.cli.main import cli
from ontolink.core.errors import OntolinkError
from ontolink.aliases.generate import generate_aliases


def test_streamed_completions_are_cached_as_they_come(hpo, server, cache_path):
    """A backend that yields replies one by one (openai) gets each into the cache before a later one fails."""
    from ontolink.aliases.llm.openai_http import OpenAIBackend

    _, url = server
    _Handler.script = [(200, _chat_reply, None), (200, _chat_reply, None), (400, {"error": "bad request"}, None)]
    records = selected(hpo, SEIZURE, HYPERTELORISM, MICROCEPHALY)
    backend = OpenAIBackend(model="test-model", base_url=url, retries=0, concurrency=1)
    with ResponseCache() as cache:
        with pytest.raises(OntolinkError):
            list(generate_aliases(records, hpo, backend, cache=cache, batch_size=8))
        assert len(cache) == 2 and len(_Handler.requests) == 3


class _Handler(BaseHTTPRequestHandler):
    script: ClassVar[list] = []  # (status, body, headers) to answer in turn; the last one repeats
    requests: ClassVar[list] = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"body": body, "auth": self.headers.get("Authorization")})
        status, reply, headers = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if callable(reply):
            reply = reply(body)
        data = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def _chat_reply(body):
    definition = body["messages"][-1]["content"].split("Definition: ")[1].split(" Return")[0]
    return {"choices": [{"message": {"role": "assistant", "content": f"Name of {definition[:20]}, other name"}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 7}}


@pytest.fixture
def server():
    _Handler.script = [(200, _chat_reply, None)]
    _Handler.requests = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd, f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def _openai(onto, url, *extra):
    return ["gen-aliases", "--ontology", onto, "--backend", "openai", "--base-url", url, "--model", "test-model",
            *extra]


def test_openai_backend_normal_reply(hpo, onto, server, cache_path, monkeypatch):
    _, url = server
    monkeypatch.setenv("TEST_LLM_KEY", "sk-secret-123")
    records = selected(hpo, SEIZURE, HYPERTELORISM, MICROCEPHALY)
    result = CliRunner().invoke(cli, _openai(onto, url, "--api-key-env", "TEST_LLM_KEY", "--concurrency", "2"),
                                input=jsonl(records))
    assert result.exit_code == 0, result.output
    out = parse_jsonl(result.stdout)
    assert [record["id"] for record in out] == [SEIZURE, HYPERTELORISM, MICROCEPHALY]  # input order
    assert out[0]["aliases"][-1] == "other name"
    assert out[0]["llm"]["backend"] == "openai" and out[0]["llm"]["model"] == "test-model"
    assert out[0]["llm"]["prompt_tokens"] == 100 and out[0]["llm"]["completion_tokens"] == 7
    assert len(_Handler.requests) == 3
    request = _Handler.requests[0]
    assert request["auth"] == "Bearer sk-secret-123"
    assert request["body"]["temperature"] == 0 and request["body"]["model"] == "test-model"
    assert "sk-secret" not in result.output
    assert b"sk-secret" not in cache_path.read_bytes()


def test_openai_backend_retries_500_and_429(hpo, onto, server, cache_path):
    _, url = server
    _Handler.script = [(500, {"error": "busy"}, None), (429, {"error": "slow down"}, {"Retry-After": "0"}),
                       (200, _chat_reply, None)]
    result = CliRunner().invoke(cli, _openai(onto, url), input=jsonl(selected(hpo, SEIZURE)))
    assert result.exit_code == 0, result.output
    assert len(_Handler.requests) == 3
    assert parse_jsonl(result.stdout)[0]["aliases"]


def test_openai_backend_gives_up_on_persistent_429(hpo, onto, server, cache_path):
    _, url = server
    _Handler.script = [(429, {"error": "rate limited"}, {"Retry-After": "0"})]
    result = CliRunner().invoke(cli, _openai(onto, url, "--retries", "2"), input=jsonl(selected(hpo, SEIZURE)))
    assert result.exit_code == 1
    assert len(_Handler.requests) == 3
    assert "HTTP 429" in result.stderr and "gave up after 3 attempts" in result.stderr


def test_openai_backend_garbage_json(hpo, onto, server, cache_path):
    _, url = server
    _Handler.script = [(200, b"<html>not json</html>", None)]
    result = CliRunner().invoke(cli, _openai(onto, url), input=jsonl(selected(hpo, SEIZURE)))
    assert result.exit_code == 1
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith("ontolink: error: ") and "did not return a chat completion" in error


def test_openai_backend_unreachable(hpo, onto, cache_path):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = CliRunner().invoke(cli, _openai(onto, f"http://127.0.0.1:{port}/v1", "--retries", "1"),
                                input=jsonl(selected(hpo, SEIZURE)))
    assert result.exit_code == 1
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith(f"ontolink: error: cannot reach http://127.0.0.1:{port}/v1/chat/completions")
    assert "gave up after 2 attempts" in error
    assert len(result.stderr.strip().splitlines()) <= 2


def test_openai_needs_a_model(hpo, onto, cache_path):
    result = CliRunner().invoke(cli, ["gen-aliases", "--ontology", onto, "--backend", "openai"],
                                input=jsonl(selected(hpo, SEIZURE)))
    assert result.exit_code == 2 and "--model" in result.stderr
