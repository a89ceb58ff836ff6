"""Train a cross-encoder reranker on the retriever's top-K (the trained model: ontolink.reranking.cross_encoder).

Input "[CLS] left [Ms] m [Me] right [SEP] name [ENT] definition [SEP]", score =
w·[CLS] (a one-logit sequence-classification head). Training: for each pseudo
pair take the retriever's top-K; if the pseudo gold is missing it replaces the
last candidate; cross-entropy over the gold and sampled negatives. The pairs of a held-out share of
the entities are reranked at the start (the index's own order: no reranker yet) and after every epoch;
the best epoch is published, and when none beats the index's order the manifest says so ("improved":
false, "kept_epoch": 0) and `link` leaves the candidates in that order.
"""

from __future__ import annotations

import math

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ontolink.reranking.base import ARTIFACT
from ontolink.reranking.cross_encoder import cross_encoder_logits, load_cross_encoder
from ontolink.core.errors import InputError
from ontolink.core.encoder_inputs import entity_input, mention_input
from ontolink.core.manifest import library_versions
from ontolink.training.loop import (DEFAULT_HOLDOUT_SHARE, Checkpoints, Holdout, KeepBest, rank_of, rank_scores,
                                   run_epochs)
from ontolink.core.device import training_device
from ontolink.encoders.model_files import DEFAULT_ENCODER
from ontolink.linking.link import link_mentions
from ontolink.core.options import AUTO_DEVICE, DEFAULT_SEED
from ontolink.reranking.options import BATCH_SIZE, TrainRerankerOptions
from ontolink.reranking.held_out import held_out_candidates

if TYPE_CHECKING:
    from pathlib import Path

    from ontolink.indexes.artifact import LoadedIndex
    from ontolink.ontology.model import Ontology

# A batch of 32 pairs x 21 candidates x 256 tokens needs far more than 24 GB for a backward pass: it runs
# this many sequences at a time, gradients accumulated (the loss is a mean over pairs, so same update).
SEQUENCES_PER_PASS = 64


def training_candidates(retrieved, gold, negatives, rng):
    """Gold first, then ``negatives`` sampled from the other retrieved ids (gold injected if missing)."""
    ids = [candidate["id"] for candidate in retrieved]
    others = [entity_id for entity_id in ids if entity_id != gold]
    if len(others) == len(ids) and others:
        others = others[:-1]  # the gold replaces the last candidate
    chosen = rng.choice(len(others), size=min(negatives, len(others)), replace=False) if others else []
    return [gold] + [others[i] for i in sorted(chosen)]


def head_and_body(model, learning_rate, head_learning_rate):
    """AdamW parameter groups: the new scoring head (outside the pretrained base model) at its own rate."""
    body = list(model.base_model.parameters())
    in_body = {id(parameter) for parameter in body}
    head = [parameter for parameter in model.parameters() if id(parameter) not in in_body]
    return [{"params": body, "lr": learning_rate}, {"params": head, "lr": head_learning_rate or learning_rate}]


def train_reranker(pairs: Sequence[dict[str, Any]], ontology: Ontology, loaded_index: LoadedIndex, output: str | Path,
                   backbone: str | None = None, top_k: int = TrainRerankerOptions.top_k,
                   negatives: int = TrainRerankerOptions.negatives, epochs: int = TrainRerankerOptions.epochs,
                   learning_rate: float = TrainRerankerOptions.learning_rate, head_learning_rate: float | None = None,
                   batch_size: int = BATCH_SIZE, max_length: int = TrainRerankerOptions.max_length,
                   seed: int = DEFAULT_SEED, device: str = AUTO_DEVICE, resume: bool = TrainRerankerOptions.resume,
                   force: bool = TrainRerankerOptions.force,
                   holdout_share: float = DEFAULT_HOLDOUT_SHARE) -> dict[str, Any]:
    """Fine-tune the cross-encoder on the retriever's candidates; returns the manifest (``force``: also on
    pairs too few to learn from, or whose loss stays at chance; the model is then marked not improved)."""
    import torch

    if not pairs:
        raise InputError("no pairs to train on")
    backbone = backbone or DEFAULT_ENCODER
    device = training_device(device)
    holdout = Holdout(pairs, lambda pair: [pair["entity_id"]], holdout_share, seed, force=force)
    pairs, held_out = holdout.training, holdout.held_out
    options = {"backbone": backbone, "top_k": top_k, "negatives": negatives, "learning_rate": learning_rate,
               "head_learning_rate": head_learning_rate or learning_rate, "batch_size": batch_size,
               "max_length": max_length, "seed": seed, "pairs": len(pairs),
               "retriever_index": loaded_index.manifest.get("index"), "ontology_sha256": ontology.content_hash,
               "holdout_share": holdout_share}
    checkpoints = Checkpoints(output, ARTIFACT, options, force=force)
    retrieved = [record["candidates"] for record in link_mentions(pairs, loaded_index, top_k=top_k)]
    held_retrieved = held_out_candidates(held_out, loaded_index, top_k)

    torch.manual_seed(seed)  # the scoring head and marker embeddings start at random
    loaded = {}

    def load_model(path):
        loaded["tokenizer"], model = load_cross_encoder(path or backbone, device)
        return model

    model, optimizer, losses, first_epoch = checkpoints.start(
        resume, load_model, lambda model: torch.optim.AdamW(head_and_body(model, learning_rate, head_learning_rate)))
    tokenizer = loaded["tokenizer"]

    def batch_loss(indices, rng):
        groups = [training_candidates(retrieved[i], pairs[i]["entity_id"], negatives, rng) for i in indices]
        width = min(len(group) for group in groups)  # equal groups: one (rows, width) logit matrix
        mentions, entities = [], []
        for i, group in zip(indices, groups):
            text = mention_input(pairs[i])
            for entity_id in group[:width]:
                mentions.append(text)
                entities.append(entity_input(ontology[entity_id].name, ontology[entity_id].definition))
        logits = cross_encoder_logits(model, tokenizer, mentions, entities, max_length, device).float()
        return torch.nn.functional.cross_entropy(logits.view(len(indices), width),
                                                 torch.zeros(len(indices), dtype=torch.long, device=device))

    def save_model(directory):
        model.save_pretrained(str(directory), safe_serialization=True)
        tokenizer.save_pretrained(str(directory))

    def held_out_scores():
        """R@1 and MRR of the held-out pairs with their top-K rescored by the model as it is now."""
        model.eval()
        ranks: list[float | None] = []
        with torch.inference_mode():
            for pair, candidates in zip(held_out, held_retrieved):
                ids = [candidate["id"] for candidate in candidates]
                if pair["entity_id"] not in ids:
                    ranks.append(None)
                    continue
                entities = [entity_input(ontology[entity_id].name, ontology[entity_id].definition) for entity_id in ids]
                logits = torch.cat([cross_encoder_logits(model, tokenizer, [mention_input(pair)] * len(part), part,
                                                         max_length, device).float().cpu()
                                    for part in (entities[start:start + SEQUENCES_PER_PASS]
                                                 for start in range(0, len(entities), SEQUENCES_PER_PASS))])
                ranks.append(rank_of(logits, ids.index(pair["entity_id"])))
        model.train()
        return rank_scores(ranks)

    index_order = rank_scores([[c["id"] for c in candidates].index(pair["entity_id"]) + 1
                               if pair["entity_id"] in [c["id"] for c in candidates] else None
                               for pair, candidates in zip(held_out, held_retrieved)])
    keep = KeepBest(holdout, checkpoints, held_out_scores, save_model, start_scores=index_order)
    keep.begin()
    losses, seconds = run_epochs(model, optimizer, checkpoints, save_model, batch_loss, len(pairs), batch_size,
                                 epochs, seed, first_epoch, losses, device,
                                 accumulate=max(1, SEQUENCES_PER_PASS // (negatives + 1)), after_epoch=keep.after_epoch)
    holdout.check_chance(losses, math.log(min(negatives + 1, top_k)), checkpoints)

    manifest = {
        "artifact": ARTIFACT,
        "backbone": backbone,
        "ontology": ontology.describe(),
        "inputs": "left [Ms] mention [Me] right [SEP] name [ENT] definition",
        "options": {**options, "epochs": epochs},
        "losses": losses,
        "seconds": round(seconds, 1),
        "versions": library_versions("torch", "transformers"),
        **keep.result(),
    }
    checkpoints.finish(manifest, best=keep.publish_best())
    return manifest

