"""ontolink.training.loop, the loop every trainer shares: accumulated batches and checkpoints."""

import ctypes
import subprocess
import sys

import numpy as np
import pytest
import torch

from ontolink.core.errors import InputError


def test_accumulated_batches_make_the_same_update(tmp_path):
    """The reranker runs a batch a few pairs at a time: the summed gradients equal the whole batch's."""
    from ontolink.training.loop import Checkpoints, run_epochs

    inputs, targets = torch.randn(12, 5, generator=torch.Generator().manual_seed(1)), torch.arange(12) % 3

    def train(accumulate, name):
        torch.manual_seed(0)
        model = torch.nn.Linear(5, 3)
        optimizer = torch.optim.AdamW(model.parameters(), lr=0.1)

        def batch_loss(indices, rng):
            indices = torch.as_tensor(indices)
            return torch.nn.functional.cross_entropy(model(inputs[indices]), targets[indices])

        losses, _ = run_epochs(model, optimizer, Checkpoints(tmp_path / name, "test", {}), lambda directory: None,
                               batch_loss, 12, 6, 2, seed=0, accumulate=accumulate)
        return model.weight.detach(), losses

    whole, whole_losses = train(None, "whole")
    accumulated, accumulated_losses = train(4, "parts")  # 6 = 4 + 2: unequal parts weighted by size
    assert torch.allclose(whole, accumulated, atol=1e-6) and np.allclose(whole_losses, accumulated_losses)
    torch.manual_seed(0)
    assert not torch.allclose(whole, torch.nn.Linear(5, 3).weight.detach(), atol=1e-2)  # training moved it


def test_a_checkpoint_of_another_backbone_is_refused(tmp_path):
    from ontolink.training.loop import Checkpoints

    model = torch.nn.Linear(2, 2)
    made = Checkpoints(tmp_path / "model", "retriever", {"backbone": "sentence-transformers/all-MiniLM-L6-v2"})
    made.save(1, [0.5], lambda directory: None, torch.optim.AdamW(model.parameters()))
    other = Checkpoints(tmp_path / "model", "retriever", {"backbone": "cambridgeltl/SapBERT-from-PubMedBERT-fulltext"})
    with pytest.raises(InputError, match=r"model\.checkpoint: checkpoint was made with other settings \(backbone\)"):
        other.resumable(True)
    assert made.resumable(True)["epoch"] == 1


FREED_MEMORY_SCRIPT = """
import ctypes, sys, tempfile, torch
from ontolink.training.loop import Checkpoints, run_epochs

class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                     "fsmblks", "uordblks", "fordblks", "keepcost")]

mallinfo2 = ctypes.CDLL(None).mallinfo2
mallinfo2.restype = MallInfo2
if sys.argv[1] == "train":  # one step of the loop every trainer runs
    model = torch.nn.Linear(2, 1)
    with tempfile.TemporaryDirectory() as work:
        run_epochs(model, torch.optim.SGD(model.parameters(), lr=0.1), Checkpoints(work + "/m", "test", {}),
                   lambda directory: None, lambda indices, rng: model(torch.ones(len(indices), 2)).sum(), 2, 2, 1, 0)
block = torch.ones(2 ** 21)
del block  # an 8 MB block freed: glibc's default then serves blocks of that size from its heap, kept when freed
blocks = [torch.ones(2 ** 21) for _ in range(40)]  # 320 MB of activation-sized tensors, as in a training step
print(mallinfo2().hblkhd)  # bytes in blocks of their own, which free gives back to the system
"""


@pytest.mark.slow  # two child processes that import torch: 6 s of the fast suite's minute
@pytest.mark.skipif(not hasattr(ctypes.CDLL(None), "mallinfo2"), reason="glibc >= 2.33's allocator")
def test_training_gives_freed_activation_memory_back():
    """Activation-sized tensors must get blocks of their own during training, which leave the process when
    freed, not heap memory that malloc keeps (a retriever step held ~3x its live tensors' memory). The run
    without the training loop shows that the check can tell: glibc puts them in its heap."""
    def mapped(mode):
        run = subprocess.run([sys.executable, "-c", FREED_MEMORY_SCRIPT, mode], capture_output=True, text=True,
                             check=True)
        return int(run.stdout.split()[-1])

    assert mapped("train") >= 320 * 2 ** 20
    assert mapped("plain") < 64 * 2 ** 20
