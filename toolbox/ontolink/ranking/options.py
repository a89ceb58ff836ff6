"""The options of `ontolink train ranker`, with each default given here once (the command line shows them)."""

from __future__ import annotations

from dataclasses import dataclass

from ontolink.training.options import HOLDOUT_SHARE
from ontolink.core.options import AUTO_DEVICE, DEFAULT_SEED
from ontolink.ranking import AUTO_PRIOR, FITTING_DEPTH


@dataclass(frozen=True)
class TrainRankerOptions:
    """`ontolink train ranker` (``ontolink.ranking.train.train_ranker_files``)."""

    directory: str
    index_dir: str
    pairs_path: str | None = None  # make-pairs records over an unlabeled corpus
    synonym_queries: int = 2000  # ontology synonyms searched with themselves held out of the index
    hold_out: float = 0.5  # share of the pairs searched with their matched name held out
    groups: str | None = None  # comma-separated feature groups; None: ontolink.ranking.groups.default_groups()
    prior: str = AUTO_PRIOR
    second_encoder: str = "auto:multilingual-e5-small"
    gate_coverage: float = 0.95
    top_k: int = FITTING_DEPTH
    regularisation: float = 0.01
    holdout_share: float = HOLDOUT_SHARE
    seed: int = DEFAULT_SEED
    device: str = AUTO_DEVICE
    force: bool = False
