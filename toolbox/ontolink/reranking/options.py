"""The options of `ontolink train reranker`, with each default given here once (the command line shows them).
Cheap to import."""

from __future__ import annotations

from dataclasses import dataclass

from ontolink.training.options import FitOptions

# pairs per optimiser step; a plain int for the trainers' keyword (FitOptions' batch_size may be None)
BATCH_SIZE = 32


@dataclass(frozen=True)
class TrainRerankerOptions(FitOptions):
    """`ontolink train reranker` (``ontolink.reranking.train.train_reranker_files``)."""

    index_dir: str | None = None  # the retriever's index: its top K are the candidates (required)
    architecture: str = "blink"  # blink or res
    reading: str = "cross"  # res: cross or frozen
    backbone: str | None = None
    top_k: int = 64
    negatives: int = 20  # blink: negatives sampled from the top K
    head_learning_rate: float | None = None  # None: blink --lr, res 1e-3
    select_width: int = 256
    select_layers: int = 2
    select_heads: int = 4
    select_dropout: float = 0.1
    epochs: int = 3
    batch_size: int | None = BATCH_SIZE
    max_length: int = 256
