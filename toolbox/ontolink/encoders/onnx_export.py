"""Export a sentence-transformers model to ONNX, and quantise it to int8 per token.

ONNX Runtime's own dynamic quantisation (``quantize_dynamic``) computes one
activation scale for a whole batch, so a text's vector depends on the texts
beside it. Here every MatMul with a constant weight becomes

    x_q = QuantizeLinear(x, max|x_row| / 127, 128, axis=rows)     per token (row)
    y   = MatMulIntegerToFloat(x_q, W_q, 1, w_scale, 128) * max|x_row| / 127

with W quantised symmetrically per output column. Integer accumulation is
exact, so a token's output depends on that token's activations alone: the
same text gives the same vector in any batch, and per-token scales are also
closer to fp32 than one scale per batch (mean cosine 0.997 vs 0.992 on HPO
names). Activations that feed several MatMuls (query, key, value) are
quantised once.
"""

import os
from pathlib import Path

import numpy as np

from ontolink.core.cache import write_atomically

OPSET = 17
# Bump when the exported graph changes: cached exports and name vectors are then made anew, and an index
# built by another version stops reusing its stored name vectors for mentions (its encoder differs).
# 3: QuantizeLinear scales each token itself (one multiply pass fewer per activation), ranks kept for fusions.
EXPORT_VERSION = 3


def export_model(model_dir, target):
    """Write ``model_dir``'s transformer (token embeddings out) to ``target`` as fp32 ONNX."""
    import inspect
    import warnings

    import torch
    from transformers import AutoModel
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()
    backbone = AutoModel.from_pretrained(model_dir).eval()
    accepted = inspect.signature(backbone.forward).parameters
    input_names = [name for name in ("input_ids", "attention_mask", "token_type_ids") if name in accepted]

    class TokenEmbeddings(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = backbone

        def forward(self, *inputs):
            return self.backbone(**dict(zip(input_names, inputs))).last_hidden_state

    example = tuple(torch.ones((2, 4), dtype=torch.int64) for _ in input_names)
    axes = {name: {0: "batch", 1: "tokens"} for name in [*input_names, "token_embeddings"]}
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation and tracer warnings
        torch.onnx.export(TokenEmbeddings(), example, str(target), input_names=list(input_names),
                          output_names=["token_embeddings"], dynamic_axes=axes, opset_version=OPSET,
                          dynamo=False)


def quantize_per_token(source, target):
    """Rewrite an fp32 ONNX graph: constant-weight MatMuls in int8, activations scaled per token."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    weights = {tensor.name: tensor for tensor in graph.initializer}
    constants = [numpy_helper.from_array(np.array(value, dtype=dtype), name) for name, value, dtype in (
        ("q_floor", 1e-8, np.float32), ("q_127", 127.0, np.float32), ("q_one", 1.0, np.float32),
        ("q_zero_point", 128, np.uint8), ("q_flat", [-1], np.int64))]
    nodes, quantised, matmuls = [], {}, 0
    for node in graph.node:
        weight = weights.get(node.input[1]) if node.op_type == "MatMul" else None
        if weight is None or len(weight.dims) != 2:
            nodes.append(node)
            continue
        values = numpy_helper.to_array(weight).astype(np.float32)
        inputs = values.shape[0]
        column_scale = np.maximum(np.abs(values).max(axis=0), 1e-12) / 127.0
        prefix = f"q_matmul{matmuls}"
        matmuls += 1
        constants += [numpy_helper.from_array(np.clip(np.round(values / column_scale), -127, 127).astype(np.int8),
                                              f"{prefix}_weight"),
                      numpy_helper.from_array(column_scale.astype(np.float32), f"{prefix}_scale")]
        activation = node.input[0]
        if activation not in quantised:
            # QuantizeLinear takes one scale per row of a matrix (axis 0): tokens become rows for it, and
            # the integers take the activation's own shape back, so later fusions still see its rank
            name = f"q_activation{len(quantised)}"
            constants.append(numpy_helper.from_array(np.array([-1, inputs], dtype=np.int64), f"{name}_matrix"))
            nodes += [
                helper.make_node("Abs", [activation], [f"{name}_abs"]),
                helper.make_node("ReduceMax", [f"{name}_abs"], [f"{name}_max"], axes=[-1], keepdims=1),
                helper.make_node("Max", [f"{name}_max", "q_floor"], [f"{name}_range"]),
                helper.make_node("Div", [f"{name}_range", "q_127"], [f"{name}_scale"]),
                helper.make_node("Reshape", [f"{name}_scale", "q_flat"], [f"{name}_row_scale"]),
                helper.make_node("Shape", [f"{name}_row_scale"], [f"{name}_count"]),
                helper.make_node("Expand", ["q_zero_point", f"{name}_count"], [f"{name}_zero_points"]),
                helper.make_node("Reshape", [activation, f"{name}_matrix"], [f"{name}_rows"]),
                helper.make_node("QuantizeLinear", [f"{name}_rows", f"{name}_row_scale", f"{name}_zero_points"],
                                 [f"{name}_u8_rows"], axis=0),
                helper.make_node("Shape", [activation], [f"{name}_shape"]),
                helper.make_node("Reshape", [f"{name}_u8_rows", f"{name}_shape"], [f"{name}_u8"]),
            ]
            quantised[activation] = name
        name = quantised[activation]
        nodes += [
            helper.make_node("MatMulIntegerToFloat", [f"{name}_u8", f"{prefix}_weight", "q_one", f"{prefix}_scale",
                                                      "q_zero_point"], [f"{prefix}_out"], domain="com.microsoft"),
            helper.make_node("Mul", [f"{prefix}_out", f"{name}_scale"], [node.output[0]]),
        ]
    used = {name for node in nodes for name in node.input}
    kept = [tensor for tensor in graph.initializer if tensor.name in used]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(kept + constants)
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, str(target))
    return matmuls


def exported_model(model_dir, directory, precision):
    """(the path of ``model_dir`` exported at ``precision`` in ``directory``, whether it was exported now): the
    export is made once.

    Written under a temporary name and renamed, so a concurrent or interrupted
    export never leaves a half-written model behind.
    """
    directory = Path(directory)
    path = directory / f"model-{precision}.onnx"
    if path.exists():
        return path, False

    directory.mkdir(parents=True, exist_ok=True)

    def write(temporary):
        if precision != "int8":
            export_model(model_dir, temporary)
            return
        exported = directory / f".fp32-{os.getpid()}.onnx"
        try:
            export_model(model_dir, exported)
            quantize_per_token(exported, temporary)
        finally:
            exported.unlink(missing_ok=True)

    return write_atomically(path, write), True
