"""Offline batched generation with vLLM on a GPU machine (``pip install 'ontolink[gpu]'``).

The published setting of alias generation (docs/methods.md) is Llama-3.2-3B-Instruct with greedy
decoding; ``vllm.LLM(...).chat(...)`` applies the model's chat template and
schedules a whole batch at once, so large ``--batch-size`` values pay off.
"""

import time

from ontolink.aliases.llm import LLM_BACKENDS
from ontolink.aliases.llm.base import Completion, LLMBackend
from ontolink.core.errors import OntolinkError

DEFAULT_MODEL = "meta-llama/Llama-3.2-3B-Instruct"
MISSING = "the vllm backend needs vLLM, which is not installed: pip install 'ontolink[gpu]' (on a CUDA machine)"


def _import_vllm():
    try:
        import vllm
    except ImportError:
        raise OntolinkError(MISSING) from None
    return vllm


@LLM_BACKENDS.register("vllm")
class VLLMBackend(LLMBackend):
    name = "vllm"
    default_batch_size = 256
    needs_gpu = True
    default_model = DEFAULT_MODEL

    def __init__(self, model=None, max_new_tokens=64, repetition_penalty=1.0, seed=0, max_model_len=4096,
                 gpu_memory_utilization=0.85, **_ignored):
        super().__init__(model=model, max_new_tokens=max_new_tokens)
        vllm = _import_vllm()
        self.repetition_penalty = repetition_penalty
        self._sampling = vllm.SamplingParams(temperature=0, max_tokens=max_new_tokens,
                                             repetition_penalty=repetition_penalty, seed=seed)
        try:
            self._llm = vllm.LLM(model=self.model, seed=seed, max_model_len=max_model_len,
                                 gpu_memory_utilization=gpu_memory_utilization)
        except Exception as error:  # noqa: BLE001 - any failure becomes one line
            first = str(error).splitlines()[0] if str(error) else ""
            raise OntolinkError(f"vLLM cannot load {self.model!r}: {type(error).__name__}: {first}") from None

    def describe(self):
        return {"temperature": 0, "max_new_tokens": self.max_new_tokens,
                "repetition_penalty": self.repetition_penalty}

    def generate(self, conversations):
        if not conversations:
            return []
        started = time.perf_counter()
        outputs = self._llm.chat(conversations, self._sampling, use_tqdm=False)
        seconds = (time.perf_counter() - started) / len(conversations)
        completions = []
        for output in outputs:
            best = output.outputs[0]
            completions.append(Completion(text=best.text.strip(), prompt_tokens=len(output.prompt_token_ids or []),
                                          completion_tokens=len(best.token_ids), seconds=seconds))
        return completions

    def close(self):
        self._llm = None
