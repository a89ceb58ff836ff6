"""A persistent cache of LLM completions (sqlite3 in the user cache directory).

The key is the SHA-256 of the backend name, the model, the chat messages and
the decoding options (``LLMBackend.describe()``): the same question asked the
same way is answered from here without a call. Each completion is committed as
soon as it is stored, so an interrupted run resumes where it stopped. No
secret (API key) is ever part of a key or a row.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from ontolink.core.errors import OntolinkError
from ontolink.aliases.llm.base import Completion
from ontolink.core.cache import cache_dir

SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    seconds REAL,
    created REAL NOT NULL
)
"""


def cache_key(backend: str, model: str | None, messages: list[dict[str, str]], options: dict[str, Any]) -> str:
    payload = json.dumps({"backend": backend, "model": model, "messages": messages, "options": options},
                         sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def default_cache_path() -> Path:
    return cache_dir("llm") / "completions.sqlite3"


class ResponseCache:
    """``get(key)`` -> ``Completion`` or None; ``put(key, backend, model, completion)`` commits at once."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        try:
            self._db = sqlite3.connect(str(self.path), timeout=60)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(SCHEMA)
            self._db.commit()
        except sqlite3.DatabaseError as error:
            raise OntolinkError(f"cannot open the LLM response cache {self.path}: {error} "
                                "(delete the file, or run with --no-cache)") from None

    def get(self, key: str) -> Completion | None:
        row = self._db.execute("SELECT text, prompt_tokens, completion_tokens, seconds FROM completions "
                               "WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return Completion(text=row[0], prompt_tokens=row[1], completion_tokens=row[2], seconds=row[3])

    def put(self, key: str, backend: str, model: str | None, completion: Completion) -> None:
        with self._db:  # one transaction, committed on exit
            self._db.execute(
                "INSERT OR REPLACE INTO completions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key, backend, model, completion.text, completion.prompt_tokens, completion.completion_tokens,
                 completion.seconds, time.time()))

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM completions").fetchone()[0]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
