"""Any OpenAI-compatible ``/v1/chat/completions`` endpoint: vllm serve, llama.cpp's server, hosted APIs.

Standard library only (urllib, a thread pool). Requests run ``concurrency`` at
a time; 429, 5xx, timeouts and connection errors are retried with exponential
backoff (a ``Retry-After`` header is honoured); anything else fails at once.
The API key is read from the environment variable named by ``api_key_env`` and
is sent only in the Authorization header: it is never printed, logged, stored
in records or part of a cache key, and every message of this module has it
replaced (a server may echo it in an error body). A redirect to another origin
(scheme, host, port) is refused, so the key never follows it; a same-origin
redirect is followed only where it keeps the POST and its body (307, 308).
A reply is read up to ``max_reply_bytes`` (16 MiB), never whole.

Deadlines: each request (one attempt: connecting, sending, the whole reply) ends within ``timeout`` seconds,
however slowly a server sends (a socket timeout alone restarts at every byte); all requests of one ``stream``
end within ``run_timeout``. A watchdog thread shuts the socket of a request past its deadline, and every
socket at once when the run is stopped (Ctrl-C): ``stream``'s caller gets control back within a fraction
of a second, the replies received before it already yielded (and cached by the caller).
"""

from __future__ import annotations

import functools
import http.client
import json
import os
import random
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from email.message import Message
from typing import Any

from ontolink.aliases.llm import LLM_BACKENDS
from ontolink.aliases.llm.base import Completion, LLMBackend
from ontolink.core.errors import OntolinkError
from ontolink.aliases.options import GenAliasesOptions
from ontolink.core.options import DEFAULT_SEED

DEFAULT_BASE_URL = "https://api.openai.com/v1"
RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
MAX_BACKOFF_SECONDS = 30.0
MAX_REPLY_BYTES = 16 << 20  # a chat completion is kilobytes; a reply past this is not one
REDACTED = "[API key redacted]"


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def _content_text(content: Any) -> str:
    """A chat message's text: a string, or a list of content parts ({"type": "text", "text": ...}) joined, as
    some servers send it; anything else is not a chat completion (TypeError)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(part, dict) for part in content):
        return "".join(part["text"] for part in content if part.get("type", "text") == "text"
                       and isinstance(part.get("text"), str))
    raise TypeError("content")


def _count(value: Any) -> int | None:
    """A token count from a reply's usage: a whole number, else unknown (a server's "10" is no count)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def chat_url(base_url: str) -> str:
    base = base_url.rstrip("/")
    return base if base.endswith("/chat/completions") else base + "/chat/completions"


def _retry_after(headers: Message | None) -> float | None:
    value = headers.get("Retry-After") if headers is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urllib.parse.urlsplit(url)
    default_port = {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), parts.port or default_port


class _RedirectPolicy(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only to the same origin and only where the POST stays a POST with its body (307,
    308); urllib's own handler sends the Authorization header anywhere and turns a 302'd POST into a GET."""

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Message,
                         newurl: str) -> urllib.request.Request:
        newurl = urllib.parse.urljoin(req.full_url, newurl)
        if _origin(newurl) != _origin(req.full_url):
            authorised = " (the API key is not sent to another origin)" if req.has_header("Authorization") else ""
            raise _Refused(f"{req.full_url} redirects ({code}) to another origin, "
                           f"{urllib.parse.urlsplit(newurl).netloc or newurl}: refused{authorised}; "
                           "give the final address with --base-url")
        if code not in (307, 308):
            raise _Refused(f"{req.full_url} redirects ({code}) to {newurl}, which would turn the POST into a GET: "
                           "refused; give the final address with --base-url")
        return urllib.request.Request(newurl, data=req.data, headers=dict(req.header_items()),
                                      method=req.get_method())


class _Refused(OntolinkError):
    pass


class _Flight:
    """The requests of one ``stream`` in flight: their sockets and deadlines, shut by a watchdog when a
    deadline passes or the run is stopped."""

    TICK = 0.05  # how often the watchdog looks: the latency of a deadline or a Ctrl-C

    def __init__(self, run_deadline: float | None = None) -> None:
        self.lock = threading.Lock()
        self.sockets: dict[socket.socket, tuple[float, _Request]] = {}  # socket -> (deadline, request)
        self.run_deadline = run_deadline
        self.stopped = threading.Event()
        self.why = "stopped"
        self._watchdog: threading.Thread | None = None

    def start(self) -> None:
        self._watchdog = threading.Thread(target=self._watch, name="ontolink-http-deadlines", daemon=True)
        self._watchdog.start()

    def _watch(self) -> None:
        while not self.stopped.wait(self.TICK):
            now = time.monotonic()
            if self.run_deadline is not None and now > self.run_deadline:
                self.stop("run")
                return
            with self.lock:
                overdue = [(sock, request) for sock, (deadline, request) in self.sockets.items() if now > deadline]
            for sock, request in overdue:
                request.expired = "request"
                _shut(sock)

    def stop(self, why: str = "stopped") -> None:
        """End every request in flight now (their sockets shut), and any started later at once."""
        with self.lock:
            self.why = why
            self.stopped.set()
            flying = list(self.sockets.items())
        for sock, (_, request) in flying:
            request.expired = why
            _shut(sock)

    def add(self, sock: socket.socket, request: _Request) -> None:
        with self.lock:
            if self.stopped.is_set():
                request.expired = self.why
                _shut(sock)
                return
            self.sockets[sock] = (request.deadline, request)

    def remove(self, request: _Request) -> None:
        with self.lock:
            for sock in [sock for sock, (_, owner) in self.sockets.items() if owner is request]:
                del self.sockets[sock]


def _shut(sock: socket.socket) -> None:
    """Wake a thread blocked reading ``sock`` (shutdown, unlike close, interrupts a blocked recv on Linux)."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class _Request:
    """One attempt's deadline and how it ended early ("request": its deadline passed; "run": the run's;
    "stopped": the run was stopped)."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.expired: str | None = None


class _Tracked(http.client.HTTPConnection):
    """A connection whose socket ``flight``'s watchdog can shut (mixed into the HTTP and HTTPS ones)."""

    def __init__(self, *args: Any, flight: _Flight, request: _Request, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._flight, self._request = flight, request

    def connect(self) -> None:
        super().connect()
        self._flight.add(self.sock, self._request)


class _TrackedHTTPConnection(_Tracked):
    """An HTTP connection whose socket ``flight``'s watchdog can shut."""


class _TrackedHTTPSConnection(_Tracked, http.client.HTTPSConnection):
    """An HTTPS connection whose socket ``flight``'s watchdog can shut."""


class _TrackedHTTP(urllib.request.HTTPHandler):
    def __init__(self, flight: _Flight, request: _Request) -> None:
        super().__init__()
        self._flight, self._request = flight, request

    def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
        return super().do_open(functools.partial(_TrackedHTTPConnection, flight=self._flight,
                                                   request=self._request), req, **kwargs)


class _TrackedHTTPS(urllib.request.HTTPSHandler):
    def __init__(self, flight: _Flight, request: _Request) -> None:
        super().__init__()
        self._flight, self._request = flight, request

    # whatever https_open passes (context, ...) goes on
    def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
        return super().do_open(functools.partial(_TrackedHTTPSConnection, flight=self._flight,
                                                   request=self._request), req, **kwargs)


def _opener(flight: _Flight, request: _Request) -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(_RedirectPolicy, _TrackedHTTP(flight, request), _TrackedHTTPS(flight, request))


class Stopped(OntolinkError):
    """The run was stopped (Ctrl-C) or its deadline passed while this request was in flight."""


@LLM_BACKENDS.register("openai")
class OpenAIBackend(LLMBackend):
    name = "openai"
    default_batch_size = 32
    local = False

    def __init__(self, model: str | None = None, max_new_tokens: int = GenAliasesOptions.max_new_tokens,
                 base_url: str | None = None, api_key_env: str | None = GenAliasesOptions.api_key_env,
                 concurrency: int = GenAliasesOptions.concurrency, retries: int = GenAliasesOptions.retries,
                 timeout: float = GenAliasesOptions.timeout, backoff: float = 1.0, seed: int = DEFAULT_SEED,
                 max_reply_bytes: int = MAX_REPLY_BYTES, run_timeout: float | None = None,
                 run_ends_at: float | None = None, **_ignored: Any) -> None:
        super().__init__(model=model, max_new_tokens=max_new_tokens)
        if not self.model:
            raise OntolinkError("the openai backend needs --model (the model name the endpoint serves)")
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self.url = chat_url(self.base_url)
        self._api_key = os.environ.get(api_key_env) if api_key_env else None
        self.concurrency = max(1, int(concurrency))
        self.retries = max(0, int(retries))
        self.timeout = float(timeout)
        self.run_timeout = float(run_timeout) if run_timeout else None
        # the run's deadline holds across its batches (each is one stream() call); ``run_ends_at`` (time.time()
        # when the run must end) is the same deadline for the workers of an engine, made where the run began
        remaining = (run_ends_at - time.time()) if run_ends_at is not None else self.run_timeout
        self._run_deadline = time.monotonic() + remaining if self.run_timeout and remaining is not None else None
        self._flight: _Flight | None = None  # the running stream's requests
        self.backoff = backoff
        self.seed = seed
        self.max_reply_bytes = max_reply_bytes

    def _redact(self, text: str) -> str:
        """``text`` with the API key replaced: error bodies and addresses may echo it."""
        return text.replace(self._api_key, REDACTED) if self._api_key and len(self._api_key) >= 4 else text

    def describe(self) -> dict[str, Any]:
        # The endpoint's address and the key are not decoding options: the model name identifies the model.
        return {"temperature": 0, "max_new_tokens": self.max_new_tokens, "seed": self.seed}

    def _payload(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        return {"model": self.model, "messages": messages, "temperature": 0, "max_tokens": self.max_new_tokens,
                "seed": self.seed, "stream": False}

    def _post_once(self, body: bytes) -> bytes:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        flight = self._flight or _Flight()
        attempt = _Request(time.monotonic() + self.timeout)
        try:
            with _opener(flight, attempt).open(request, timeout=self.timeout) as response:
                raw = self._read_reply(response, attempt)
        except _Refused as error:
            raise OntolinkError(self._redact(str(error))) from None
        except urllib.error.HTTPError as error:
            try:
                # redacted before it is cut: a key straddling the cut would show its first half
                detail = self._redact(error.read(4096).decode("utf-8", "replace")).strip().replace("\n", " ")
            except OSError:
                detail = ""  # the status alone is enough
            message = self._redact(f"HTTP {error.code} from {self.url}") + (f": {detail[:200]}" if detail else "")
            if error.code in RETRYABLE_STATUS:
                raise _Retryable(message, _retry_after(error.headers)) from None
            hint = " (check the key in the variable named by --api-key-env)" if error.code in (401, 403) else ""
            raise OntolinkError(message + hint) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError, http.client.HTTPException) as error:
            self._raise_if_expired(attempt)
            reason = getattr(error, "reason", error)
            raise _Retryable(self._redact(f"cannot reach {self.url}: {reason}")) from None
        finally:
            flight.remove(attempt)
        self._raise_if_expired(attempt)
        if len(raw) > self.max_reply_bytes:
            raise OntolinkError(self._redact(f"{self.url} sent a reply of more than {self.max_reply_bytes:,} bytes: "
                                             "not a chat completion; is --base-url an OpenAI-compatible endpoint?"))
        return raw

    def _read_reply(self, response: Any, attempt: _Request) -> bytes:
        """The reply's body, up to ``max_reply_bytes`` + 1, read as it arrives (the deadline is the watchdog's)."""
        parts: list[bytes] = []
        size = 0
        while size <= self.max_reply_bytes:
            if attempt.expired:
                break
            part = response.read1(min(1 << 16, self.max_reply_bytes + 1 - size))
            if not part:
                break
            parts.append(part)
            size += len(part)
        return b"".join(parts)

    def _raise_if_expired(self, attempt: _Request) -> None:
        if attempt.expired == "request":
            raise _Retryable(self._redact(f"{self.url} did not send a whole reply within {self.timeout:g} s "
                                          "(--timeout)"))
        if attempt.expired == "run":
            raise Stopped(self._redact(f"the run's requests to {self.url} did not end within "
                                       f"{self.run_timeout:g} s (--run-timeout); the replies received are cached"))
        if attempt.expired:
            raise Stopped("stopped")

    def _complete(self, messages: list[dict[str, str]]) -> Completion:
        body = json.dumps(self._payload(messages)).encode("utf-8")
        started = time.perf_counter()
        attempt = 0
        while True:
            try:
                raw = self._post_once(body)
                break
            except _Retryable as error:
                if attempt >= self.retries:
                    tries = f"{attempt + 1} attempt{'s' if attempt else ''}"
                    raise OntolinkError(f"{self._redact(str(error))} (gave up after {tries}; is the server running? "
                                        "see --base-url, --retries)") from None
                delay = error.retry_after if error.retry_after is not None else self.backoff * (2 ** attempt)
                delay = min(delay, MAX_BACKOFF_SECONDS) * (1 + 0.1 * random.random())
                flight = self._flight
                if flight is not None and flight.stopped.wait(delay):  # a stop ends the wait too
                    raise Stopped(flight.why)
                if flight is None:
                    time.sleep(delay)
                attempt += 1
        seconds = time.perf_counter() - started
        try:
            reply = json.loads(raw)
            choice = reply["choices"][0]
            text = _content_text(choice["message"]["content"])
        except (ValueError, KeyError, IndexError, TypeError):
            shown = self._redact(raw[:4096].decode("utf-8", "replace")).replace("\n", " ")[:120]
            raise OntolinkError(f"{self._redact(self.url)} did not return a chat completion (got {shown!r}): is "
                                "--base-url an OpenAI-compatible endpoint?") from None
        usage = reply.get("usage") if isinstance(reply.get("usage"), dict) else {}
        completion_tokens = _count(usage.get("completion_tokens"))
        if isinstance(choice, dict) and choice.get("finish_reason") == "length":
            completion_tokens = max(completion_tokens or 0, self.max_new_tokens)  # stopped by the limit: cut
        return Completion(text=text.strip(), prompt_tokens=_count(usage.get("prompt_tokens")),
                          completion_tokens=completion_tokens, seconds=seconds)

    def generate(self, conversations: Sequence[list[dict[str, str]]]) -> list[Completion]:
        results: list[Any] = [None] * len(conversations)
        for index, completion in self.stream(conversations):
            results[index] = completion
        return results

    def stream(self, conversations: Sequence[list[dict[str, str]]]) -> Iterator[tuple[int, Completion]]:
        """Yield (index, Completion) as each request finishes, so each reply is cached at once. Stopped early
        (Ctrl-C, an error, the caller closing the generator, ``run_timeout``), the requests in flight are
        ended at once: their sockets are shut, none is waited for."""
        if not conversations:
            return
        flight = self._flight = _Flight(self._run_deadline)
        flight.start()
        executor = ThreadPoolExecutor(max_workers=min(self.concurrency, len(conversations)))
        finished = False
        try:
            pending = {executor.submit(self._complete, messages): index for index, messages in enumerate(conversations)}
            while pending:
                done, _ = wait(pending, timeout=_Flight.TICK * 4, return_when=FIRST_COMPLETED)
                # the replies that came before a failed request finished in the same wait are yielded (cached)
                # first: a set's order would raise the error before them half the time
                for future in sorted(done, key=lambda future: (future.exception() is not None, pending[future])):
                    index = pending.pop(future)
                    yield index, future.result()  # an error cancels what has not started (finally below)
            finished = True
        finally:
            if not finished:
                flight.stop(flight.why)
            flight.stopped.set()
            # the workers return within a tick of their sockets being shut: joined, so that none outlives
            # the run, but never for longer than a request could take to notice
            executor.shutdown(wait=finished, cancel_futures=True)
            if not finished:
                _join_briefly(executor, 1.0)
            self._flight = None


def _join_briefly(executor: ThreadPoolExecutor, seconds: float) -> None:
    """Wait up to ``seconds`` for the worker threads of ``executor`` (shut down, their sockets shut) to end."""
    deadline = time.monotonic() + seconds
    for thread in list(getattr(executor, "_threads", ())):
        thread.join(max(0.0, deadline - time.monotonic()))
