"""The options of `ontolink index`, one typed object with each default given here once: the command line shows
these defaults and passes the object to ``ontolink.indexes.run.index_directory``. Cheap to import: `--help`
reads it without loading an encoder or FAISS."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ontolink.core.options import AUTO_DEVICE, DEFAULT_SEED

if TYPE_CHECKING:
    from ontolink.ontology import OntologySource

# a multivector model's token encoder (indexes.token_encoder): its token vectors' size after the projection and the
# word pieces it reads per text (`train multivector --dimension / --max-length`)
TOKEN_DIMENSION = 128
TOKEN_MAX_LENGTH = 128


@dataclass(frozen=True)
class IndexOptions:
    """Everything `ontolink index` is asked."""

    directory: str
    ontology: OntologySource
    alias_files: Sequence[str] = ()  # Aliases records whose aliases become names of kind "alias"
    method: str = "dense"  # a registered index method (ontolink.indexes.NAME_INDEXES)
    model: str | None = None  # None: all-MiniLM-L6-v2 from its PyPI package
    multivector: bool = False  # the deprecated spelling of method="multivector"
    token_k: int = 2048  # multivector: name tokens retrieved per mention token before sum-of-max rescoring
    device: str = AUTO_DEVICE
    precision: str = "auto"  # int8 on CPU (ONNX Runtime), fp16 on CUDA
    runtime: str = "auto"  # a registered encoder runtime; auto: ONNX on CPU, PyTorch otherwise
    no_cache: bool = False  # encode every name again instead of reusing the embedding cache
    faiss_type: str = "flat"  # flat, sq8, hnsw or ivfpq
    hnsw_m: int = 32
    ef_search: int = 128
    nlist: int | None = None  # IVF-PQ lists; None: 4·sqrt(names)
    pq_m: int | None = None  # IVF-PQ sub-quantisers
    nprobe: int = 16
    min_df: int = 1  # tfidf: drop character n-grams found in fewer names
    ranker: str = "auto"  # the ranker `link` applies by default: auto (measured), packaged or none
    seed: int = DEFAULT_SEED
    start_engine: Callable[..., Any] | None = None  # cli.options.engine_options; None: this process
    force: bool = False  # replace DIRECTORY whatever it holds
