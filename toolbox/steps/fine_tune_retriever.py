"""`ontolink train retriever`: fine-tune a bi-encoder on pseudo pairs (METHODS.md §1.5).

Mentions read ``left [Ms] mention [Me] right``, entities ``name [ENT]
definition``; scores are dot products of mean-pooled vectors. Each batch is
scored against a column set C = G ∪ R (G: the batch's unique golds, R: random
other entities, |R| = (b − |G|) + min(max_i |N+(e_i)|, 30)), and the negative
strategy decides which columns count for each row:

    base    P = {e_i}                      negatives C ∖ P
    rm-pcs  P = {e_i}                      negatives C ∖ P ∖ N+(e_i)
    pc-pos  P = {e_i} ∪ (N(e_i) ∩ G)       negatives C ∖ P ∖ N(e_i)   (siblings stay negatives)

L_i = −(1/|P|) Σ_p log(exp s_p / (exp s_p + Σ_neg exp s_c)). Epochs are fixed and
the last one is kept (there is no validation set in the zero-shot setting).
"""

import numpy as np

from toolbox.errors import InputError
from toolbox.encoder_inputs import SPECIAL_TOKENS, entity_input, mention_input, pooled
from toolbox.manifest import library_versions
from toolbox.fine_tuning import Checkpoints, run_epochs

NEGATIVE_STRATEGIES = ("base", "rm-pcs", "pc-pos")
POOLINGS = ("span", "mean")
NEIGHBOUR_CAP = 30
ARTIFACT = "retriever"


def default_batch_size(pair_count):
    """METHODS.md: batch 512, or 128 when there are fewer pairs (under ten batches of 512)."""
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


def build_model(backbone, device, max_length):
    """The backbone with mean pooling and no normalisation, plus the marker tokens."""
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    from toolbox.backends.encoders.sentence import resolve_model_path
    from toolbox.errors import OntolinkError

    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()
    try:
        loaded = SentenceTransformer(resolve_model_path(backbone), device=device)
    except Exception as error:
        raise OntolinkError(f"cannot load backbone {backbone!r}: {type(error).__name__}: {error}") from None
    modules = [module for module in loaded if type(module).__name__ != "Normalize"]
    model = SentenceTransformer(modules=modules, device=device)
    tokenizer = model.tokenizer
    added = tokenizer.add_special_tokens({"additional_special_tokens": SPECIAL_TOKENS})
    if added:
        model[0].auto_model.resize_token_embeddings(len(tokenizer), mean_resizing=False)
    model.max_seq_length = max_length
    return model


def encode_batch(model, texts, device, pooling="span"):
    """Vectors of ``texts`` with gradients: span pooling (see ``toolbox.encoder_inputs.span_pool``) or the model's own."""
    preprocess = getattr(model, "preprocess", None) or model.tokenize
    features = {key: value.to(device) if hasattr(value, "to") else value
                for key, value in preprocess(texts).items()}
    return pooled(model(features), features, model.tokenizer, pooling)


def train_retriever(pairs, ontology, output, backbone=None, negatives="base", epochs=1, learning_rate=2e-5,
                    batch_size=None, max_length=128, seed=0, device="auto", resume=False, pooling="span"):
    """Fine-tune and write the retriever directory; returns its manifest."""
    import torch

    from toolbox.backends.encoders.sentence import DEFAULT_ENCODER
    from toolbox.device import resolve_device

    if not pairs:
        raise InputError("no pairs to train on")
    if negatives not in NEGATIVE_STRATEGIES:
        raise InputError(f"unknown negative strategy {negatives!r} (known: {', '.join(NEGATIVE_STRATEGIES)})")
    backbone = backbone or DEFAULT_ENCODER
    device = resolve_device(device)
    batch_size = batch_size or default_batch_size(len(pairs))
    if pooling not in POOLINGS:
        raise InputError(f"unknown pooling {pooling!r} (known: {', '.join(POOLINGS)})")
    options = {"backbone": backbone, "negatives": negatives, "pooling": pooling, "learning_rate": learning_rate,
               "batch_size": batch_size, "max_length": max_length, "seed": seed, "pairs": len(pairs),
               "ontology_sha256": ontology.content_hash}
    checkpoints = Checkpoints(output, ARTIFACT, options)

    torch.manual_seed(seed)  # the new marker-token embeddings are initialised at random
    model, optimizer, losses, first_epoch = checkpoints.start(
        resume, lambda path: build_model(path or backbone, device, max_length),
        lambda model: torch.optim.AdamW(model.parameters(), lr=learning_rate))
    entity_ids = [entity.id for entity in ontology]

    def batch_loss(indices, rng):
        rows = [pairs[i] for i in indices]
        golds = [row["entity_id"] for row in rows]
        columns = batch_columns(golds, ontology, entity_ids, rng, batch_size)
        positive, negative = (torch.as_tensor(mask, device=device)
                              for mask in column_masks(golds, columns, ontology, negatives))
        mentions = encode_batch(model, [mention_input(row) for row in rows], device, pooling)
        entities = encode_batch(model, [entity_input(ontology[c].name, ontology[c].definition) for c in columns],
                                device, pooling)
        return multi_positive_loss((mentions @ entities.T).float(), positive, negative)

    losses, seconds = run_epochs(model, optimizer, checkpoints, lambda directory: model.save(str(directory)),
                                 batch_loss, len(pairs), batch_size, epochs, seed, first_epoch, losses, device)

    manifest = {
        "artifact": ARTIFACT,
        "backbone": backbone,
        "ontology": ontology.describe(),
        "inputs": {"mention": "left [Ms] mention [Me] right", "entity": "name [ENT] definition",
                   "special_tokens": SPECIAL_TOKENS},
        "scoring": "dot product of mean-pooled vectors" + (" (mention span / entity name)" if pooling == "span" else ""),
        "pooling": pooling,
        "options": {**options, "epochs": epochs},
        "losses": losses,
        "seconds": round(seconds, 1),
        "versions": library_versions("torch", "transformers", "sentence-transformers"),
    }
    checkpoints.finish(manifest)
    return manifest


def pair_validator(ontology, accept_gold=False):
    """A reader's ``validate`` for training pairs: Pair records whose entity_id is (or resolves to) a
    live entity of the ontology.

    With ``accept_gold``, labeled Mention records ({"gold": [ids]}) are taken too. Every record
    gets "golds": the live ids it stands for (its entity_id first).
    """
    from toolbox.records import validate_mention

    def validate(record):
        validate_mention(record)
        entity_id = record.get("entity_id")
        if accept_gold and entity_id is None and record.get("gold"):
            golds = [live for gold in record["gold"] for live in ontology.resolve(gold)]
            if not golds:
                raise ValueError(f"none of the gold ids {record['gold']} is in ontology {ontology.label}")
            record["entity_id"], record["golds"] = golds[0], list(dict.fromkeys(golds))
            return
        if not isinstance(entity_id, str):
            wanted = "'entity_id' (a string) or 'gold' (a list)" if accept_gold else "'entity_id' (a string)"
            raise ValueError(f"missing field {wanted}: is this the output of make-pairs?")
        resolved = ontology.resolve(entity_id)
        if not resolved:
            raise ValueError(f"entity_id {entity_id!r} is not in ontology {ontology.label}")
        record["entity_id"], record["golds"] = resolved[0], resolved[:1]

    return validate
