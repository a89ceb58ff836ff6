"""Any OpenAI-compatible ``/v1/chat/completions`` endpoint: vllm serve, llama.cpp's server, hosted APIs.

Standard library only (urllib, a thread pool). Requests run ``concurrency`` at
a time; 429, 5xx, timeouts and connection errors are retried with exponential
backoff (a ``Retry-After`` header is honoured); anything else fails at once.
The API key is read from the environment variable named by ``api_key_env`` and
is sent only in the Authorization header: it is never printed, logged, stored
in records or part of a cache key.
"""

import json
import os
import random
import time
import urllib.error
import urllib.request
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from ontolink.backends.llm import LLM_BACKENDS
from ontolink.backends.llm.base import Completion, LLMBackend
from ontolink.errors import OntolinkError

DEFAULT_BASE_URL = "https://api.openai.com/v1"
RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
MAX_BACKOFF_SECONDS = 30.0


class _Retryable(Exception):
    def __init__(self, message, retry_after=None):
        super().__init__(message)
        self.retry_after = retry_after


def chat_url(base_url):
    base = base_url.rstrip("/")
    return base if base.endswith("/chat/completions") else base + "/chat/completions"


def _retry_after(headers):
    value = headers.get("Retry-After") if headers is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


@LLM_BACKENDS.register("openai")
class OpenAIBackend(LLMBackend):
    name = "openai"
    default_batch_size = 32
    local = False

    def __init__(self, model=None, max_new_tokens=64, base_url=None, api_key_env="OPENAI_API_KEY", concurrency=4,
                 retries=5, timeout=120.0, backoff=1.0, seed=0, **_ignored):
        super().__init__(model=model, max_new_tokens=max_new_tokens)
        if not self.model:
            raise OntolinkError("the openai backend needs --model (the model name the endpoint serves)")
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self.url = chat_url(self.base_url)
        self._api_key = os.environ.get(api_key_env) if api_key_env else None
        self.concurrency = max(1, int(concurrency))
        self.retries = max(0, int(retries))
        self.timeout = timeout
        self.backoff = backoff
        self.seed = seed

    def describe(self):
        # The endpoint's address and the key are not decoding options: the model name identifies the model.
        return {"temperature": 0, "max_new_tokens": self.max_new_tokens, "seed": self.seed}

    def _payload(self, messages):
        return {"model": self.model, "messages": messages, "temperature": 0, "max_tokens": self.max_new_tokens,
                "seed": self.seed, "stream": False}

    def _post_once(self, body):
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.read()
        except urllib.error.HTTPError as error:
            try:
                detail = error.read(300).decode("utf-8", "replace").strip().replace("\n", " ")
            except OSError:
                detail = ""  # the status alone is enough
            message = f"HTTP {error.code} from {self.url}" + (f": {detail[:200]}" if detail else "")
            if error.code in RETRYABLE_STATUS:
                raise _Retryable(message, _retry_after(error.headers)) from None
            hint = " (check the key in the variable named by --api-key-env)" if error.code in (401, 403) else ""
            raise OntolinkError(message + hint) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise _Retryable(f"cannot reach {self.url}: {reason}") from None

    def _complete(self, messages):
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
                    raise OntolinkError(f"{error} (gave up after {tries}; is the server running? "
                                        "see --base-url, --retries)") from None
                delay = error.retry_after if error.retry_after is not None else self.backoff * (2 ** attempt)
                delay = min(delay, MAX_BACKOFF_SECONDS) * (1 + 0.1 * random.random())
                time.sleep(delay)
                attempt += 1
        seconds = time.perf_counter() - started
        try:
            reply = json.loads(raw)
            text = reply["choices"][0]["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError):
            shown = raw[:120].decode("utf-8", "replace").replace("\n", " ")
            raise OntolinkError(f"{self.url} did not return a chat completion (got {shown!r}): is --base-url an "
                                "OpenAI-compatible endpoint?") from None
        usage = reply.get("usage") or {}
        return Completion(text=text.strip(), prompt_tokens=usage.get("prompt_tokens"),
                          completion_tokens=usage.get("completion_tokens"), seconds=seconds)

    def generate(self, conversations):
        results = [None] * len(conversations)
        for index, completion in self.stream(conversations):
            results[index] = completion
        return results

    def stream(self, conversations):
        """Yield (index, Completion) as each request finishes, so each reply is cached at once."""
        if not conversations:
            return
        executor = ThreadPoolExecutor(max_workers=min(self.concurrency, len(conversations)))
        try:
            pending = {executor.submit(self._complete, messages): index for index, messages in enumerate(conversations)}
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    index = pending.pop(future)
                    yield index, future.result()  # an error cancels what has not started (finally below)
        finally:
            executor.shutdown(wait=True, cancel_futures=True)
