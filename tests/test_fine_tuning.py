"""toolbox.fine_tuning, the loop every trainer shares: accumulated batches and checkpoints."""

import numpy as np
import pytest
import torch

from toolbox.errors import InputError


def test_accumulated_batches_make_the_same_update(tmp_path):
    """The reranker runs a batch a few pairs at a time: the summed gradients equal the whole batch's."""
    from toolbox.fine_tuning import Checkpoints, run_epochs

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
    from toolbox.fine_tuning import Checkpoints

    model = torch.nn.Linear(2, 2)
    made = Checkpoints(tmp_path / "model", "retriever", {"backbone": "sentence-transformers/all-MiniLM-L6-v2"})
    made.save(1, [0.5], lambda directory: None, torch.optim.AdamW(model.parameters()))
    other = Checkpoints(tmp_path / "model", "retriever", {"backbone": "cambridgeltl/SapBERT-from-PubMedBERT-fulltext"})
    with pytest.raises(InputError, match=r"model\.checkpoint: checkpoint was made with other settings \(backbone\)"):
        other.resumable(True)
    assert made.resumable(True)["epoch"] == 1
