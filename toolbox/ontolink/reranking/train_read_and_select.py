"""Train a Read-and-Select (ReS) reranker on the retriever's top-K (the trained model:
ontolink.reranking.read_and_select).

For each pseudo pair the retriever's top-K candidates are one group; when the pseudo gold is missing,
the last candidate is dropped and the gold put in at a rank drawn with the seed (with the retriever
score of that rank), so neither its rank nor its score gives it away. Each batch presents a group's
candidates in a seeded random order, their ranks carried with them. The loss is cross-entropy over
the K selecting-stage scores. ``frozen`` reading encodes every mention and candidate once with the
frozen bi-encoder, so an epoch only runs the selecting transformer; ``cross`` trains the reading
cross-encoder and the selecting transformer end to end. As for the BLINK-style reranker, a held-out share
of the entities' pairs is reranked at the start (the index's own order) and after every epoch, and the
best epoch is kept ("improved": false and "kept_epoch": 0 when none beats the index's order).
"""

from __future__ import annotations

import math

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ontolink.reranking.base import ARTIFACT, candidate_texts
from ontolink.reranking.cross_encoder import load_cross_encoder
from ontolink.reranking.read_and_select import (
    READER_FOLDER,
    SELECTOR_FILE,
    VERSION as RES_VERSION,
    FrozenReading,
    cross_reading_vectors,
    frozen_features,
    load_selector,
    new_selector,
    save_selector,
    with_retriever_scores,
)
from ontolink.core.errors import InputError
from ontolink.core.manifest import library_versions
from ontolink.training.loop import (DEFAULT_HOLDOUT_SHARE, Checkpoints, Holdout, KeepBest, rank_of, rank_scores,
                                   run_epochs)
from ontolink.core.device import training_device
from ontolink.core.progress import progress_bar
from ontolink.encoders import load_encoder
from ontolink.encoders.model_files import DEFAULT_ENCODER
from ontolink.linking.link import link_mentions
from ontolink.core.options import AUTO_DEVICE, DEFAULT_SEED
from ontolink.reranking.options import BATCH_SIZE, TrainRerankerOptions
from ontolink.reranking.held_out import held_out_candidates

if TYPE_CHECKING:
    from ontolink.indexes.artifact import LoadedIndex
    from ontolink.ontology.model import Ontology

SEQUENCES_PER_PASS = 64  # cross reading: (mention, candidate) sequences per forward pass, gradients accumulated
SELECTOR_LEARNING_RATE = 1e-3  # the selecting transformer starts at random


def candidate_group(retrieved, gold, ontology, rank):
    """(the K candidates in rank order, the gold's rank): a missing pseudo gold goes in at ``rank`` with the
    retriever's score at that rank, and the last candidate drops out."""
    ids = [candidate["id"] for candidate in retrieved]
    if gold in ids:
        return list(retrieved), ids.index(gold)
    injected = {"id": gold, "name": ontology[gold].name, "score": retrieved[rank]["score"]}
    return list(retrieved[:rank]) + [injected] + list(retrieved[rank:-1]), rank


def frozen_encoder(loaded_index, backbone, device):
    """The bi-encoder read frozen: --model when given, else the index's own encoder, else the default."""
    encoder = getattr(loaded_index.name_index, "encoder", None)
    if backbone or encoder is None:
        encoder = load_encoder(backbone, device=device)
    return encoder


def train_res_reranker(pairs: Sequence[dict[str, Any]], ontology: Ontology, loaded_index: LoadedIndex,
                       output: str | Path, reading: str = TrainRerankerOptions.reading, backbone: str | None = None,
                       top_k: int = TrainRerankerOptions.top_k, epochs: int = TrainRerankerOptions.epochs,
                       learning_rate: float = TrainRerankerOptions.learning_rate,
                       head_learning_rate: float | None = None, batch_size: int = BATCH_SIZE,
                       max_length: int = TrainRerankerOptions.max_length,
                       width: int = TrainRerankerOptions.select_width, layers: int = TrainRerankerOptions.select_layers,
                       heads: int = TrainRerankerOptions.select_heads,
                       dropout: float = TrainRerankerOptions.select_dropout, seed: int = DEFAULT_SEED,
                       device: str = AUTO_DEVICE, resume: bool = TrainRerankerOptions.resume,
                       force: bool = TrainRerankerOptions.force,
                       holdout_share: float = DEFAULT_HOLDOUT_SHARE) -> dict[str, Any]:
    """Train ReS on the retriever's candidates; returns the manifest (``force``: as for train_reranker)."""
    import torch

    if not pairs:
        raise InputError("no pairs to train on")
    if width % heads:
        raise InputError(f"--select-width {width} is not a multiple of --select-heads {heads}")
    device = training_device(device)
    holdout = Holdout(pairs, lambda pair: [pair["entity_id"]], holdout_share, seed, force=force)
    pairs, held_out = holdout.training, holdout.held_out
    head_learning_rate = SELECTOR_LEARNING_RATE if head_learning_rate is None else head_learning_rate
    definition_of = lambda entity_id: ontology[entity_id].definition  # noqa: E731
    retrieved = [record["candidates"] for record in link_mentions(pairs, loaded_index, top_k=top_k)]
    held_retrieved = held_out_candidates(held_out, loaded_index, top_k)
    width_k = min(len(candidates) for candidates in retrieved + held_retrieved)
    held_groups = [candidates[:width_k] for candidates in held_retrieved]
    held_golds = [[c["id"] for c in group].index(pair["entity_id"]) if pair["entity_id"] in [c["id"] for c in group]
                  else None for pair, group in zip(held_out, held_groups)]  # equal groups: one (B, K) score matrix per batch
    if width_k < 2:
        raise InputError("the index returned fewer than 2 candidates for a pair: nothing to select from")
    injection_ranks = np.random.default_rng(seed).integers(0, width_k, len(pairs))
    groups = [candidate_group(candidates[:width_k], pair["entity_id"], ontology, int(rank))
              for candidates, pair, rank in zip(retrieved, pairs, injection_ranks)]
    labels = torch.tensor([gold for _, gold in groups], device=device)
    retriever_scores = torch.tensor([[c["score"] for c in group] for group, _ in groups], dtype=torch.float32,
                                    device=device)

    if reading == "frozen":
        reader = FrozenReading(frozen_encoder(loaded_index, backbone, device))
        described = reader.encoder.describe()
        with progress_bar(desc="read (frozen bi-encoder)", unit="text") as progress:
            mention_vectors, name_vectors = reader.vectors(
                [{**pair, "candidates": group} for pair, (group, _) in zip(pairs, groups)]
                + [{**pair, "candidates": group} for pair, group in zip(held_out, held_groups)], definition_of,
                progress)
        mention_vectors = torch.from_numpy(mention_vectors).to(device)
        name_vectors = torch.from_numpy(np.stack(name_vectors)).to(device)
        input_dimension, reading_manifest = reader.dimension + 1, {"kind": "frozen", "encoder": described}
    else:
        backbone = backbone or DEFAULT_ENCODER
        input_dimension, reading_manifest = None, {"kind": "cross", "backbone": backbone}
    shape = {"width": width, "layers": layers, "heads": heads, "dropout": dropout, "ranks": width_k}
    options = {"architecture": "res", "reading": reading_manifest, "selecting": dict(shape), "top_k": top_k,
               "learning_rate": learning_rate, "head_learning_rate": head_learning_rate, "batch_size": batch_size,
               "max_length": max_length, "seed": seed, "pairs": len(pairs),
               "retriever_index": loaded_index.manifest.get("index"), "ontology_sha256": ontology.content_hash,
               "holdout_share": holdout_share}
    checkpoints = Checkpoints(output, ARTIFACT, options, force=force)

    torch.manual_seed(seed)  # the selecting transformer (and a new cross-encoder head) start at random
    loaded = {}

    def load_model(path):
        from pathlib import Path

        modules = {}
        if reading == "cross":
            loaded["tokenizer"], modules["reader"] = load_cross_encoder(
                str(Path(path) / READER_FOLDER) if path else backbone, device)
            shape["input"] = modules["reader"].config.hidden_size + 2
        else:
            shape["input"] = input_dimension
        modules["selector"] = load_selector(Path(path), shape, device) if path else new_selector(shape).to(device)
        return torch.nn.ModuleDict(modules)

    def parameter_groups(model):
        selecting = [{"params": list(model["selector"].parameters()), "lr": head_learning_rate}]
        return selecting + ([{"params": list(model["reader"].parameters()), "lr": learning_rate}]
                            if "reader" in model else [])

    model, optimizer, losses, first_epoch = checkpoints.start(
        resume, load_model, lambda model: torch.optim.AdamW(parameter_groups(model)))

    def batch_loss(indices, rng):
        indices = torch.as_tensor(np.asarray(indices), device=device)
        if reading == "frozen":
            features = frozen_features(mention_vectors[indices], name_vectors[indices])
        else:
            texts, entities = candidate_texts([{**pairs[i], "candidates": groups[i][0]} for i in indices.tolist()],
                                              definition_of)
            features = cross_reading_vectors(model["reader"], loaded["tokenizer"], texts, entities, max_length,
                                             device).float().view(len(indices), width_k, -1)
        # a seeded random presentation order per group, each candidate keeping its rank
        order = torch.as_tensor(rng.permuted(np.tile(np.arange(width_k), (len(indices), 1)), axis=1),
                                device=device)
        presented = with_retriever_scores(features, retriever_scores[indices]).gather(
            1, order.unsqueeze(-1).expand(-1, -1, features.shape[-1] + 1))
        scores = model["selector"](presented, ranks=order)
        return torch.nn.functional.cross_entropy(scores.float(), order.argsort(dim=1).gather(
            1, labels[indices].unsqueeze(1)).squeeze(1))

    def save_model(directory):
        save_selector(model["selector"], directory)
        if "reader" in model:
            model["reader"].save_pretrained(str(directory / READER_FOLDER), safe_serialization=True)
            loaded["tokenizer"].save_pretrained(str(directory / READER_FOLDER))

    def held_out_scores():
        """R@1 and MRR of the held-out pairs, each group selected in its retrieval order as `link` does."""
        model.eval()
        ranks: list[float | None] = []
        with torch.inference_mode():
            for position, (pair, group, gold) in enumerate(zip(held_out, held_groups, held_golds)):
                if gold is None:
                    ranks.append(None)
                    continue
                if reading == "frozen":
                    row = len(pairs) + position
                    features = frozen_features(mention_vectors[row:row + 1], name_vectors[row:row + 1])
                else:
                    texts, entities = candidate_texts([{**pair, "candidates": group}], definition_of)
                    features = cross_reading_vectors(model["reader"], loaded["tokenizer"], texts, entities,
                                                     max_length, device).float()[None]
                presented = with_retriever_scores(features, torch.tensor([[c["score"] for c in group]],
                                                                         dtype=torch.float32, device=device))
                ranks.append(rank_of(model["selector"](presented)[0].float().cpu(), gold))
        model.train()
        return rank_scores(ranks)

    keep = KeepBest(holdout, checkpoints, held_out_scores, save_model,
                    start_scores=rank_scores([None if gold is None else gold + 1 for gold in held_golds]))
    keep.begin()
    losses, seconds = run_epochs(model, optimizer, checkpoints, save_model, batch_loss, len(pairs), batch_size,
                                 epochs, seed, first_epoch, losses, device,
                                 accumulate=max(1, SEQUENCES_PER_PASS // width_k) if reading == "cross" else None,
                                 after_epoch=keep.after_epoch)
    holdout.check_chance(losses, math.log(width_k), checkpoints)
    manifest = {
        "artifact": ARTIFACT,
        "architecture": "res",
        "version": RES_VERSION,
        "reading": reading_manifest,
        "selecting": shape,
        "ontology": ontology.describe(),
        "inputs": ("bi-encoder vectors [m, c, m*c, m.c] + retriever score" if reading == "frozen" else
                   "left [Ms] mention [Me] right [SEP] name [ENT] definition -> mention span mean + logit "
                   "+ retriever score") + "; retrieval rank embedding",
        "options": {**options, "epochs": epochs, "candidates": width_k},
        "losses": losses,
        "seconds": round(seconds, 1),
        "files": [SELECTOR_FILE] + ([f"{READER_FOLDER}/config.json"] if reading == "cross" else []),
        "versions": library_versions("torch", "transformers"),
        **keep.result(),
    }
    checkpoints.finish(manifest, best=keep.publish_best())
    return manifest
