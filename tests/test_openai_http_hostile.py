"""The OpenAI-compatible client against a hostile or broken server: real HTTP servers on 127.0.0.1 (http.server
in a thread) that redirect to another origin, echo the key in their errors, or send a reply of many megabytes."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ontolink.aliases.llm.openai_http import OpenAIBackend
from ontolink.core.errors import OntolinkError

KEY = "sk-test-0123456789abcdefghijklmnopqrstuvwxyz"
MESSAGES = [[{"role": "user", "content": "Other names of 'Seizure'?"}]]


def _serve(answer):
    """A server on 127.0.0.1 whose handler is ``answer(handler)``; yields (its base URL, requests seen)."""
    seen = []

    class Handler(BaseHTTPRequestHandler):
        def _any(self):
            length = int(self.headers.get("Content-Length") or 0)
            seen.append({"method": self.command, "path": self.path, "auth": self.headers.get("Authorization"),
                         "body": self.rfile.read(length)})
            answer(self)

        do_GET = do_POST = _any

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/v1", seen


@pytest.fixture
def servers():
    started = []

    def start(answer):
        httpd, url, seen = _serve(answer)
        started.append(httpd)
        return url, seen

    yield start
    for httpd in started:
        httpd.shutdown()
        httpd.server_close()


def _reply(handler, status, data, headers=()):
    handler.send_response(status)
    for key, value in headers:
        handler.send_header(key, value)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def _backend(url, monkeypatch, **options):
    monkeypatch.setenv("TEST_LLM_KEY", KEY)
    return OpenAIBackend(model="test-model", base_url=url, api_key_env="TEST_LLM_KEY", retries=0, **options)


def _chat(handler):
    _reply(handler, 200, json.dumps({"choices": [{"message": {"content": "Fits, convulsions"}}]}).encode())


@pytest.mark.parametrize("status", [302, 307])
def test_a_redirect_to_another_origin_never_gets_the_key(servers, monkeypatch, status):
    elsewhere, seen_elsewhere = servers(_chat)
    redirecting, _ = servers(lambda handler: _reply(handler, status, b"", [("Location", elsewhere + "/chat/completions")]))
    with pytest.raises(OntolinkError, match=rf"redirects \({status}\) to another origin.*refused \(the API key is not "
                                            "sent to another origin\)"):
        _backend(redirecting, monkeypatch).generate(MESSAGES)
    assert seen_elsewhere == []  # not even a request without the key


def test_a_same_origin_307_keeps_the_post_and_a_302_that_would_make_it_a_get_is_refused(servers, monkeypatch):
    def answer(handler):
        if handler.path == "/v1/chat/completions":
            _reply(handler, 307, b"", [("Location", "/v2/chat/completions")])
        elif handler.path == "/v2/chat/completions":
            _chat(handler)

    url, seen = servers(answer)
    [completion] = _backend(url, monkeypatch).generate(MESSAGES)
    assert completion.text == "Fits, convulsions"
    assert [(request["method"], request["path"]) for request in seen] == [
        ("POST", "/v1/chat/completions"), ("POST", "/v2/chat/completions")]
    assert seen[1]["body"] == seen[0]["body"] and seen[1]["auth"] == f"Bearer {KEY}"
    url, _ = servers(lambda handler: _reply(handler, 302, b"", [("Location", "/v2/chat/completions")]))
    with pytest.raises(OntolinkError, match=r"redirects \(302\).*would turn the POST into a GET"):
        _backend(url, monkeypatch).generate(MESSAGES)


@pytest.mark.parametrize("status, body", [
    (400, b'{"error": "invalid key ' + KEY.encode() + b'"}'),
    (401, b"x" * 180 + b"Bearer " + KEY.encode()),  # the key straddles where the message is cut
    (503, b"overloaded, key=" + KEY.encode()),
    (200, b"<html>your key " + KEY.encode() + b" is fine</html>"),
])
def test_the_key_is_redacted_from_every_message(servers, monkeypatch, status, body):
    url, _ = servers(lambda handler: _reply(handler, status, body))
    with pytest.raises(OntolinkError) as caught:
        _backend(url, monkeypatch).generate(MESSAGES)
    assert KEY[:12] not in str(caught.value)
    assert status == 401 or "[API key redacted]" in str(caught.value)


def test_a_reply_past_the_size_limit_is_refused_without_reading_it_whole(servers, monkeypatch):
    def huge(handler):
        handler.send_response(200)
        handler.send_header("Content-Length", str(64 << 20))
        handler.end_headers()
        try:
            for _ in range(64):
                handler.wfile.write(b" " * (1 << 20))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading: what this test wants

    url, _ = servers(huge)
    with pytest.raises(OntolinkError, match="sent a reply of more than 1,048,576 bytes"):
        _backend(url, monkeypatch, max_reply_bytes=1 << 20).generate(MESSAGES)


@pytest.mark.parametrize("reply, text, tokens", [
    # content as a list of parts (AttributeError: 'list' object has no attribute 'strip', exit 1)
    ({"choices": [{"message": {"content": [{"type": "text", "text": "fits, "}, {"type": "text", "text": "ictus"}]}}]},
     "fits, ictus", None),
    # usage counts as strings (TypeError adding them to the run's totals, exit 1, after the reply was cached)
    ({"choices": [{"message": {"content": "fits"}}], "usage": {"prompt_tokens": "10", "completion_tokens": "2"}},
     "fits", None),
    # stopped by the token limit: counted as reaching it, so its unfinished last alias is dropped
    ({"choices": [{"message": {"content": "fits, ict"}, "finish_reason": "length"}]}, "fits, ict", 64),
])
def test_replies_of_other_shapes_are_read(servers, monkeypatch, reply, text, tokens):
    url, _ = servers(lambda handler: _reply(handler, 200, json.dumps(reply).encode()))
    (completion,) = _backend(url, monkeypatch, max_new_tokens=64).generate(MESSAGES)
    assert (completion.text, completion.completion_tokens) == (text, tokens)


def test_an_unfinished_last_alias_and_a_comma_inside_a_chemical_name():
    from ontolink.aliases.generate import parse_aliases

    assert parse_aliases("Joint inflammation, Inflamed artic", cut=True) == ["Joint inflammation"]
    assert parse_aliases("Joint inflammation, Inflamed artic") == ["Joint inflammation", "Inflamed artic"]
    assert parse_aliases("2,4-dinitrophenol, DNP, 1, 25-dihydroxy") == ["2,4-dinitrophenol", "DNP", "25-dihydroxy"]
