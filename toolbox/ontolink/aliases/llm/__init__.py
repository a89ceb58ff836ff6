"""LLM backends for gen-aliases, one module each, registered in ``LLM_BACKENDS`` (``--backend``).

Every backend subclasses ``base.LLMBackend``; its module imports torch,
transformers or vllm only when the backend is built, so ``ontolink --help``
never does.
"""

from typing import Any

from ontolink.aliases.llm.base import LLMBackend
from ontolink.core.registry import Registry

LLM_BACKENDS: Registry[LLMBackend] = Registry("LLM backend", "llm", "ontolink.aliases.llm", LLMBackend)
DEFAULT_BACKEND = "transformers"


def load_backend(name: str, **options: Any) -> LLMBackend:
    return LLM_BACKENDS.get(name)(**options)
