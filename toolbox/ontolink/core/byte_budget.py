"""Byte budgets that an environment variable may change (the link memo, the record of ids, the longest line)."""

import os

from ontolink.core.errors import InputError


def byte_budget(variable: str, default: int, example: str = "256M", minimum: int = 0) -> int:
    """``default`` bytes, or what ``variable`` says: bytes, with a K, M or G suffix allowed; a value below
    ``minimum`` (or no number) is a one-line error naming the variable."""
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1].upper(), 1)
    try:
        value = int(text[:-1] if scale > 1 else text) * scale
    except ValueError:
        value = minimum - 1
    if value < minimum:
        kind = "a positive number" if minimum > 0 else "a number"
        raise InputError(f"{variable}={text!r} is not {kind} of bytes (e.g. {example})")  # exit 2, as a bad option
    return value
