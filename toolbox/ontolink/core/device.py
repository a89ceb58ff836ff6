"""`--device auto|cpu|cuda[:N]`: one place that decides where tensors and indexes live."""

import os

from ontolink.core.errors import InputError, OntolinkError

TRAIN_PRECISION_VARIABLE = "ONTOLINK_TRAIN_PRECISION"  # fp32, fp16 or bf16 for every trainer (auto when unset)


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


def release_gpu_memory():
    """Give the GPU memory torch has cached back to the driver (where torch is loaded), so that another process
    (the next step of a pipe) can have it; the CUDA context itself stays until this process ends."""
    import gc
    import sys

    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        torch.cuda.empty_cache()


PRECISIONS = ("fp32", "fp16", "bf16", "int8")


def bf16_supported(device):
    """True where ``device`` is a CUDA GPU with native bfloat16 arithmetic (compute capability 8.0 on: A100,
    H100, RTX 30xx on); emulated bf16 on older GPUs is slower than fp16, so it counts as unsupported."""
    if not device.startswith("cuda"):
        return False
    import torch

    index = int(device.split(":")[1]) if ":" in device else torch.cuda.current_device()
    return torch.cuda.get_device_capability(index)[0] >= 8


def resolve_precision(precision, device):
    """Inference arithmetic. auto: fp16 on CUDA, int8 dynamic quantisation on CPU (both keep MiniLM's ranking;
    fp16's 10-bit mantissa orders near-equal names as fp32 does more often than bf16's 7 bits, so auto does
    not pick bf16 for encoding: ask for it with --precision bf16 on a GPU that has it)."""
    precision = (precision or "auto").lower()
    if precision == "auto":
        return "fp16" if device.startswith("cuda") else "int8"
    if precision not in PRECISIONS:
        raise OntolinkError(f"unknown precision {precision!r}: use auto, fp32, fp16, bf16 or int8")
    if precision in ("fp16", "bf16") and not device.startswith("cuda"):
        raise OntolinkError(f"--precision {precision} needs a CUDA device; on CPU use int8 or fp32")
    if precision == "int8" and device.startswith("cuda"):
        raise OntolinkError("--precision int8 is the CPU path; on CUDA use fp16, bf16 or fp32")
    if precision == "bf16" and not bf16_supported(device):
        raise OntolinkError(f"--precision bf16 needs a GPU with native bfloat16 (compute capability 8.0 on); "
                            f"{device} has none: use fp16")
    return precision


def portable_precision(built_with, device, bf16=None):
    """The precision to rebuild an artifact's encoder with on ``device`` (resolved: cpu, cuda, cuda:N), given
    the one its manifest records: the same where the device can run it, else the nearest it can. A GPU
    machine writes fp16 or bf16, which a CPU cannot run (fp32 there: the same vectors to ~1e-3); a CPU machine
    writes int8, the CPU's dynamic quantisation, which CUDA cannot run (fp16 there). Every loader of a model
    directory (indexes, the multi-vector index, ReS readers, alignment heads) goes through here, so an artifact
    moves between machines. ``bf16``: whether the device has native bf16 (None: ask the device)."""
    on_gpu = device.startswith("cuda")
    if built_with == "int8" and on_gpu:
        return "fp16"
    if built_with in ("fp16", "bf16") and not on_gpu:
        return "fp32"
    if built_with == "bf16" and not (bf16_supported(device) if bf16 is None else bf16):
        return "fp16"
    return built_with


def training_precision(precision, device, bf16=None):
    """Mixed precision of a training loop: auto is bf16 on a GPU that has it (no loss scaling, fp32's range),
    fp16 with a grad scaler on other GPUs, fp32 on CPU. ``bf16``: whether the device has native bf16 (None:
    ask the device)."""
    precision = (precision or "auto").lower()
    on_gpu = device.startswith("cuda")
    has_bf16 = on_gpu and (bf16_supported(device) if bf16 is None else bf16)
    if precision == "auto":
        return ("bf16" if has_bf16 else "fp16") if on_gpu else "fp32"
    if precision not in ("fp32", "fp16", "bf16"):
        raise OntolinkError(f"unknown training precision {precision!r}: use auto, fp32, fp16 or bf16")
    if precision != "fp32" and not on_gpu:
        raise OntolinkError(f"{precision} trains on a CUDA device; on CPU training is fp32")
    if precision == "bf16" and not has_bf16:
        raise OntolinkError(f"bf16 needs a GPU with native bfloat16 (compute capability 8.0 on); {device} has "
                            "none: use fp16")
    return precision


def environment_training_precision(device, bf16=None):
    """The precision every trainer runs at on ``device``: ``TRAIN_PRECISION_VARIABLE``'s, or auto when unset
    (``training_precision``). A value that cannot be used there is an ``InputError`` naming the variable (exit 2).
    """
    text = os.environ.get(TRAIN_PRECISION_VARIABLE, "").strip()
    try:
        return training_precision(text or "auto", device, bf16)
    except OntolinkError as error:
        raise InputError(f"{TRAIN_PRECISION_VARIABLE}={text!r}: {error}") from None


def training_device(device="auto"):
    """``resolve_device`` for a trainer, which also checks the precision it will train at there
    (``environment_training_precision``) before it loads a model: a bad setting stops it at once, not after
    minutes of loading and mining."""
    device = resolve_device(device)
    environment_training_precision(device)
    return device
