"""A persistent cache of text vectors, keyed by (encoder fingerprint, token ids).

Re-indexing an ontology after an update, or with other FAISS settings,
encodes only the names the encoder has not seen. SQLite in the user cache
directory (``ONTOLINK_CACHE_DIR`` moves it): one file, safe for concurrent
readers and one writer, and vectors come back as raw float32 bytes (nothing
is unpickled).
"""

import sqlite3
from contextlib import contextmanager

import numpy as np

from ontolink.core.cache import cache_file
from ontolink.core.errors import InputError

_CHUNK = 900  # below SQLite's default limit of host parameters per statement


class EmbeddingCache:
    def __init__(self, fingerprint, dimension, path=None):
        self.fingerprint = fingerprint
        self.dimension = dimension
        self.path = path or cache_file("embeddings.sqlite")
        with self._damage_named():
            self._connection = sqlite3.connect(str(self.path), timeout=60)
            self._connection.execute("CREATE TABLE IF NOT EXISTS vectors (fingerprint TEXT, key BLOB, vector BLOB, "
                                     "PRIMARY KEY (fingerprint, key)) WITHOUT ROWID")

    @contextmanager
    def _damage_named(self):
        """A damaged cache file (not SQLite, a cut-off page) is named, with the two ways out."""
        try:
            yield
        except sqlite3.DatabaseError as error:
            if isinstance(error, sqlite3.OperationalError) and "locked" in str(error):
                raise
            raise InputError(f"the embedding cache is damaged ({error}): delete the file, or run with --no-cache "
                             "(`ontolink index`; ONTOLINK_CACHE_DIR moves the cache)", self.path) from None

    def get_many(self, keys):
        found = {}
        with self._damage_named():
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start:start + _CHUNK]
                rows = self._connection.execute(
                    f"SELECT key, vector FROM vectors WHERE fingerprint = ? AND key IN ({','.join('?' * len(chunk))})",
                    [self.fingerprint, *chunk])
                for key, blob in rows:
                    vector = np.frombuffer(blob, dtype=np.float32)
                    if vector.shape == (self.dimension,):
                        found[key] = vector
        return found

    def put_many(self, vectors):
        with self._damage_named(), self._connection:
            self._connection.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                [(self.fingerprint, key, np.asarray(vector, dtype=np.float32).tobytes())
                 for key, vector in vectors.items()])

    def close(self):
        self._connection.close()
