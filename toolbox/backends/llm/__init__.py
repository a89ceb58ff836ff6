"""LLM backends for gen-aliases, one module each, imported only when chosen.

``BACKENDS`` maps a name to ``"module:Class"``; ``load_backend(name, **options)``
imports the module and builds the backend, so ``ontolink --help`` never imports
torch, transformers or vllm. Every backend subclasses ``base.LLMBackend``.
"""

import importlib

from toolbox.errors import OntolinkError

BACKENDS = {
    "transformers": "toolbox.backends.llm.transformers_local:TransformersBackend",
    "vllm": "toolbox.backends.llm.vllm_offline:VLLMBackend",
    "openai": "toolbox.backends.llm.openai_http:OpenAIBackend",
}
DEFAULT_BACKEND = "transformers"


def backend_class(name):
    try:
        target = BACKENDS[name]
    except KeyError:
        raise OntolinkError(f"unknown LLM backend {name!r}: use one of {', '.join(BACKENDS)}") from None
    module_name, class_name = target.split(":")
    return getattr(importlib.import_module(module_name), class_name)


def load_backend(name, **options):
    return backend_class(name)(**options)
