"""`--device auto|cpu|cuda[:N]`: one place that decides where tensors and indexes live."""

import os

from ontolink.core.errors import OntolinkError


def usable_threads():
    """Threads for CPU work (encoder sessions, partial sorts): OMP_NUM_THREADS when set, else the cores this process may use."""
    if os.environ.get("OMP_NUM_THREADS", "").isdigit():
        return max(1, int(os.environ["OMP_NUM_THREADS"]))
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _no_gpu_device_files():
    """True where no NVIDIA, ROCm or WSL2 GPU device node exists, so torch cannot see CUDA: the CPU path
    then skips importing torch (about a second), which the ONNX encoder does not need."""
    from pathlib import Path

    dev = Path("/dev")
    return dev.is_dir() and not any(dev.glob("nvidia*")) and not any(
        (dev / name).exists() for name in ("kfd", "dxg"))


def resolve_device(device="auto"):
    device = (device or "auto").lower()
    if device == "cpu" or (device == "auto" and _no_gpu_device_files()):
        return "cpu"
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise OntolinkError(f"--device {device} asked for, but torch sees no CUDA device (use --device cpu or auto)")
    if device != "cpu" and not device.startswith("cuda") and device != "mps":
        raise OntolinkError(f"unknown device {device!r}: use auto, cpu, cuda or cuda:N")
    return device


def resolve_precision(precision, device):
    """auto: fp16 on CUDA, int8 dynamic quantisation on CPU (both keep MiniLM's ranking)."""
    precision = (precision or "auto").lower()
    if precision == "auto":
        return "fp16" if device.startswith("cuda") else "int8"
    if precision == "fp16" and not device.startswith("cuda"):
        raise OntolinkError("--precision fp16 needs a CUDA device; on CPU use int8 or fp32")
    if precision == "int8" and device.startswith("cuda"):
        raise OntolinkError("--precision int8 is the CPU path; on CUDA use fp16 or fp32")
    if precision not in ("fp32", "fp16", "int8"):
        raise OntolinkError(f"unknown precision {precision!r}: use auto, fp32, fp16 or int8")
    return precision
