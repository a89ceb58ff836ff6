"""The options of the kg commands (embed-kg, align train / retrieve / cv), one typed object per command with each
default given here once: the command line shows these defaults and passes the object to the library function.
Cheap to import: `--help` reads it without loading what the commands run (no torch, no PyKEEN)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ontolink.core.options import AUTO_DEVICE, DEFAULT_SEED, STDIO

if TYPE_CHECKING:
    from ontolink.ontology import OntologySource


@dataclass(frozen=True)
class EmbedKgOptions:
    """Everything `ontolink embed-kg` is asked, each default given here once. A method's settings left None take
    that method's published default (kg/embedders: RDF2Vec's, or the PyKEEN model's)."""

    directory: str
    input_path: str = STDIO  # triples: TSV or Triple / Text-triple pair JSONL
    fmt: str | None = None  # the triple format; None: from the file name (stdin is sniffed)
    skip_invalid: bool = False
    ontology: OntologySource | None = None  # instead of input_path: the ontology's own is_a triples
    method: str = "rdf2vec"  # rdf2vec, or a PyKEEN model by name
    dim: int | None = None
    relation_dim: int | None = None
    epochs: int | None = None
    # RDF2Vec
    depth: int | None = None
    walks: int | None = None
    window: int | None = None
    reverse: bool | None = None
    workers: int | None = None
    # PyKEEN
    batch_size: int | None = None
    lr: float | None = None
    negatives: int | None = None
    margin: float | None = None
    adversarial_temperature: float | None = None
    label_smoothing: float | None = None
    validation_fraction: float | None = None
    eval_every: int | None = None
    patience: int | None = None
    model_kwargs: dict[str, Any] | None = None
    device: str = AUTO_DEVICE
    seed: int = DEFAULT_SEED
    force: bool = False  # replace the directory whatever it holds


@dataclass(frozen=True, kw_only=True)
class AlignEncoderOptions:
    """The frozen text encoder of `ontolink align` (train, retrieve, cv)."""

    encoder: str | None = None  # a sentence-transformers / transformers name or path; None: all-MiniLM-L6-v2
    precision: str = "fp32"  # the text encoder's arithmetic (vectors are cached: exact fp32 costs once)
    max_length: int = 256  # tokens per text
    device: str = AUTO_DEVICE


@dataclass(frozen=True, kw_only=True)
class AlignFitOptions(AlignEncoderOptions):
    """What `align train` and `align cv` both take: the pairs, the KG, the model and the published training
    settings (docs/alignment.md)."""

    input_path: str = STDIO  # Text-triple pair records
    skip_invalid: bool = False
    kg_dir: str | None = None  # KG embeddings from embed-kg (not for --triple-encoding verbalized)
    ontology: OntologySource | None = None  # refuse KG embeddings made from another version of it
    seed: int = DEFAULT_SEED
    force: bool = False  # replace the directory whatever it holds
    triple_encoding: str = "kg"  # kg, verbalized or hybrid (ontolink.kg.alignment.encoding)
    combine: str = "concat"  # hybrid: concat or gate
    compose: str = "concat"  # the triple composition (ontolink.kg.alignment.compose)
    head: str = "linear"  # linear, mlp or cross-attention
    direction: str = "text2kg"  # text2kg, kg2text or both
    hard_negatives: str = "none"
    negatives_per_example: int = 4
    temperature: float = 0.07
    lr: float = 1.05e-3
    weight_decay: float = 1.33e-3
    batch_size: int = 256
    max_epochs: int = 100
    patience: int = 15
    grad_clip: float = 1.0
    hidden: int = 256
    dropout: float = 0.273
    validation_fraction: float = 0.15  # held out by group for early stopping; 0: none
    kg_normalize: bool = True


@dataclass(frozen=True, kw_only=True)
class AlignTrainOptions(AlignFitOptions):
    """Everything `ontolink align train` is asked, each default given here once."""

    directory: str


@dataclass(frozen=True, kw_only=True)
class AlignCvOptions(AlignFitOptions):
    """Everything `ontolink align cv` is asked, each default given here once."""

    directory: str
    baseline: str | None = None  # verbalized: the frozen-encoder baseline on the same folds, no training
    folds: int = 5
    pool: str = "full"  # full: every pair is a candidate; fold: the test fold's only
    top_k: int = 10  # candidates written per query in the fold files


@dataclass(frozen=True, kw_only=True)
class AlignRetrieveOptions(AlignEncoderOptions):
    """Everything `ontolink align retrieve` is asked, each default given here once."""

    model_dir: str | None = None  # a model from align train; or baseline
    baseline: str | None = None  # verbalized: the frozen text encoder alone
    kg_dir: str | None = None
    input_path: str = STDIO
    skip_invalid: bool = False
    candidates_path: str | None = None  # the candidate pool; None: the input pairs themselves
    output_path: str = STDIO
    retrieval: str = "both"  # d2t, t2d or both
    top_k: int = 10
    ontology: OntologySource | None = None
