"""The user cache directory (``ONTOLINK_CACHE_DIR`` overrides the platform default)."""

import os
from pathlib import Path


def cache_dir(*parts):
    root = os.environ.get("ONTOLINK_CACHE_DIR")
    if not root:
        import platformdirs

        root = platformdirs.user_cache_dir("ontolink")
    path = Path(root, *parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_atomically(path, write):
    """``write(temporary)`` writes a file, which is then renamed to ``path``: a reader (another process sharing the
    cache) sees the old file or the whole new one, never half of one; a failure leaves no temporary behind."""
    import threading

    path = Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    try:
        write(temporary)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return path
