"""`ontolink train retriever`: fine-tune a bi-encoder on pseudo pairs (docs/methods.md: the retriever).

Mentions read ``left [Ms] mention [Me] right``, entities ``name [ENT]
definition``; scores are dot products of mean-pooled vectors. Each batch is
scored against a column set C = G ∪ R (G: the batch's unique golds, R: random
other entities, |R| = (b − |G|) + min(max_i |N+(e_i)|, 30)), and the negative
strategy decides which columns count for each row:

    base    P = {e_i}                      negatives C ∖ P
    rm-pcs  P = {e_i}                      negatives C ∖ P ∖ N+(e_i)
    pc-pos  P = {e_i} ∪ (N(e_i) ∩ G)       negatives C ∖ P ∖ N(e_i)   (siblings stay negatives)

L_i = −(1/|P|) Σ_p log(exp s_p / (exp s_p + Σ_neg exp s_c)).

Input mode ``bare`` starts where the frozen index is: mention string against name
strings, the backbone's own mean pooling and normalisation (step 0 *is* the frozen
encoder), scores cosine × BARE_SCALE; pairs are de-duplicated by (normalised
mention, entity) since context is not read, and a column entity reads one of its
names at random (for a gold, one that is not the mention's own string, which the
frozen index already finds). A ``holdout_share`` of the pairs' entities is held out
with all their pairs (seeded; ontolink.training.loop.holdout_split) and scored at step 0
and after every epoch: R@1 (ties: MRR) against every name of the ontology except those
equal to the query when its gold has another name (the pairs are exact matches, so the
identical name would be a free hit). The best epoch is kept; when none beats step 0, the
starting model (in bare mode, the default: the frozen encoder) is, and the manifest says
"improved": false.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ontolink.core.errors import InputError, OntolinkError
from ontolink.core.encoder_inputs import INPUT_MODES, SPECIAL_TOKENS, entity_input, mention_input, pooled
from ontolink.core.manifest import library_versions
from ontolink.core.progress import progress_bar
from ontolink.ontology import normalize
from ontolink.evaluation.rank_metrics import mean_reciprocal_rank, rank_by_score, recall_at
from ontolink.training.loop import (DEFAULT_HOLDOUT_SHARE, Checkpoints, Holdout, KeepBest, key, run_epochs,
    held_out_summary, read_pairs)
from ontolink.core.device import training_device
from ontolink.core.io import plural, warn
from ontolink.encoders.model_files import resolve_model_path, DEFAULT_ENCODER
from ontolink.core.options import AUTO_DEVICE, DEFAULT_SEED
from ontolink.training.options import TrainRetrieverOptions

if TYPE_CHECKING:
    from pathlib import Path

    from ontolink.ontology.model import Ontology

NEGATIVE_STRATEGIES = ("base", "rm-pcs", "pc-pos")
POOLINGS = ("span", "mean")
NEIGHBOUR_CAP = 30
ARTIFACT = "retriever"
# Cosines lie in [−1, 1]: the softmax over them needs a temperature (sentence-transformers'
# MultipleNegativesRankingLoss default).
BARE_SCALE = 20.0
VALIDATION_BATCH = 256


def unique_bare_pairs(pairs):
    """One pair per (normalised mention, entity): all that bare mode reads of a pair."""
    seen = {}
    for pair in pairs:
        seen.setdefault((normalize(pair["mention"]), pair["entity_id"]), pair)
    return list(seen.values())


def other_names(ontology, entity_id, mention):
    """The entity's names other than the (normalised) mention string."""
    key = normalize(mention)
    return [name for name in ontology.names(ontology[entity_id]) if normalize(name) != key]


def default_batch_size(pair_count):
    """The published setting: batch 512, or 128 when there are fewer pairs (under ten batches of 512)."""
    return 512 if pair_count >= 10 * 512 else 128


def batch_columns(golds, ontology, entity_ids, rng, batch_size, cap=NEIGHBOUR_CAP):
    """C = G ∪ R for one batch: the unique golds, then random other entities."""
    unique = list(dict.fromkeys(golds))
    largest = max(len(ontology.neighbours(gold)) for gold in unique)
    wanted = min(len(entity_ids) - len(unique), (batch_size - len(unique)) + min(largest, cap))
    taken = set(unique)
    randoms = []
    while len(randoms) < wanted:
        for row in rng.integers(0, len(entity_ids), size=2 * (wanted - len(randoms)) + 8):
            candidate = entity_ids[row]
            if candidate not in taken:
                taken.add(candidate)
                randoms.append(candidate)
                if len(randoms) == wanted:
                    break
    return unique + randoms


def column_masks(golds, columns, ontology, strategy):
    """(positive, negative) boolean masks of shape (rows, columns)."""
    position = {entity_id: column for column, entity_id in enumerate(columns)}
    in_batch = set(golds)
    positive = np.zeros((len(golds), len(columns)), dtype=bool)
    negative = np.ones((len(golds), len(columns)), dtype=bool)
    for row, gold in enumerate(golds):
        positives = {gold}
        excluded = set()
        if strategy == "rm-pcs":
            excluded = set(ontology.neighbours(gold, with_siblings=True))
        elif strategy == "pc-pos":
            near = set(ontology.neighbours(gold, with_siblings=False))
            positives |= near & in_batch
            excluded = near
        elif strategy != "base":
            raise InputError(f"unknown negative strategy {strategy!r} (known: {', '.join(NEGATIVE_STRATEGIES)})")
        for entity_id in positives:
            positive[row, position[entity_id]] = True
        for entity_id in positives | excluded:
            if entity_id in position:
                negative[row, position[entity_id]] = False
    return positive, negative


def multi_positive_loss(scores, positive, negative):
    """Mean over rows of −(1/|P|) Σ_p log(exp s_p / (exp s_p + Σ_neg exp s_c))."""
    import torch

    minus_inf = torch.finfo(scores.dtype).min
    negative_lse = torch.logsumexp(scores.masked_fill(~negative, minus_inf), dim=1, keepdim=True)
    negative_lse = torch.where(negative.any(dim=1, keepdim=True), negative_lse,
                               torch.full_like(negative_lse, float("-inf")))
    log_probability = scores - torch.logaddexp(scores, negative_lse)
    per_row = -(log_probability * positive).sum(dim=1) / positive.sum(dim=1)
    return per_row.mean()


def build_model(backbone, device, max_length, input_mode=TrainRetrieverOptions.input_mode):
    """Context mode: the backbone with mean pooling and no normalisation, plus the marker tokens. Bare
    mode: the backbone as it is (the frozen encoder)."""
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()
    try:
        loaded = SentenceTransformer(resolve_model_path(backbone), device=device)
    except Exception as error:
        raise OntolinkError(f"cannot load backbone {backbone!r}: {type(error).__name__}: {error}") from None
    if input_mode == "bare":
        model = loaded
    else:
        model = SentenceTransformer(modules=[module for module in loaded if type(module).__name__ != "Normalize"],
                                    device=device)
        added = model.tokenizer.add_special_tokens({"additional_special_tokens": SPECIAL_TOKENS})
        if added:
            model[0].auto_model.resize_token_embeddings(len(model.tokenizer), mean_resizing=False)
    model.max_seq_length = max_length
    checkpoint_activations(model[0].auto_model)
    return model


def checkpoint_activations(transformer):
    """Keep only each layer's input for the backward pass and recompute the rest (same gradients, dropout
    replayed): a batch holds b mentions and ~b + 30 entities of up to max_length tokens each, whose
    activations (attention maps included) took ~7 GB at b = 128 on MiniLM-L6; this keeps one layer's."""
    enable = getattr(transformer, "activation_checkpointing_enable", None)  # transformers >= 5
    if enable is not None:
        enable({"use_reentrant": False})
    else:
        transformer.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})


def encode_batch(model, texts, device, pooling=TrainRetrieverOptions.pooling):
    """Vectors of ``texts`` with gradients: span pooling (see ``ontolink.core.encoder_inputs.span_pool``) or the model's own."""
    preprocess = getattr(model, "preprocess", None) or model.tokenize
    features = {key: value.to(device) if hasattr(value, "to") else value
                for key, value in preprocess(texts).items()}
    return pooled(model(features), features, model.tokenizer, pooling)


def encode_texts(model, texts, device, pooling, desc=None):
    """Vectors of ``texts`` without gradients, in batches of similar length (for validation); ``desc``: shown
    as progress (every name of an ontology takes minutes on a CPU)."""
    import torch

    order = sorted(range(len(texts)), key=lambda row: len(texts[row]))
    vectors = [None] * len(texts)
    model.eval()
    with torch.inference_mode(), progress_bar(total=len(texts), desc=desc, unit="text") as progress:
        for start in range(0, len(order), VALIDATION_BATCH):
            rows = order[start:start + VALIDATION_BATCH]
            for row, vector in zip(rows, encode_batch(model, [texts[row] for row in rows], device, pooling).float()):
                vectors[row] = vector
            progress.update(len(rows))
    return torch.stack(vectors)


def validation_scores(model, held_out, ontology, input_mode, device, pooling):
    """{"R@1", "MRR", "queries"} of the held-out pairs against every name of the ontology but the query's
    own string when its gold has another name (the index a trained model would build: one vector per name, an
    entity's best name counts)."""
    import torch

    bare = input_mode == "bare"
    names, texts, owners = [], [], []
    for row, entity in enumerate(ontology):
        for name in ontology.names(entity):
            names.append(name)
            texts.append(name if bare else entity_input(name, entity.definition))
            owners.append(row)
    row_of = {entity.id: row for row, entity in enumerate(ontology)}
    name_vectors = encode_texts(model, texts, device, pooling, desc="held-out check: encoding names")
    queries = encode_texts(model, [pair["mention"].strip() if bare else mention_input(pair) for pair in held_out],
                           device, pooling, desc="held-out check: encoding queries")
    name_keys = [normalize(name) for name in names]
    owner_index = torch.as_tensor(owners, device=name_vectors.device)
    ranks = []
    for pair, query in zip(held_out, queries):
        scores = name_vectors @ query
        own = normalize(pair["mention"])
        if any(other_names(ontology, gold, pair["mention"]) for gold in pair["golds"]):
            scores[[column for column, name_key in enumerate(name_keys) if name_key == own]] = float("-inf")
        best = torch.full((len(row_of),), float("-inf"), device=scores.device).scatter_reduce(
            0, owner_index, scores, "amax")
        gold = max(float(best[row_of[entity_id]]) for entity_id in pair["golds"])
        ranks.append(rank_by_score(best, gold))
    return {"R@1": round(recall_at(ranks, 1), 4), "MRR": round(mean_reciprocal_rank(ranks), 4), "queries": len(ranks)}


validation_key = key  # higher R@1, ties broken by MRR (ontolink.training.loop.key)


def column_texts(columns, golds, rows, ontology, input_mode, rng):
    """What each column entity reads: ``name [ENT] definition``, or in bare mode one of its names at
    random (for a gold, not the mention's own string when it has another)."""
    if input_mode != "bare":
        return [entity_input(ontology[c].name, ontology[c].definition) for c in columns]
    mention_of = {}
    for gold, row in zip(golds, rows):
        mention_of.setdefault(gold, row["mention"])
    texts = []
    for column in columns:
        names = other_names(ontology, column, mention_of[column]) if column in mention_of else []
        names = names or ontology.names(ontology[column])
        texts.append(names[int(rng.integers(len(names)))])
    return texts


def train_retriever(pairs: Sequence[dict[str, Any]], ontology: Ontology, output: str | Path,
                    backbone: str | None = None, negatives: str = TrainRetrieverOptions.negatives,
                    epochs: int = TrainRetrieverOptions.epochs,
                    learning_rate: float = TrainRetrieverOptions.learning_rate, batch_size: int | None = None,
                    max_length: int = TrainRetrieverOptions.max_length, seed: int = DEFAULT_SEED,
                    device: str = AUTO_DEVICE, resume: bool = TrainRetrieverOptions.resume,
                    pooling: str = TrainRetrieverOptions.pooling, input_mode: str = TrainRetrieverOptions.input_mode,
                    holdout_share: float = DEFAULT_HOLDOUT_SHARE,
                    force: bool = TrainRetrieverOptions.force) -> dict[str, Any]:
    """Fine-tune and write the retriever directory; returns its manifest (with "kept_epoch": the epoch
    published, 0 when no epoch beat the starting model on the held-out pairs, and "improved").
    ``force`` also trains on pairs too few to learn from (the model is then marked not improved)."""
    import torch

    if not pairs:
        raise InputError("no pairs to train on")
    if negatives not in NEGATIVE_STRATEGIES:
        raise InputError(f"unknown negative strategy {negatives!r} (known: {', '.join(NEGATIVE_STRATEGIES)})")
    if input_mode not in INPUT_MODES:
        raise InputError(f"unknown input mode {input_mode!r} (known: {', '.join(INPUT_MODES)})")
    backbone = backbone or DEFAULT_ENCODER
    device = training_device(device)
    bare = input_mode == "bare"
    pooling = "mean" if bare else pooling  # bare mode reads no markers: the backbone's own pooling
    if pooling not in POOLINGS:
        raise InputError(f"unknown pooling {pooling!r} (known: {', '.join(POOLINGS)})")
    read_pairs = len(pairs)
    pairs = unique_bare_pairs(pairs) if bare else list(pairs)
    holdout = Holdout(pairs, lambda pair: [pair["entity_id"]], holdout_share, seed, force=force)
    pairs, held_out = holdout.training, holdout.held_out
    batch_size = batch_size or default_batch_size(len(pairs))
    options = {"backbone": backbone, "negatives": negatives, "pooling": pooling, "learning_rate": learning_rate,
               "batch_size": batch_size, "max_length": max_length, "seed": seed, "pairs": read_pairs,
               "ontology_sha256": ontology.content_hash}
    options.update(input_mode=input_mode, holdout_share=holdout_share)
    checkpoints = Checkpoints(output, ARTIFACT, options, force=force)

    torch.manual_seed(seed)  # the new marker-token embeddings are initialised at random
    model, optimizer, losses, first_epoch = checkpoints.start(
        resume, lambda path: build_model(path or backbone, device, max_length, input_mode),
        lambda model: torch.optim.AdamW(model.parameters(), lr=learning_rate))
    entity_ids = [entity.id for entity in ontology]

    def save_model(directory):
        model.save(str(directory))

    keep = KeepBest(holdout, checkpoints, lambda: validation_scores(model, held_out, ontology, input_mode, device,
                                                                    pooling), save_model)
    keep.begin()

    def batch_loss(indices, rng):
        rows = [pairs[i] for i in indices]
        golds = [row["entity_id"] for row in rows]
        columns = batch_columns(golds, ontology, entity_ids, rng, batch_size)
        positive, negative = (torch.as_tensor(mask, device=device)
                              for mask in column_masks(golds, columns, ontology, negatives))
        mentions = encode_batch(model, [row["mention"].strip() if bare else mention_input(row) for row in rows],
                                device, pooling)
        entities = encode_batch(model, column_texts(columns, golds, rows, ontology, input_mode, rng), device, pooling)
        return multi_positive_loss((mentions @ entities.T).float() * (BARE_SCALE if bare else 1.0), positive, negative)

    losses, seconds = run_epochs(model, optimizer, checkpoints, save_model, batch_loss, len(pairs), batch_size,
                                 epochs, seed, first_epoch, losses, device,
                                 after_epoch=keep.after_epoch)
    result = keep.result()

    manifest = {
        "artifact": ARTIFACT,
        "backbone": backbone,
        "ontology": ontology.describe(),
        "input_mode": input_mode,
        "inputs": {"mention": "mention", "entity": "name"} if bare else {
            "mention": "left [Ms] mention [Me] right", "entity": "name [ENT] definition",
            "special_tokens": SPECIAL_TOKENS},
        "scoring": "cosine of the backbone's own (mean-pooled, normalised) vectors" if bare else
                   "dot product of mean-pooled vectors" + (" (mention span / entity name)" if pooling == "span" else ""),
        "pooling": pooling,
        # how `index`/`link` read it on a CPU: a bare model is the encoder's own kind, and ONNX int8 cost HPO's
        # tuned retriever 0.001 R@1 on GSC+ against PyTorch fp32 (0.753 / 0.754) for 5.6x faster `link` and a
        # third less `index` (benchmarks/bench_default_path.py); marked inputs and span pooling need PyTorch
        "read_as": {"runtime": "onnx", "precision": "int8"} if bare else {"runtime": "torch", "precision": "fp32"},
        "options": {**options, "epochs": epochs},
        "training_pairs": len(pairs),
        "losses": losses,
        "seconds": round(seconds, 1),
        "versions": library_versions("torch", "transformers", "sentence-transformers"),
    }
    manifest.update(result)
    if "kept_epoch" in result:
        manifest["kept"] = ("the starting model (the frozen encoder)" if bare and not result["kept_epoch"] else
                            "the starting model" if not result["kept_epoch"] else f"epoch {result['kept_epoch']}")
    checkpoints.finish(manifest, best=keep.publish_best())
    return manifest


def train_retriever_files(options: TrainRetrieverOptions) -> dict[str, Any]:
    """`ontolink train retriever`: read the pairs, train, write DIRECTORY and print the summary line; returns the
    manifest."""
    loaded = options.ontology.load()
    pairs = read_pairs(options.input_path, loaded, skip_invalid=options.skip_invalid)
    manifest = train_retriever(pairs, loaded, options.directory, backbone=options.backbone,
                               negatives=options.negatives, epochs=options.epochs,
                               learning_rate=options.learning_rate, batch_size=options.batch_size,
                               max_length=options.max_length, seed=options.seed, device=options.device,
                               resume=options.resume, pooling=options.pooling, input_mode=options.input_mode,
                               holdout_share=options.holdout_share, force=options.force)
    start = "the frozen encoder" if options.input_mode == "bare" else "the start"
    warn(f"trained retriever on {manifest['training_pairs']} of {len(pairs)} pairs ({options.input_mode}, "
         f"{options.negatives}, {plural(options.epochs, 'epoch')}, final loss {manifest['losses'][-1]:.4f}) into "
         f"{options.directory} in {manifest['seconds']:.0f} s; {held_out_summary(manifest, start)}")
    return manifest
