"""`ontolink train multivector`: fine-tune a late-interaction linker (BELXTR; docs/multivector.md).

Each batch: a few mentions (their span tokens, context through attention),
scored against the documents of their gold entities plus each mention's mined
hard negatives (the best-scoring documents of other entities under the current
model, mined again at the start of every epoch). Scores are XTR's top-k
aligned sum-of-max, logits = score / τ with τ learnable. Name-based KB: the
loss is the marginal likelihood of all the gold entity's names; entity-based
KB: plain cross-entropy over one document per entity. A held-out share of the entities' pairs is linked
against every KB document at the start and after every epoch (R@1 by entity); the best is kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ontolink.indexes.late_interaction import marginal_likelihood_loss, query_expansion_losses, xtr_scores
from ontolink.indexes.token_encoder import (ARTIFACT, MAX_LOG_SCALE, TokenEncoder, multivector_manifest,
                                                    query_key)
from ontolink.core.errors import InputError
from ontolink.core.io import plural, warn
from ontolink.core.manifest import library_versions
from ontolink.core.progress import progress_bar
from ontolink.ontology.kb_documents import KB_KINDS, kb_documents
from ontolink.training.loop import (DEFAULT_HOLDOUT_SHARE, Checkpoints, Holdout, KeepBest, rank_scores, run_epochs,
    held_out_summary, read_pairs)
from ontolink.core.device import training_device
from ontolink.encoders.model_files import DEFAULT_ENCODER
from ontolink.indexes.multivector import MultiVectorNameIndex
from ontolink.core.options import AUTO_DEVICE, DEFAULT_SEED
from ontolink.training.options import MULTIVECTOR_BATCH_SIZE, TrainMultivectorOptions

if TYPE_CHECKING:
    from ontolink.ontology.model import Ontology

EXPANSION_WEIGHT = 0.3  # λ of L = L_MML + λ (L_QE + L_DIS)
MINING_TOKEN_K = 256  # token neighbours per mention token when mining: only the top names are needed
MAX_EXPANSION_MASKS = 8


class TrainingSet:
    """Mentions with their gold entity rows, the KB documents, and per-mention hard negatives."""

    def __init__(self, examples, ontology, kb, tokenizer_pieces):
        self.documents, self.entity_of_document, self.expanded = kb_documents(ontology, kb)
        row_of_id = self.row_of_id = {entity.id: row for row, entity in enumerate(ontology)}
        self.documents_of_entity = {}
        for document, entity_row in enumerate(self.entity_of_document):
            self.documents_of_entity.setdefault(entity_row, []).append(document)
        kept = [example for example in examples if tokenizer_pieces(example["mention"])]
        self.skipped = len(examples) - len(kept)
        self.keys = [query_key(example) for example in kept]
        self.golds = [[row_of_id[gold] for gold in example["golds"]] for example in kept]
        self.negatives = [[] for _ in kept]

    def __len__(self):
        return len(self.keys)

    def positives(self, position):
        return [document for gold in self.golds[position] for document in self.documents_of_entity.get(gold, [])]

    def mine(self, encoder, count, seed):
        """Each mention's ``count`` best documents of entities other than its golds, under ``encoder`` now."""
        encoder.eval()
        index = self._names_index(encoder, seed, "mining hard negatives: encoding names")
        widest = max(len(self.positives(p)) for p in range(len(self)))
        _, rows = index.search(self.keys, count + widest + 8)
        for position, found in enumerate(rows):
            golds = set(self.golds[position])
            self.negatives[position] = [int(row) for row in found
                                        if row >= 0 and self.entity_of_document[row] not in golds][:count]
        encoder.train()

    def _names_index(self, encoder, seed, desc):
        """Every KB document under ``encoder`` now: minutes for HPO on a CPU, so shown as progress."""
        with progress_bar(total=len(self.documents), desc=desc, unit="name") as progress:
            return MultiVectorNameIndex.build(self.documents, encoder, "flat", seed=seed, token_k=MINING_TOKEN_K,
                                              progress=progress)

    def held_out_scores(self, encoder, examples, seed):
        """R@1 and MRR by entity of ``examples`` (pairs or labeled mentions) against every document."""
        encoder.eval()
        index = self._names_index(encoder, seed, "held-out check: encoding names")
        keys = [query_key(example) for example in examples]
        _, rows = index.search(keys, min(len(self.documents), 64))
        ranks = []
        for example, found in zip(examples, rows):
            golds = {self.row_of_id[gold] for gold in example["golds"]}
            entities = list(dict.fromkeys(self.entity_of_document[row] for row in found if row >= 0))
            ranks.append(next((rank for rank, entity in enumerate(entities, 1) if entity in golds), None))
        encoder.train()
        return rank_scores(ranks)


def _expansion_targets(encoder, key, gold_documents, documents):
    """(gold document, missing token mask) for query expansion: the gold name sharing most word
    pieces with the mention, and which of its pieces the mention lacks."""
    best, best_missing = None, None
    for document in gold_documents:
        missing = encoder.missing_pieces(key[1], documents[document])
        if best is None or sum(missing) < sum(best_missing):
            best, best_missing = document, missing
    return best, best_missing


def train_multivector(examples: Sequence[dict[str, Any]], ontology: Ontology, output: str | Path,
                      backbone: str | None = None, kb: str = TrainMultivectorOptions.kb,
                      dimension: int = TrainMultivectorOptions.dimension, temperature: bool = True,
                      top_k: int = TrainMultivectorOptions.top_k,
                      hard_negatives: int = TrainMultivectorOptions.hard_negatives,
                      query_expansion: bool = TrainMultivectorOptions.query_expansion,
                      epochs: int = TrainMultivectorOptions.epochs,
                      learning_rate: float = TrainMultivectorOptions.learning_rate,
                      head_learning_rate: float | None = TrainMultivectorOptions.head_learning_rate,
                      batch_size: int = MULTIVECTOR_BATCH_SIZE,
                      max_length: int = TrainMultivectorOptions.max_length, seed: int = DEFAULT_SEED,
                      device: str = AUTO_DEVICE, resume: bool = TrainMultivectorOptions.resume,
                      force: bool = TrainMultivectorOptions.force,
                      holdout_share: float = DEFAULT_HOLDOUT_SHARE) -> tuple[dict[str, Any], int]:
    """Fine-tune and write the multi-vector model directory; returns (its manifest, pairs skipped)."""
    import torch

    if not examples:
        raise InputError("no pairs to train on")
    if kb not in KB_KINDS:
        raise InputError(f"unknown KB kind {kb!r} (known: {', '.join(KB_KINDS)})")
    backbone = backbone or DEFAULT_ENCODER
    if Path(backbone).exists() and multivector_manifest(backbone):
        raise InputError(f"--model {backbone} is a trained multi-vector model, whose projection and temperature "
                         f"would override --dimension and --no-temperature: start from {Path(backbone) / 'backbone'} "
                         "(its encoder) or --resume a checkpoint")
    device = training_device(device)
    read_count = len(examples)
    holdout = Holdout(list(examples), lambda example: example["golds"], holdout_share, seed, force=force,
                      needed=batch_size)
    examples, held_out = holdout.training, holdout.held_out
    options = {"backbone": backbone, "kb": kb, "dimension": dimension, "temperature": temperature, "top_k": top_k,
               "hard_negatives": hard_negatives, "query_expansion": query_expansion, "learning_rate": learning_rate,
               "head_learning_rate": head_learning_rate, "batch_size": batch_size, "max_length": max_length,
               "seed": seed, "pairs": read_count, "ontology_sha256": ontology.content_hash,
               "holdout_share": holdout_share}
    checkpoints = Checkpoints(output, ARTIFACT, options, force=force)

    def load(path):
        return TokenEncoder(path or backbone, dimension=dimension, temperature=temperature, device=device, seed=seed,
                            max_length=max_length)

    def optimizer_of(encoder):
        # the new projection and the temperature start far from their optimum; the backbone does not
        groups = [{"params": list(encoder.transformer.parameters()), "lr": learning_rate}]
        if encoder.projection is not None:
            groups.append({"params": [encoder.projection.weight], "lr": head_learning_rate})
        if temperature:
            groups.append({"params": [encoder.log_scale], "lr": head_learning_rate, "weight_decay": 0.0})
        return torch.optim.AdamW(groups)

    encoder, optimizer, losses, first_epoch = checkpoints.start(resume, load, optimizer_of)
    data = TrainingSet(examples, ontology, kb, encoder.pieces)
    if data.skipped:
        warn(f"skipped {data.skipped} pairs whose mention has no word piece after tokenisation")
    if not len(data):
        raise InputError("no pair has a mention with word pieces left after tokenisation")
    mined_for: dict[Any, Any] = {}

    def batch_loss(indices, rng):
        with torch.no_grad():  # CLIP: the logit scale is clipped after each step, never beyond 100
            encoder.log_scale.clamp_(max=MAX_LOG_SCALE)
        if hard_negatives and mined_for.get("rng") is not rng:  # a new epoch: mine with the current model
            data.mine(encoder, hard_negatives, seed)
            mined_for["rng"] = rng
        keys = [data.keys[i] for i in indices]
        candidates = list(dict.fromkeys(document for i in indices
                                        for document in data.positives(i) + data.negatives[i]))
        column = {document: position for position, document in enumerate(candidates)}
        positive = torch.zeros((len(indices), len(candidates)), dtype=torch.bool, device=device)
        for row, i in enumerate(indices):
            golds = set(data.golds[i])
            for document in candidates:
                if data.entity_of_document[document] in golds:
                    positive[row, column[document]] = True
        targets = [_expansion_targets(encoder, key, data.positives(i), data.documents)
                   for key, i in zip(keys, indices)] if query_expansion else None
        masks = [min(MAX_EXPANSION_MASKS, sum(missing)) for _, missing in targets] if targets else None
        queries, _ = encoder.mention_tokens(keys, masks)
        document_vectors = encoder.name_tokens([data.documents[d] for d in candidates])
        owner = torch.cat([torch.full((len(v),), position, dtype=torch.long, device=device)
                           for position, v in enumerate(document_vectors)])
        scores = xtr_scores(queries, torch.cat(document_vectors), owner, len(candidates), top_k=top_k)
        loss = marginal_likelihood_loss(scores * encoder.scale(), positive)
        if targets:
            auxiliary = [query_expansion_losses(query[len(query) - count:], document_vectors[column[gold]],
                                                torch.tensor(missing, device=device), encoder.scale())
                         for query, count, (gold, missing) in zip(queries, masks, targets) if count]
            if auxiliary:
                loss = loss + EXPANSION_WEIGHT * sum(qe + dis for qe, dis in auxiliary) / len(auxiliary)
        return loss

    held_out = [example for example in held_out if encoder.pieces(example["mention"])]
    holdout.held_out = held_out
    keep = KeepBest(holdout, checkpoints, lambda: data.held_out_scores(encoder, held_out, seed), encoder.save)
    keep.begin()
    losses, seconds = run_epochs(encoder, optimizer, checkpoints, encoder.save, batch_loss, len(data), batch_size,
                                 epochs, seed, first_epoch, losses, device, after_epoch=keep.after_epoch)
    manifest = {
        "artifact": ARTIFACT,
        "backbone": backbone,
        "ontology": ontology.describe(),
        "kb": {"kind": kb, "documents": len(data.documents), "homonyms_expanded": data.expanded},
        "inputs": {"mention": "left [Ms] mention [Me] right, span tokens kept", "entity": "name"},
        "scoring": "sum-of-max over L2-normalised token vectors (XTR top-k alignment in training)",
        "options": {**options, "epochs": epochs},
        "temperature": round(1 / float(encoder.scale().detach()), 5),
        "losses": losses,
        "seconds": round(seconds, 1),
        "versions": library_versions("torch", "transformers", "faiss-cpu", "faiss-gpu"),
        **keep.result(),
    }
    checkpoints.finish(manifest, best=keep.publish_best())
    return manifest, data.skipped


def train_multivector_files(options: TrainMultivectorOptions) -> dict[str, Any]:
    """`ontolink train multivector`: read the pairs (or labeled mentions), train, write DIRECTORY and print the
    summary line; returns the manifest."""
    loaded = options.ontology.load()
    pairs = read_pairs(options.input_path, loaded, skip_invalid=options.skip_invalid, accept_gold=True)
    manifest, skipped = train_multivector(
        pairs, loaded, options.directory, backbone=options.backbone, kb=options.kb, dimension=options.dimension,
        temperature=not options.no_temperature, top_k=options.top_k, hard_negatives=options.hard_negatives,
        query_expansion=options.query_expansion, epochs=options.epochs, learning_rate=options.learning_rate,
        head_learning_rate=options.head_learning_rate, max_length=options.max_length,
        **({"batch_size": options.batch_size} if options.batch_size is not None else {}), seed=options.seed, device=options.device, resume=options.resume,
        force=options.force, holdout_share=options.holdout_share)
    warn(f"trained multi-vector model on {manifest['held_out']['training_pairs'] - skipped} of {len(pairs)} pairs "
         f"({options.kb}-based KB, {plural(options.epochs, 'epoch')}, final loss {manifest['losses'][-1]:.4f}, "
         f"τ {manifest['temperature']}) into {options.directory} in {manifest['seconds']:.0f} s; "
         f"{held_out_summary(manifest)}")
    return manifest
