"""Training an alignment model (ontolink.kg.alignment.model): InfoNCE over in-batch negatives
(+ optional hard negatives), AdamW, early stopping. With direction ``both`` each batch trains one of
the two heads, drawn at random.

The loss of a batch is the symmetric InfoNCE (documents → triples and triples →
documents, temperature τ). Hard negatives corrupt each true triple in KG space
(``predicate``, ``object``, ``subject``, both ``entities``, or ``all``: one of each of
those four) and are extra candidates of the document → triple half, in text2kg
batches only. Early stopping watches the validation MRR (mean of D2T and T2D
over the validation pairs); the best epoch's weights are kept.
"""

import time
from dataclasses import asdict, dataclass

import numpy as np

from ontolink.kg.alignment.encoding import HARD_NEGATIVES, as_encoding
from ontolink.kg.alignment.model import alignment_model
from ontolink.core.errors import InputError
from ontolink.kg.options import AlignFitOptions
from ontolink.evaluation.rank_metrics import diagonal_ranks, mean_reciprocal_rank
from ontolink.core.options import DEFAULT_SEED


@dataclass
class TrainOptions:
    """The published training settings (docs/alignment.md)."""

    temperature: float = AlignFitOptions.temperature
    lr: float = AlignFitOptions.lr
    weight_decay: float = AlignFitOptions.weight_decay
    batch_size: int = AlignFitOptions.batch_size
    max_epochs: int = AlignFitOptions.max_epochs
    patience: int = AlignFitOptions.patience
    grad_clip: float = AlignFitOptions.grad_clip
    hard_negatives: str = AlignFitOptions.hard_negatives
    negatives_per_example: int = AlignFitOptions.negatives_per_example
    hidden: int = AlignFitOptions.hidden
    dropout: float = AlignFitOptions.dropout

    def check(self):
        if self.hard_negatives not in HARD_NEGATIVES:
            raise InputError(f"unknown hard negatives {self.hard_negatives!r} (known: {', '.join(HARD_NEGATIVES)})")
        if self.temperature <= 0:
            raise InputError("the temperature must be positive")
        return self


def info_nce(queries, candidates, temperature, extra=None):
    """Symmetric InfoNCE of matched rows; ``extra`` (B, k, D) are more candidates for the query→candidate half."""
    import torch

    logits = queries @ candidates.T / temperature
    target = torch.arange(len(queries), device=queries.device)
    forward = logits
    if extra is not None:
        forward = torch.cat([logits, torch.einsum("bd,bkd->bk", queries, extra) / temperature], dim=1)
    cross_entropy = torch.nn.functional.cross_entropy
    return (cross_entropy(forward, target) + cross_entropy(logits.T, target)) / 2


def validation_mrr(model, documents, triple_vectors):
    """Mean of D2T and T2D MRR among the validation pairs themselves."""
    import torch

    model.eval()
    with torch.no_grad():
        scores = []
        for retrieval in ("d2t", "t2d"):
            doc, tri = model.spaces(retrieval, documents, triple_vectors)
            similarity = (doc @ tri.T).cpu().numpy()
            if retrieval == "t2d":
                similarity = similarity.T
            scores.append(mean_reciprocal_rank(diagonal_ranks(similarity)))
    return float(np.mean(scores)), scores


def train_alignment_model(text_vectors, triple_rows, composer, direction=AlignFitOptions.direction,
                          head=AlignFitOptions.head, train_index=None, validation_index=None, options=None,
                          seed=DEFAULT_SEED, device="cpu", progress=None, combine=AlignFitOptions.combine):
    """Train heads on matched rows of ``text_vectors`` (n, d_t) and ``triple_rows`` (the rows of a triple
    encoding, encoding.py; a bare Composer means ``kg``); returns (model, curve, summary).
    ``train_index`` / ``validation_index`` select rows (default: all / none). ``combine`` joins a hybrid
    triple's two blocks. Hard negatives of an encoding that reads text must be prepared first
    (``prepare_negatives``)."""
    import torch

    encoding = as_encoding(composer)

    options = (options or TrainOptions()).check()
    torch.manual_seed(seed)
    generator = torch.Generator(device=device).manual_seed(seed)
    rng = np.random.default_rng(seed)
    n = len(text_vectors)
    train_index = np.arange(n) if train_index is None else np.asarray(train_index)
    if len(train_index) < 2:
        raise InputError(f"{len(train_index)} training pair(s): InfoNCE needs at least 2")
    texts = torch.as_tensor(np.asarray(text_vectors, dtype=np.float32), device=device)
    rows = torch.as_tensor(np.asarray(triple_rows, dtype=np.int64), device=device)
    model = alignment_model(direction, head, texts.shape[1], encoding.dimension, hidden=options.hidden,
                            dropout=options.dropout, text_block=encoding.text_dim,
                            combine=combine if encoding.kind == "hybrid" else None).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=options.lr, weight_decay=options.weight_decay)
    heads = list(model.heads)
    validation = None
    if validation_index is not None and len(validation_index) > 1:
        validation_index = np.asarray(validation_index)
        with torch.no_grad():
            validation = (texts[validation_index], encoding(rows[validation_index]))
    curve = []
    best = {"mrr": -1.0, "epoch": 0, "state": None}
    stale = 0
    started = time.perf_counter()
    for epoch in range(1, options.max_epochs + 1):
        model.train()
        order = train_index[rng.permutation(len(train_index))]
        total, batches = 0.0, 0
        for start in range(0, len(order), options.batch_size):
            batch = order[start:start + options.batch_size]
            if len(batch) < 2:
                continue
            head_name = heads[int(rng.integers(len(heads)))] if len(heads) > 1 else heads[0]
            batch_rows = rows[batch]
            documents, triples = model.project(head_name, texts[batch], encoding(batch_rows))
            extra = None
            if options.hard_negatives != "none" and head_name == "text2kg":
                extra = model.triple(encoding.negatives(batch, batch_rows, options.hard_negatives,
                                                        options.negatives_per_example, generator))
            if head_name == "text2kg":
                loss = info_nce(documents, triples, options.temperature, extra)
            else:
                loss = info_nce(triples, documents, options.temperature)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if options.grad_clip:
                torch.nn.utils.clip_grad_norm_(model.parameters(), options.grad_clip)
            optimizer.step()
            total += float(loss.detach())
            batches += 1
        entry = {"epoch": epoch, "loss": total / max(batches, 1), "seconds": round(time.perf_counter() - started, 3)}
        if validation is not None:
            mrr, (d2t, t2d) = validation_mrr(model, *validation)
            entry.update(val_mrr=mrr, val_d2t_mrr=d2t, val_t2d_mrr=t2d)
            if mrr > best["mrr"]:
                best = {"mrr": mrr, "epoch": epoch,
                        "state": {key: value.detach().clone() for key, value in model.state_dict().items()}}
                stale = 0
            else:
                stale += 1
        curve.append(entry)
        if progress is not None:
            progress.update(1)
        if validation is not None and stale >= options.patience:
            break
    if best["state"] is not None:
        model.load_state_dict(best["state"])
    model.eval()
    summary = {"epochs_run": len(curve), "best_epoch": best["epoch"] if validation is not None else len(curve),
               "best_validation_mrr": best["mrr"] if validation is not None else None,
               "train_pairs": int(len(train_index)),
               "validation_pairs": int(len(validation_index)) if validation is not None else 0,
               "seconds": round(time.perf_counter() - started, 3), "options": asdict(options)}
    return model, curve, summary
