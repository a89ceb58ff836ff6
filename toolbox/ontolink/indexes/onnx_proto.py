"""Small ONNX models written as protobuf bytes directly, for graphs built at link time (the int8 name scan).

Importing the onnx package takes 0.6-0.7 s (its ml_dtypes extension), longer than the searches such a
graph serves; ONNX Runtime reads the bytes alone. Only what those graphs use is here: nodes without
attributes, tensors as raw little-endian data, inputs and outputs with named or fixed dimensions.
Field numbers are onnx.proto's (tests check the bytes with onnx's own checker).
"""

import numpy as np

IR_VERSION = 8
ELEMENT_TYPES = {np.dtype(np.float32): 1, np.dtype(np.uint8): 2, np.dtype(np.int8): 3, np.dtype(np.int64): 7}


def _varint(value):
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _number(field, value):
    return [_varint(field << 3) + _varint(value)]


def _message(field, payload):
    """A length-delimited field: a string, bytes or a nested message (a list of pieces).

    Every message is kept as a list of pieces and joined once in ``model``: a nested message's bytes
    would otherwise be copied once per level (four copies of a 15 MB tensor, 90 ms).
    """
    pieces = [payload.encode() if isinstance(payload, str) else payload] if not isinstance(payload, list) \
        else payload
    return [_varint(field << 3 | 2) + _varint(sum(len(piece) for piece in pieces)), *pieces]


def _all(field, messages):
    return [piece for message in messages for piece in _message(field, message)]


def tensor(name, array):
    """A TensorProto of ``array`` (C order), its data not copied until the model is joined."""
    array = np.ascontiguousarray(array.astype(array.dtype.newbyteorder("<"), copy=False))
    return [piece for dim in array.shape for piece in _number(1, dim)] + _number(2, ELEMENT_TYPES[array.dtype]) \
        + _message(8, name) + _message(9, memoryview(array.reshape(-1)).cast("B"))


def value_info(name, dtype, shape):
    """A ValueInfoProto: a tensor input or output; a dimension is a number or a name."""
    dims = [piece for dim in shape for piece in _message(1, _message(2, dim) if isinstance(dim, str)
                                                         else _number(1, dim))]
    tensor_type = _number(1, ELEMENT_TYPES[np.dtype(dtype)]) + _message(2, dims)
    return _message(1, name) + _message(2, _message(1, tensor_type))


def node(op_type, inputs, outputs, domain=""):
    return _all(1, inputs) + _all(2, outputs) + _message(4, op_type) + (_message(7, domain) if domain else [])


def model(name, nodes, inputs, outputs, initializers, opsets):
    """ModelProto bytes. ``opsets``: {domain: version} ("" is the default domain)."""
    graph = _all(1, nodes) + _message(2, name) + _all(5, initializers) + _all(11, inputs) + _all(12, outputs)
    opset_ids = _all(8, [(_message(1, domain) if domain else []) + _number(2, version)
                         for domain, version in opsets.items()])
    return b"".join(_number(1, IR_VERSION) + _message(7, graph) + opset_ids)
