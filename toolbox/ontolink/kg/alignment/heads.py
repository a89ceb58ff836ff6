"""Projection heads g (docs/alignment.md): the only trained part of an alignment model."""

import torch
from torch import nn

from ontolink.kg.alignment.choices import HEADS
from ontolink.core.errors import InputError
from ontolink.kg.options import AlignFitOptions


class LinearHead(nn.Module):
    """One linear map: no hidden layer, non-linearity, normalisation or dropout."""

    def __init__(self, d_in, d_out, **unused):
        super().__init__()
        self.linear = nn.Linear(d_in, d_out)

    def forward(self, x):
        return self.linear(x)


class MLPHead(nn.Module):
    """Linear, LayerNorm, GELU, dropout, Linear [hidden 256, dropout 0.273]."""

    def __init__(self, d_in, d_out, hidden=AlignFitOptions.hidden, dropout=AlignFitOptions.dropout, **unused):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(d_in, hidden), nn.LayerNorm(hidden), nn.GELU(), nn.Dropout(dropout),
                                    nn.Linear(hidden, d_out))

    def forward(self, x):
        return self.layers(x)


class CrossAttentionHead(nn.Module):
    """Three learnable queries (for s, p, o) attend to the input vector as one key/value;
    the three outputs are concatenated, then a linear map.

    With a single key the attention weights are all 1, so each query receives the
    same value projection: as published, the head is a (deeper) linear map of the
    input. It is kept for fidelity to the method.
    """

    def __init__(self, d_in, d_out, hidden=AlignFitOptions.hidden, attention_heads=4, **unused):
        super().__init__()
        self.memory = nn.Linear(d_in, hidden)
        self.queries = nn.Parameter(torch.randn(3, hidden) * 0.02)
        heads = attention_heads if hidden % attention_heads == 0 else 1
        self.attention = nn.MultiheadAttention(hidden, heads, batch_first=True)
        self.output = nn.Linear(3 * hidden, d_out)

    def forward(self, x):
        memory = self.memory(x).unsqueeze(-2)  # (B, 1, hidden): one key/value
        queries = self.queries.unsqueeze(0).expand(x.shape[0], -1, -1)
        attended, _ = self.attention(queries, memory, memory, need_weights=False)
        return self.output(attended.reshape(x.shape[0], -1))


def make_head(kind, d_in, d_out, hidden=AlignFitOptions.hidden, dropout=AlignFitOptions.dropout):
    classes = {"linear": LinearHead, "mlp": MLPHead, "cross-attention": CrossAttentionHead}
    if kind not in classes:
        raise InputError(f"unknown head {kind!r} (known: {', '.join(HEADS)})")
    return classes[kind](d_in, d_out, hidden=hidden, dropout=dropout)
