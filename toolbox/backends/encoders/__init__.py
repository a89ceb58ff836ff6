"""Sentence encoders: ONNX Runtime (the CPU default) and PyTorch (CUDA, trained retrievers, the rest).

``load_encoder`` picks the runtime: ``auto`` is ONNX on CPU for a plain
sentence-transformers model (batch-invariant int8, no torch at run time),
PyTorch otherwise (fp16 on CUDA; retrievers read marked inputs with span
pooling, which the ONNX export does not do).
"""

RUNTIMES = ("auto", "onnx", "torch")


def load_encoder(model=None, device="auto", precision="auto", runtime="auto", max_length=128):
    from toolbox.backends.encoders.sentence import DEFAULT_ENCODER, SentenceEncoder
    from toolbox.device import resolve_device, resolve_precision
    from toolbox.errors import OntolinkError

    model = model or DEFAULT_ENCODER
    if runtime not in RUNTIMES:
        raise OntolinkError(f"unknown encoder runtime {runtime!r} (known: {', '.join(RUNTIMES)})")
    device = resolve_device(device)
    precision = resolve_precision(precision, device)
    if runtime != "torch":
        from toolbox.backends.encoders.onnx import OnnxSentenceEncoder, UnsupportedModel

        try:
            return OnnxSentenceEncoder(model, device=device, precision=precision, max_length=max_length)
        except UnsupportedModel as reason:
            if runtime == "onnx":
                raise OntolinkError(f"--runtime onnx cannot run {model!r}: {reason}; use --runtime torch") from None
    return SentenceEncoder(model, device=device, precision=precision, max_length=max_length)
