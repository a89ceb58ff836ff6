"""Checks of the files inside an artifact directory, made on load: an artifact may come from anyone, and
what it declares (sizes, shapes, row numbers) goes into numpy, scipy and FAISS, which trust it.

Each problem is an ``InputError`` naming the file (exit status 2), never a KeyError, an IndexError, an
endless read or a crash in compiled code.
"""

import json
import os
import stat
from pathlib import Path

from ontolink.core.errors import InputError

REBUILD = "; rebuild it"


def regular_file(path):
    """``path``'s size, refusing what is not a regular file (a link to /dev/zero would be read forever)."""
    path = Path(path)
    try:
        status = os.stat(path)
    except FileNotFoundError:
        raise InputError("is missing: the artifact is truncated" + REBUILD, path) from None
    except OSError as error:
        raise InputError(f"cannot be read ({error.strerror})", path) from None
    if not stat.S_ISREG(status.st_mode):
        raise InputError("is not a regular file (a device, a pipe or a directory)" + REBUILD, path)
    return status.st_size


def read_json(path):
    """The JSON value of an artifact file, read no further than the size the file has."""
    size = regular_file(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(size)
        return json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as error:
        raise InputError(f"is damaged or truncated ({str(error)[:200]})" + REBUILD, path) from None


def load_tensors(path, expected):
    """The arrays of a safetensors file; ``expected`` maps each required name to (dtype kind(s), ndim):
    e.g. ``{"indices": ("iu", 1)}``. The safetensors library checks the header against the file size."""
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    regular_file(path)
    try:
        arrays = load_file(str(path))
    except (SafetensorError, ValueError, OSError, TypeError) as error:
        raise InputError(f"is damaged or truncated ({str(error)[:200]})" + REBUILD, path) from None
    for name, (kinds, ndim) in expected.items():
        if name not in arrays:
            raise InputError(f"holds no tensor {name!r}" + REBUILD, path)
        array = arrays[name]
        if array.dtype.kind not in kinds or array.ndim != ndim:
            raise InputError(f"tensor {name!r} is {array.dtype}{list(array.shape)}, expected a {ndim}-D "
                             f"{'integer' if set(kinds) <= set('iu') else 'number'} array" + REBUILD, path)
    return arrays


def check_rows(values, count, what, path):
    """Every value of ``values`` (integers) is a row below ``count``."""
    import numpy as np  # here: the ontology loader imports this module, and `annotate` needs no numpy

    values = np.asarray(values)
    if values.size == 0:
        return
    if values.dtype.kind not in "iu":
        raise InputError(f"{what} must be integers" + REBUILD, path)
    low, high = values.min(), values.max()
    if low < 0 or high >= count:
        raise InputError(f"{what} holds {low if low < 0 else high}, outside 0 to {count - 1}" + REBUILD, path)


def check_csr(data, indices, indptr, shape, path):
    """A CSR matrix's arrays agree with each other and with ``shape`` (scipy trusts them: an index out of
    range crashes the process in its conversions)."""
    import numpy as np

    if len(shape) != 2 or min(shape) < 0:
        raise InputError(f"declares the shape {list(shape)}, not two sizes" + REBUILD, path)
    rows, columns = (int(size) for size in shape)
    describe = InputError(f"row pointers (indptr) do not describe {rows} rows" + REBUILD, path)
    if len(indptr) != rows + 1 or indptr[0] != 0:
        raise describe
    if indptr[-1] != len(indices) or len(indices) != len(data):
        raise InputError(f"row pointers end at {indptr[-1]} but there are {len(indices)} column indices and "
                         f"{len(data)} values" + REBUILD, path)
    # growing, compared as int64: unsigned, a pointer that falls back makes a large positive difference (a row
    # read past the values, a crash)
    if int(np.max(indptr)) > len(indices) or np.any(np.diff(np.asarray(indptr, dtype=np.int64)) < 0):
        raise describe
    check_rows(indices, columns, "column indices", path)


def field(mapping, path, *keys, kind=None):
    """``mapping[keys[0]][keys[1]]...``, refusing a missing key or (with ``kind``) a value of another type."""
    value = mapping
    for depth, key in enumerate(keys):
        if not isinstance(value, dict) or key not in value:
            raise InputError(f"has no {'.'.join(map(str, keys[:depth + 1]))!r}" + REBUILD, path)
        value = value[key]
    if kind is not None and not isinstance(value, kind):
        expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise InputError(f"{'.'.join(map(str, keys))!r} must be a {expected}, got {type(value).__name__}"
                         + REBUILD, path)
    return value


FLOAT_TYPES = ("F16", "BF16", "F32", "F64")


def tensor_header(path):
    """``{name: (dtype, shape)}`` of a safetensors file, from its header alone: nothing is loaded, so sizes can be
    checked before anything of the declared size is made. The safetensors library checks the header against
    the file size."""
    from safetensors import SafetensorError, safe_open

    regular_file(path)
    try:
        with safe_open(str(path), framework="numpy") as handle:
            found = {}
            for name in handle.keys():
                tensor = handle.get_slice(name)
                found[name] = (tensor.get_dtype(), tuple(tensor.get_shape()))
            return found
    except (SafetensorError, ValueError, OSError, TypeError) as error:
        raise InputError(f"is damaged or truncated ({str(error)[:200]})" + REBUILD, path) from None


def module_shapes(build):
    """``{name: shape}`` of the state of the torch module ``build()`` makes, made on the meta device: the sizes a
    manifest declares cost no memory here however large they are."""
    import torch

    with torch.device("meta"):
        module = build()
    return {name: tuple(value.shape) for name, value in module.state_dict().items()}


def check_weights(path, expected, optional=(), extra=()):
    """The safetensors file ``path`` holds the floating-point tensors ``expected`` (``{name: shape}``, e.g. from
    ``module_shapes``) of exactly those shapes; ``optional`` names may be absent (tied weights), ``extra`` names
    may be there besides (None: any other tensor, which the reader ignores). Checked from the header, before the file is loaded."""
    header = tensor_header(path)
    for name, shape in expected.items():
        if name not in header:
            if name in optional:
                continue
            raise InputError(f"holds no tensor {name!r}: it does not match its manifest" + REBUILD, path)
        dtype, found = header[name]
        if dtype not in FLOAT_TYPES:
            raise InputError(f"tensor {name!r} is {dtype}, expected floating point" + REBUILD, path)
        if tuple(found) != tuple(shape):
            raise InputError(f"tensor {name!r} has the shape {list(found)} where its manifest makes it "
                             f"{list(shape)}" + REBUILD, path)
    unknown = [] if extra is None else sorted(set(header) - set(expected) - set(extra))
    if unknown:
        raise InputError(f"holds tensors its manifest does not describe ({', '.join(map(repr, unknown[:3]))})"
                         + REBUILD, path)
    return header


def regular_files(directory):
    """Every file directly in ``directory`` (a model folder that a library reads by name) is a regular file."""
    for path in sorted(Path(directory).iterdir()):
        if not path.is_dir():
            regular_file(path)


def number(mapping, path, *keys, low=None, high=None, integer=True):
    """``field`` for a number (an integer unless ``integer`` is false; never a bool) from ``low`` to ``high``
    (NaN is in no range)."""
    value = field(mapping, path, *keys)
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not (
            (low is None or value >= low) and (high is None or value <= high) and value == value):
        wanted = "an integer" if integer else "a number"
        bounds = ("" if low is None and high is None else f" from {low} to {high}" if high is not None and
                  low is not None else f" of at least {low}" if high is None else f" of at most {high}")
        raise InputError(f"{'.'.join(map(str, keys))!r} must be {wanted}{bounds}, got {value!r}" + REBUILD, path)
    return value
