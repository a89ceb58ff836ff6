"""Offline batched generation with vLLM on a GPU machine (``pip install 'ontolink[gpu]'``).

The published setting of alias generation (docs/methods.md) is Llama-3.2-3B-Instruct with greedy
decoding; ``vllm.LLM(...).chat(...)`` applies the model's chat template and
schedules a whole batch at once, so large ``--batch-size`` values pay off. ``LLM.chat`` takes a list
of conversations from vLLM 0.6.2 on (vllm-project/vllm#8648; before, one conversation per call, and a
list of them failed inside the chat template), so older releases are refused, as the ``gpu`` extra's
floor says.

vLLM claims ``gpu_memory_utilization`` of the GPU's *total* memory for itself (weights, activations,
KV cache) and refuses to start when less than that is free; on a GPU shared with the other steps of a
pipe, lower it (``gen-aliases --gpu-memory-utilization``) and the context it reserves cache for
(``--max-model-len``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from ontolink.aliases.llm import LLM_BACKENDS
from ontolink.aliases.llm.base import Completion, LLMBackend
from ontolink.core.errors import OntolinkError
from ontolink.aliases.options import GenAliasesOptions
from ontolink.core.options import DEFAULT_SEED

DEFAULT_MODEL = "meta-llama/Llama-3.2-3B-Instruct"
MISSING = "the vllm backend needs vLLM, which is not installed: pip install 'ontolink[gpu]' (on a CUDA machine)"
BATCHED_CHAT = (0, 6, 2)  # the first release whose LLM.chat takes a list of conversations
DEFAULT_MEMORY_SHARE = GenAliasesOptions.gpu_memory_utilization
DEFAULT_MAX_MODEL_LEN = GenAliasesOptions.max_model_len
GIB = 1024 ** 3


def _import_vllm() -> ModuleType:
    try:
        import vllm
    except ImportError:
        raise OntolinkError(MISSING) from None
    return vllm


def release(version: object) -> tuple[int, ...]:
    """(major, minor, patch) of a version string as vLLM writes it ("0.6.1.post2", "0.6.2+cu124", "0.10.1rc1",
    "0.6.3.dev45+g1a2b"); a part that does not start with digits counts as 0."""
    import re

    parts: list[int] = []
    for part in str(version).split("+")[0].split(".")[:3]:
        digits = re.sub(r"\D.*", "", part)  # the leading digits
        parts.append(int(digits) if digits else 0)
    return tuple(parts + [0] * (3 - len(parts)))


def check_version(version: str) -> None:
    """Refuse a vLLM whose ``LLM.chat`` cannot take a batch of conversations."""
    if release(version) < BATCHED_CHAT:
        raise OntolinkError(f"the vllm backend needs vLLM 0.6.2 or later (batched LLM.chat); vLLM {version} is "
                            "installed: pip install 'vllm>=0.6.2'")


def check_memory_options(gpu_memory_utilization: float, max_model_len: int | None) -> None:
    """The two numbers vLLM reserves memory by, checked before the model loads."""
    if not 0 < gpu_memory_utilization <= 1:
        raise OntolinkError(f"--gpu-memory-utilization {gpu_memory_utilization} must be in (0, 1]: the share of "
                            "the GPU's total memory vLLM may claim")
    if max_model_len is not None and max_model_len < 1:
        raise OntolinkError(f"--max-model-len {max_model_len} must be a positive number of tokens")


def gpu_holders(nvidia_smi_csv: str) -> list[tuple[int, str, int]]:
    """[(pid, process name, MiB)] from ``nvidia-smi --query-compute-apps=pid,process_name,used_memory
    --format=csv,noheader,nounits``, largest first."""
    holders: list[tuple[int, str, int]] = []
    for line in nvidia_smi_csv.splitlines():
        fields = [field.strip() for field in line.split(",")]
        if len(fields) >= 3 and fields[0].isdigit():
            used = fields[-1].split()[0]
            holders.append((int(fields[0]), ",".join(fields[1:-1]), int(used) if used.isdigit() else 0))
    return sorted(holders, key=lambda holder: -holder[2])


def memory_shortfall(free: float, total: float, gpu_memory_utilization: float, max_model_len: int | None,
                     holders: Sequence[tuple[int, str, int]] = (), device: str = "cuda:0") -> str | None:
    """None when ``free`` bytes of the GPU's ``total`` cover the share vLLM asks for; else one message
    saying who holds the rest and what to lower."""
    wanted = gpu_memory_utilization * total
    if free >= wanted:
        return None
    fits = int(free / total * 100) / 100 - 0.01  # a margin for the CUDA context vLLM adds when it starts
    held = ", ".join(f"pid {pid} {name} {used} MiB" for pid, name, used in holders) or "not listed by nvidia-smi"
    lower = (f"lower --gpu-memory-utilization to {fits:.2f} or less" if fits > 0.05 else
             "free the GPU first (nothing of it is left for vLLM)")
    return (f"vLLM asks for {gpu_memory_utilization:.2f} of {device}'s {total / GIB:.1f} GiB "
            f"({wanted / GIB:.1f} GiB) but {free / GIB:.1f} GiB is free (held by: {held}): {lower}, lower "
            f"--max-model-len (now {max_model_len}; its KV cache is reserved up front), or run the other steps "
            "of the pipe with --device cpu")


def _gpu_memory_message(gpu_memory_utilization: float, max_model_len: int | None) -> str | None:
    """memory_shortfall for the GPU vLLM will use (torch's view of free memory, nvidia-smi's of who holds it)."""
    import subprocess

    import torch

    if not torch.cuda.is_available():  # vLLM's CPU, TPU or other builds: vLLM sizes its own memory
        return None
    free, total = torch.cuda.mem_get_info()
    try:
        listing = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,process_name,used_memory",
                                  "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=10,
                                 check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        listing = ""
    return memory_shortfall(free, total, gpu_memory_utilization, max_model_len, gpu_holders(listing),
                            f"cuda:{torch.cuda.current_device()}")


@LLM_BACKENDS.register("vllm")
class VLLMBackend(LLMBackend):
    name = "vllm"
    default_batch_size = 256
    needs_gpu = True
    default_model = DEFAULT_MODEL

    def __init__(self, model: str | None = None, max_new_tokens: int = GenAliasesOptions.max_new_tokens,
                 repetition_penalty: float = GenAliasesOptions.repetition_penalty, seed: int = DEFAULT_SEED,
                 max_model_len: int = DEFAULT_MAX_MODEL_LEN, gpu_memory_utilization: float = DEFAULT_MEMORY_SHARE,
                 **_ignored: Any) -> None:
        super().__init__(model=model, max_new_tokens=max_new_tokens)
        max_model_len = max_model_len or DEFAULT_MAX_MODEL_LEN
        check_memory_options(gpu_memory_utilization, max_model_len)
        vllm = _import_vllm()
        check_version(vllm.__version__)
        shortfall = _gpu_memory_message(gpu_memory_utilization, max_model_len)
        if shortfall:
            raise OntolinkError(shortfall)
        self.repetition_penalty = repetition_penalty
        self._sampling = vllm.SamplingParams(temperature=0, max_tokens=max_new_tokens,
                                             repetition_penalty=repetition_penalty, seed=seed)
        try:
            self._llm = vllm.LLM(model=self.model, seed=seed, max_model_len=max_model_len,
                                 gpu_memory_utilization=gpu_memory_utilization)
        except Exception as error:  # noqa: BLE001 - any failure becomes one line
            first = str(error).splitlines()[0] if str(error) else ""
            # memory taken between the check and the load (another step of a pipe starting), or a KV cache
            # that cannot hold one sequence of --max-model-len
            shortfall = _gpu_memory_message(gpu_memory_utilization, max_model_len) if "memory" in first else None
            raise OntolinkError(f"vLLM cannot load {self.model!r}: {type(error).__name__}: {first}"
                                + (f"; {shortfall}" if shortfall else "")) from None

    def describe(self) -> dict[str, Any]:
        return {"temperature": 0, "max_new_tokens": self.max_new_tokens,
                "repetition_penalty": self.repetition_penalty}

    def generate(self, conversations: Sequence[list[dict[str, str]]]) -> list[Completion]:
        if not conversations:
            return []
        started = time.perf_counter()
        outputs = self._llm.chat(conversations, self._sampling, use_tqdm=False)
        seconds = (time.perf_counter() - started) / len(conversations)
        completions: list[Completion] = []
        for output in outputs:
            best = output.outputs[0]
            completions.append(Completion(text=best.text.strip(), prompt_tokens=len(output.prompt_token_ids or []),
                                          completion_tokens=len(best.token_ids), seconds=seconds))
        return completions

    def close(self) -> None:
        self._llm = None
