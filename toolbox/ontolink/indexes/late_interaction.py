"""Late-interaction scores and losses (docs/multivector.md).

f(Q, D) = (1/n) Σ_i max_j Q_i·D_j over the n mention tokens. During training
(XTR), a token pair counts only if D_j is among the top-k of Q_i's
similarities over every candidate token of the mini-batch; pairs outside it
score 0.
"""

import numpy as np


def xtr_scores(query_tokens, document_tokens, document_of_token, document_count, top_k=None):
    """(queries, documents) scores in torch; ``document_tokens`` stacks all candidates' tokens."""
    import torch

    rows = []
    for query in query_tokens:
        similarity = (query @ document_tokens.T).float()  # fp16 autocast would blur near-equal names
        if top_k and top_k < similarity.shape[1]:
            threshold = similarity.topk(top_k, dim=1).values[:, -1:]
            similarity = similarity * (similarity >= threshold)
        best = torch.full((similarity.shape[0], document_count), float("-inf"), device=similarity.device,
                          dtype=similarity.dtype)
        best = best.scatter_reduce(1, document_of_token.expand_as(similarity), similarity, "amax")
        rows.append(best.mean(dim=0))
    return torch.stack(rows)


def marginal_likelihood_loss(logits, positive):
    """−log Σ_{positive documents} softmax(logits): MML over all names of the gold entity."""
    import torch

    minus_inf = torch.finfo(logits.dtype).min
    return (torch.logsumexp(logits, dim=1) - torch.logsumexp(logits.masked_fill(~positive, minus_inf), dim=1)).mean()


def query_expansion_losses(mask_vectors, gold_vectors, missing, scale):
    """(L_QE, L_DIS) of one mention: each [MASK] vector should best match one of the gold name's
    tokens missing from the mention (MML over them); the masks should spread over different ones
    (Σ_{i<j} q_i·q_j / |Y|)."""
    import torch

    logits = scale * (mask_vectors @ gold_vectors.T).float()
    minus_inf = torch.finfo(logits.dtype).min
    missing_logits = logits.masked_fill(~missing.unsqueeze(0), minus_inf)
    expansion = (torch.logsumexp(logits, dim=1) - torch.logsumexp(missing_logits, dim=1)).mean()
    pairwise = (mask_vectors @ mask_vectors.T).float()
    upper = torch.triu(torch.ones_like(pairwise, dtype=torch.bool), diagonal=1)
    dispersion = pairwise[upper].sum() / max(1, int(missing.sum()))
    return expansion, dispersion


def sum_of_max(query, tokens, offsets, documents):
    """Exact f(Q, D) of one query (n, d) for ``documents`` (rows into ``offsets``), numpy.

    ``tokens`` holds the documents' token vectors in document order, so each
    document is a contiguous segment; returns float32 scores.
    """
    if len(documents) == 0:
        return np.zeros(0, dtype=np.float32)
    starts, ends = offsets[documents], offsets[documents + 1]
    lengths = ends - starts
    similarity = query @ tokens(_ranges(starts, lengths)).T
    segment_starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    best = np.maximum.reduceat(similarity, segment_starts, axis=1)
    return best.mean(axis=0).astype(np.float32)


def _ranges(starts, lengths):
    """Concatenated aranges [s, s + l) without a Python loop."""
    total = int(lengths.sum())
    segment = np.repeat(np.arange(len(starts)), lengths)
    within = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return starts[segment] + within
