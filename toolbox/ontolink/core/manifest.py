"""Artifact directories: built under a temporary name, swapped in when complete, checked on load."""

import hashlib
import json
import os
import platform
import shutil
import sys
import time
from contextlib import contextmanager
from glob import escape as glob_escape
from importlib import metadata
from pathlib import Path

from ontolink.version import __version__
from ontolink.core.artifact_files import read_json
from ontolink.core.errors import InputError
from ontolink.core.swap import replace
from ontolink.core.io import warn, write_failure

MANIFEST = "manifest.json"


def file_sha256(path):
    """Content hash of an input file: what artifacts record and caches are keyed by."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def json_sha256(value):
    """Content hash of a JSON-able table (WordNet's pertainyms, an alias file's names): what caches are keyed
    by and artifacts record."""
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def library_versions(*packages):
    versions = {"ontolink": __version__, "python": platform.python_version()}
    for package in packages:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    return versions


def check_replaceable(target, kind, force=False):
    """Refuse to write an artifact of ``kind`` over ``target`` unless it is absent, an empty directory
    or an ontolink artifact of the same kind: replacing deletes what was there, and a directory of a
    user's own files (or another artifact) must not go without being asked (``force``)."""
    target = Path(target)
    if force or not (target.exists() or target.is_symlink()):
        return
    if not target.is_dir():
        raise InputError(f"exists and is not a directory: refusing to replace it with an ontolink {kind} "
                         "(pass --force to replace it)", target)
    if not any(target.iterdir()):
        return
    try:
        existing = peek_manifest(target)
    except (OSError, ValueError, UnicodeDecodeError):
        existing = None
    if not isinstance(existing, dict) or existing.get("artifact") is None:
        raise InputError(f"is a directory that is not an ontolink artifact: refusing to delete its files to write "
                         f"an ontolink {kind} there (choose another directory, or pass --force to replace it)", target)
    if kind is not None and existing["artifact"] != kind:
        raise InputError(f"holds an ontolink {existing['artifact']}, not an ontolink {kind}: refusing to replace it "
                         "(choose another directory, or pass --force to replace it)", target)


def _usual_permissions(directory):
    """Every file as the user's umask makes files (a writer that goes through a private temporary file, as
    safetensors' does, leaves it 0600 where the rest of the artifact is 0644)."""
    umask = os.umask(0)
    os.umask(umask)
    for path in Path(directory).rglob("*"):
        if path.is_file() and not path.is_symlink():
            os.chmod(path, 0o666 & ~umask)
    os.chmod(directory, 0o777 & ~umask)


def _remove(path):
    path = Path(path)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_leftovers(target):
    """Delete ``.NAME.tmp-PID`` and ``.NAME.old-PID`` beside ``target`` left by a run that was killed (its
    process is gone): a build cut short, or the previous artifact not yet deleted after the swap."""
    target = Path(target)
    if not target.parent.is_dir():
        return
    for kind in ("tmp", "old"):
        for leftover in target.parent.glob(f".{glob_escape(target.name)}.{kind}-*"):
            pid = leftover.name.rsplit("-", 1)[-1]
            if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
                _remove(leftover)


@contextmanager
def artifact_directory(target, manifest, force=False):
    """Yield a temporary directory; on success write the manifest and put it at ``target`` in one atomic
    swap (``swap.replace``): the path holds the old artifact or the new one, never nothing.

    A failure (or Ctrl-C) leaves any previous ``target`` untouched; what a killed run left beside it is
    deleted first (``remove_leftovers``). ``target`` must be absent, an empty
    directory or an artifact of the manifest's kind; ``force`` replaces whatever it is
    (``check_replaceable``, checked before and again after the build, when the manifest is complete).
    """
    target = Path(target)
    check_replaceable(target, manifest.get("artifact"), force)
    temporary = target.parent / f".{target.name}.tmp-{os.getpid()}"
    try:  # before any work: a directory that cannot be written is one line naming it (exit 2), not a traceback
        target.parent.mkdir(parents=True, exist_ok=True)
        remove_leftovers(target)
        if temporary.exists():
            shutil.rmtree(temporary)
        temporary.mkdir()
    except OSError as error:
        raise write_failure(str(target), error) from None
    try:
        yield temporary
        manifest = dict(manifest)
        manifest.setdefault("created", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        manifest.setdefault("command", " ".join(["ontolink"] + sys.argv[1:]))
        with open(temporary / MANIFEST, "w", encoding="utf-8") as handle:
            json.dump(manifest, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
        _usual_permissions(temporary)
        check_replaceable(target, manifest.get("artifact"), force)
        old = target.parent / f".{target.name}.old-{os.getpid()}"
        if replace(temporary, target, old):
            _remove(old)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise


def peek_manifest(path):
    """The manifest.json of a directory passed as a model, or None when it has none (a plain model)."""
    manifest_path = Path(path, MANIFEST)
    if not manifest_path.is_file():
        return None
    with open(manifest_path, encoding="utf-8") as handle:
        return json.load(handle)


def read_manifest(directory, kind, required_files=()):
    """Load and check an artifact's manifest: the right kind, and no file missing."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(f"not a directory: expected an {kind} directory", directory)
    path = directory / MANIFEST
    if not path.exists():
        raise InputError(f"no {MANIFEST}: not an ontolink {kind}, or an incomplete one", directory)
    manifest = read_json(path)
    if not isinstance(manifest, dict):
        raise InputError(f"holds a JSON {type(manifest).__name__}, not an object; rebuild the {kind}", path)
    if manifest.get("artifact") != kind:
        raise InputError(f"is a {manifest.get('artifact', 'unknown artifact')!r}, not an {kind}", directory)
    listed = manifest.get("files", [])
    if not isinstance(listed, list) or not all(isinstance(name, str) for name in listed):
        raise InputError("'files' must be a list of file names; rebuild the " + kind, path)
    for name in list(required_files) + listed:
        if not (directory / name).exists():
            raise InputError(f"{kind} is truncated: {name} is missing; rebuild it", directory)
    return manifest


def check_same_ontology(manifest, ontology, directory):
    """Refuse an artifact built for other ontology content than the one given."""
    built_for = manifest.get("ontology", {})
    if built_for.get("sha256") != ontology.content_hash:
        raise InputError(
            f"was built for ontology {built_for.get('label', '?')} (sha256 {built_for.get('sha256', '?')[:12]}), "
            f"not for {ontology.label} (sha256 {ontology.content_hash[:12]}); rebuild it with `ontolink index`",
            directory,
        )


def not_improved_warning(manifest, what, path):
    """The one line a command using a trained model that did not beat its start says on stderr (None if it
    did, or was never checked). The trainers write "improved", "kept_epoch" and the held-out R@1."""
    if manifest.get("improved") is not False:
        return None
    if "start_R@1" in manifest:
        numbers = (f"held-out R@1 {manifest['start_R@1']:.3f} at its start, {manifest['kept_R@1']:.3f} kept"
                   if manifest.get("kept_epoch") else
                   f"held-out R@1 {manifest['start_R@1']:.3f} at its start, no epoch higher")
    else:
        numbers = manifest.get("not_improved_because", "not measured")
    return f"warning: {path}: this {what} did not improve on its start when trained ({numbers})"


def learned_or_none(model, what, path):
    """``model`` (a reranker or ranker read for `link`), or None when its trainer kept its start, the index's own
    order: it lost to that order on its held-out pairs, so applying it would make the result worse. Either
    way a model marked not improved is said once on stderr."""
    line = not_improved_warning(model.manifest, what, path)
    if line is None:
        return model
    if model.manifest.get("kept_epoch") == 0:
        warn(f"{line}: not applied, the candidates are ordered as without it")
        return None
    warn(line)
    return model
