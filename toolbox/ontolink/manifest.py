"""Artifact directories: built under a temporary name, renamed when complete, checked on load."""

import hashlib
import json
import os
import platform
import shutil
import sys
import time
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path

from ontolink import __version__
from ontolink.errors import InputError

MANIFEST = "manifest.json"


def file_sha256(path):
    """Content hash of an input file: what artifacts record and caches are keyed by."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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


@contextmanager
def artifact_directory(target, manifest, force=False):
    """Yield a temporary directory; on success write the manifest and rename it to ``target``.

    A failure (or Ctrl-C) leaves any previous ``target`` untouched. ``target`` must be absent, an empty
    directory or an artifact of the manifest's kind; ``force`` replaces whatever it is
    (``check_replaceable``, checked before and again after the build, when the manifest is complete).
    """
    target = Path(target)
    check_replaceable(target, manifest.get("artifact"), force)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.parent / f".{target.name}.tmp-{os.getpid()}"
    if temporary.exists():
        shutil.rmtree(temporary)
    temporary.mkdir()
    try:
        yield temporary
        manifest = dict(manifest)
        manifest.setdefault("created", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        manifest.setdefault("command", " ".join(["ontolink"] + sys.argv[1:]))
        with open(temporary / MANIFEST, "w", encoding="utf-8") as handle:
            json.dump(manifest, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
        check_replaceable(target, manifest.get("artifact"), force)
        old = None
        if target.exists() or target.is_symlink():
            old = target.parent / f".{target.name}.old-{os.getpid()}"
            os.rename(target, old)
        os.rename(temporary, target)
        if old is not None:
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old, ignore_errors=True)
            else:
                old.unlink()
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
    try:
        with open(path, encoding="utf-8") as handle:
            manifest = json.load(handle)
    except (ValueError, UnicodeDecodeError) as error:
        raise InputError(f"{MANIFEST} is damaged ({error})", directory) from None
    if manifest.get("artifact") != kind:
        raise InputError(f"is a {manifest.get('artifact', 'unknown artifact')!r}, not an {kind}", directory)
    for name in list(required_files) + list(manifest.get("files", [])):
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
