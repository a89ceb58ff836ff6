"""Sentence encoders: one module per runtime, each registered in ``ENCODERS`` (``index --runtime``).

An encoder turns texts into one float32 vector each; the dense name index and
`link` use only the ``Encoder`` interface (``base.py``), so another runtime or
library is one module here whose class subclasses ``Encoder`` and registers.

``load_encoder`` picks the runtime: ``auto`` is ONNX Runtime on CPU for a plain
sentence-transformers model (batch-invariant int8, no torch at run time) and
PyTorch otherwise (fp16 on CUDA; trained retrievers read marked inputs with span
pooling, which the ONNX export does not do).
"""

from ontolink.encoders.base import ENCODERS, Encoder, UnsupportedModel
from ontolink.core.device import resolve_device, resolve_precision
from ontolink.core.errors import OntolinkError
from ontolink.core.manifest import peek_manifest
from ontolink.core.options import AUTO_DEVICE
AUTO = "auto"


def runtime_names() -> list[str]:
    """``--runtime`` choices: auto and every registered encoder that asks to be listed."""
    return [AUTO, *(name for name in ENCODERS.names() if getattr(ENCODERS.get(name), "listed", True))]


def trained_reading(model: str | None, device: str, runtime: str, precision: str) -> tuple[str, str]:
    """(runtime, precision) for ``model``: a retriever from `train retriever` on a CPU, left to auto, is read
    as its manifest's "read_as" says (the trainer's choice, measured: docs/methods.md), and without one in
    PyTorch fp32, the way it was trained and scored on its held-out pairs; anything else as asked."""
    from pathlib import Path

    if runtime != AUTO or (precision or AUTO) != AUTO or device != "cpu" or not model or not Path(model).is_dir():
        return runtime, precision
    manifest = peek_manifest(model)
    if not manifest or manifest.get("artifact") != "retriever":
        return runtime, precision
    read_as = manifest.get("read_as") or {"runtime": "torch", "precision": "fp32"}
    return read_as.get("runtime", "torch"), read_as.get("precision", "fp32")


def load_encoder(model: str | None = None, device: str = AUTO_DEVICE, precision: str = AUTO, runtime: str = AUTO,
                 max_length: int = 128) -> Encoder:
    """The encoder of ``model`` (default: all-MiniLM-L6-v2 from its PyPI package) in ``runtime``."""
    device = resolve_device(device)
    runtime, precision = trained_reading(model, device, runtime, precision)
    precision = resolve_precision(precision, device)
    for name in (["onnx", "torch"] if runtime == AUTO else [runtime]):
        try:
            return ENCODERS.get(name)(**({"model": model} if model else {}), device=device, precision=precision,
                                      max_length=max_length)
        except UnsupportedModel as reason:
            if runtime != AUTO:
                raise OntolinkError(f"--runtime {name} cannot run {model!r}: {reason}; use --runtime torch") from None
    raise AssertionError("unreachable: the torch runtime runs every model")
