"""`ontolink train reranker` as one library function: the pairs, the retriever's index, and the trainer of the
architecture asked (train_cross_encoder for blink, train_read_and_select for res)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ontolink.core.errors import UsageError
from ontolink.reranking.options import TrainRerankerOptions
from ontolink.core.io import plural, warn


def train_reranker_files(options: TrainRerankerOptions) -> dict[str, Any]:
    """Read the pairs, train a reranker of ``options.architecture`` over ``options.index_dir``'s top K, write
    DIRECTORY and print the summary line; returns the manifest."""
    from ontolink.indexes.artifact import load_index  # late: loads numpy
    from ontolink.training.loop import held_out_summary, read_pairs  # late: loads numpy

    if not options.index_dir:
        raise UsageError("a reranker is trained over an index's candidates: give --index")
    loaded = options.ontology.load()
    index = load_index(options.index_dir, ontology=loaded, device=options.device)
    pairs = read_pairs(options.input_path, loaded, skip_invalid=options.skip_invalid)
    shared: dict[str, Any] = {"backbone": options.backbone, "top_k": options.top_k, "epochs": options.epochs,
              "learning_rate": options.learning_rate, "head_learning_rate": options.head_learning_rate,
              "batch_size": options.batch_size, "max_length": options.max_length, "seed": options.seed,
              "device": options.device, "resume": options.resume, "force": options.force,
              "holdout_share": options.holdout_share}
    if options.architecture not in TRAINERS:
        raise UsageError(f"no trainer for reranker architecture {options.architecture!r} (there are trainers for "
                         f"{', '.join(sorted(TRAINERS))})")
    manifest, kind = TRAINERS[options.architecture](pairs, loaded, index, options, shared)
    warn(f"trained {kind} on {manifest['held_out']['training_pairs']} of {len(pairs)} pairs ({plural(options.epochs, 'epoch')}, "
         f"final loss {manifest['losses'][-1]:.4f}) into {options.directory} in {manifest['seconds']:.0f} s; "
         f"{held_out_summary(manifest, 'the index order')}")
    return manifest


def _train_blink(pairs: Any, loaded: Any, index: Any, options: TrainRerankerOptions,
                 shared: dict[str, Any]) -> tuple[dict[str, Any], str]:
    from ontolink.reranking.train_cross_encoder import train_reranker  # late: loads numpy

    manifest = train_reranker(pairs, loaded, index, options.directory, negatives=options.negatives, **shared)
    return manifest, "reranker"


def _train_res(pairs: Any, loaded: Any, index: Any, options: TrainRerankerOptions,
               shared: dict[str, Any]) -> tuple[dict[str, Any], str]:
    from ontolink.reranking.train_read_and_select import train_res_reranker  # late: loads numpy

    manifest = train_res_reranker(pairs, loaded, index, options.directory, reading=options.reading,
                                  width=options.select_width, layers=options.select_layers,
                                  heads=options.select_heads, dropout=options.select_dropout, **shared)
    return manifest, f"ReS reranker ({options.reading} reading, {manifest['options']['candidates']} candidates)"


# the trainer of each architecture of ontolink.reranking.base.RERANKERS (`train reranker --architecture`, whose
# choices are that registry's names): a new architecture adds its model there and its trainer here
TRAINERS: dict[str, Callable[..., tuple[dict[str, Any], str]]] = {"blink": _train_blink, "res": _train_res}
