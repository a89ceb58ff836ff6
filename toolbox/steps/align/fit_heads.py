"""Training an alignment model: InfoNCE over in-batch negatives (+ optional hard negatives), AdamW, early stopping.

Directions (METHODS.md §2):

    text2kg  a head g maps document vectors into the triple space; score cos(g(x), φ(t))
    kg2text  a head h maps composed triples into the text space;    score cos(x, h(φ(t)))
    both     one head per direction; each batch trains one of them, drawn at random.
             Retrieval then ranks D2T with g and T2D with h.

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

from toolbox.errors import InputError

DIRECTIONS = ("text2kg", "kg2text", "both")
HARD_NEGATIVES = ("none", "predicate", "object", "subject", "entities", "all")
COMBINES = ("concat", "gate")  # how a hybrid triple's verbalised and KG blocks are joined


@dataclass
class TrainOptions:
    """METHODS.md §2's published settings."""

    temperature: float = 0.07
    lr: float = 1.05e-3
    weight_decay: float = 1.33e-3
    batch_size: int = 256
    max_epochs: int = 100
    patience: int = 15
    grad_clip: float = 1.0
    hard_negatives: str = "none"
    negatives_per_example: int = 4
    hidden: int = 256
    dropout: float = 0.273

    def check(self):
        if self.hard_negatives not in HARD_NEGATIVES:
            raise InputError(f"unknown hard negatives {self.hard_negatives!r} (known: {', '.join(HARD_NEGATIVES)})")
        if self.temperature <= 0:
            raise InputError("the temperature must be positive")
        return self


def _module():
    import torch
    from torch import nn

    from toolbox.steps.align.heads import make_head

    class AlignmentModel(nn.Module):
        """The trained heads; ``spaces`` gives the (document, triple) vectors a direction ranks with."""

        def __init__(self, direction, head, text_dim, triple_dim, hidden=256, dropout=0.273, text_block=0,
                     combine=None):
            super().__init__()
            if direction not in DIRECTIONS:
                raise InputError(f"unknown direction {direction!r} (known: {', '.join(DIRECTIONS)})")
            if combine not in (None,) + COMBINES:
                raise InputError(f"unknown combination {combine!r} (known: {', '.join(COMBINES)})")
            self.direction, self.head_kind = direction, head
            self.text_block, self.combine = text_block, combine
            self.heads = nn.ModuleDict()
            if direction in ("text2kg", "both"):
                self.heads["text2kg"] = make_head(head, text_dim, triple_dim, hidden=hidden, dropout=dropout)
            if direction in ("kg2text", "both"):
                self.heads["kg2text"] = make_head(head, triple_dim, text_dim, hidden=hidden, dropout=dropout)
            if text_block:
                # residual heads: a zero last layer, so training starts at the frozen-encoder baseline
                for module in self.heads.values():
                    last = [layer for layer in module.modules() if isinstance(layer, nn.Linear)][-1]
                    nn.init.zeros_(last.weight)
                    nn.init.zeros_(last.bias)
            if combine == "gate":
                # one weight per triple, from both blocks; zero-initialised: an even mix (= concat) at the start
                self.gate = nn.Linear(triple_dim, 1)
                nn.init.zeros_(self.gate.weight)
                nn.init.zeros_(self.gate.bias)

        def triple(self, raw):
            """The triple vector the heads and the ranking read: raw, or the hybrid's two blocks combined."""
            if self.combine is None:
                return raw
            verbalized, kg = raw[..., :self.text_block], raw[..., self.text_block:]
            if self.combine == "gate":
                share = torch.sigmoid(self.gate(raw))
                verbalized, kg = (1 - share) * verbalized, share * kg
            return torch.nn.functional.normalize(torch.cat([verbalized, kg], dim=-1), dim=-1)

        def project(self, head, documents, raw):
            """(documents, triples) in the space ``head`` compares them in. With a verbalised block (in the
            documents' own space) the heads are residual: text2kg adds the document to that block, kg2text
            adds the verbalised triple to its output."""
            normalize = torch.nn.functional.normalize
            triples = self.triple(raw)
            if head == "text2kg":
                projected = self.heads["text2kg"](documents)
                if self.text_block:
                    projected = projected + torch.nn.functional.pad(documents,
                                                                    (0, projected.shape[-1] - self.text_block))
                return normalize(projected, dim=-1), triples
            projected = self.heads["kg2text"](triples)
            if self.text_block:
                projected = projected + raw[..., :self.text_block]
            return normalize(documents, dim=-1), normalize(projected, dim=-1)

        def head_for(self, retrieval):
            """d2t ranks with the text→KG head when there is one, t2d with the KG→text head."""
            preferred = "text2kg" if retrieval == "d2t" else "kg2text"
            return preferred if preferred in self.heads else next(iter(self.heads))

        def spaces(self, retrieval, documents, triples):
            return self.project(self.head_for(retrieval), documents, triples)

    return AlignmentModel


def alignment_model(direction, head, text_dim, triple_dim, hidden=256, dropout=0.273, text_block=0, combine=None):
    return _module()(direction, head, text_dim, triple_dim, hidden=hidden, dropout=dropout, text_block=text_block,
                     combine=combine)


def corrupt(rows, mode, count, n_entities, n_relations, generator):
    """(B, count, 3) corrupted copies of (B, 3) triple rows; a replaced id never equals the original."""
    import torch

    batch = rows.shape[0]
    negatives = rows.unsqueeze(1).repeat(1, count, 1)
    modes = (["predicate", "object", "subject", "entities"] * count)[:count] if mode == "all" else [mode] * count
    for slot, kind in enumerate(modes):
        columns = {"predicate": [(1, n_relations)], "object": [(2, n_entities)], "subject": [(0, n_entities)],
                   "entities": [(0, n_entities), (2, n_entities)]}[kind]
        for column, size in columns:
            if size < 2:
                continue
            # a uniform draw among the size - 1 other ids
            shift = torch.randint(1, size, (batch,), generator=generator, device=rows.device)
            negatives[:, slot, column] = (rows[:, column] + shift) % size
    return negatives


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


def ranks_of_matched(similarity):
    """1-based rank of the diagonal in each row of a square similarity matrix (1 + strictly higher)."""
    diagonal = np.diagonal(similarity)[:, None]
    return 1 + np.sum(similarity > diagonal, axis=1)


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
            scores.append(float(np.mean(1.0 / ranks_of_matched(similarity))))
    return float(np.mean(scores)), scores


def train_alignment_model(text_vectors, triple_rows, composer, direction="text2kg", head="linear",
                          train_index=None, validation_index=None, options=None, seed=0, device="cpu",
                          progress=None, combine="concat"):
    """Train heads on matched rows of ``text_vectors`` (n, d_t) and ``triple_rows`` (the rows of a triple
    encoding, encoding.py; a bare Composer means ``kg``); returns (model, curve, summary).
    ``train_index`` / ``validation_index`` select rows (default: all / none). ``combine`` joins a hybrid
    triple's two blocks. Hard negatives of an encoding that reads text must be prepared first
    (``prepare_negatives``)."""
    import torch

    from toolbox.steps.align.encoding import as_encoding

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
