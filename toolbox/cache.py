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
