"""The options of the `ontolink train` commands, one typed object per trainer with each default given here once:
the command line shows these defaults and passes the object to the trainer's library function. Cheap to import."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ontolink.core.options import AUTO_DEVICE, DEFAULT_SEED, STDIO
from ontolink.indexes.options import TOKEN_DIMENSION, TOKEN_MAX_LENGTH
from ontolink.recognition.ngrams import MAX_WORDS

if TYPE_CHECKING:
    from ontolink.ontology import OntologySource

# train multivector's pairs per step; a plain int for train_multivector's keyword (FitOptions' may be None)
MULTIVECTOR_BATCH_SIZE = 4
HOLDOUT_SHARE = 0.2  # the pairs' entities held out to score the start and every epoch


@dataclass(frozen=True)
class FitOptions:
    """What every fine-tuning trainer takes: the model's DIRECTORY, the ontology, the pairs and the epoch loop."""

    directory: str
    ontology: OntologySource
    input_path: str = STDIO
    skip_invalid: bool = False
    holdout_share: float = HOLDOUT_SHARE
    epochs: int = 1
    learning_rate: float = 2e-5
    batch_size: int | None = None  # None: the trainer's own
    max_length: int = 128  # word pieces per input
    seed: int = DEFAULT_SEED
    device: str = AUTO_DEVICE
    resume: bool = False  # continue from DIRECTORY.checkpoint
    force: bool = False  # replace DIRECTORY whatever it holds


@dataclass(frozen=True)
class TrainRetrieverOptions(FitOptions):
    """`ontolink train retriever` (``ontolink.training.retriever.train_retriever_files``)."""

    backbone: str | None = None  # None: all-MiniLM-L6-v2 from its PyPI package
    negatives: str = "base"  # base, rm-pcs or pc-pos
    pooling: str = "span"  # span or mean
    input_mode: str = "bare"  # bare or context


@dataclass(frozen=True)
class TrainMultivectorOptions(FitOptions):
    """`ontolink train multivector` (``ontolink.training.multivector.train_multivector_files``)."""

    epochs: int = 5
    learning_rate: float = 3e-6
    batch_size: int | None = MULTIVECTOR_BATCH_SIZE
    backbone: str | None = None
    max_length: int = TOKEN_MAX_LENGTH
    dimension: int = TOKEN_DIMENSION  # token vector size after the projection
    kb: str = "name"  # name or entity
    top_k: int = 2048  # XTR's top-k alignment while training
    no_temperature: bool = False
    hard_negatives: int = 32
    query_expansion: bool = False
    head_learning_rate: float = 1e-3


@dataclass(frozen=True)
class TrainSpanScorerOptions:
    """`ontolink train span-scorer` (``ontolink.recognition.train_span_scorer.train_span_scorer_files``)."""

    directory: str
    ontology: OntologySource  # its names are the positives
    input_path: str = STDIO  # unlabeled documents: their word n-grams are the negatives
    skip_invalid: bool = False
    source_format: str | None = None  # None: from the file name; stdin: text
    text_field: str = "text"  # jsonl documents: the field holding the text
    roots: str | None = None  # comma-separated ids: only their subtrees' names are positives
    max_words: int = MAX_WORDS  # the longest n-gram
    negatives_per_name: float = 3.0
    regularisation: float = 1.0  # inverse L2 penalty (C) of the logistic regression
    seed: int = DEFAULT_SEED
    force: bool = False
