"""Text ↔ knowledge-graph alignment (METHODS.md §2): frozen text and KG encoders, a trained projection.

    pairs.py     Text–triple pair records: checks, triple keys, verbalisation
    text.py      frozen text encoder with a content-hash cache of text vectors
    compose.py   triple composition φ(s, p, o): concat, hadamard, l1, l2
    heads.py     projection heads: linear, mlp, cross-attention
    train.py     InfoNCE training (in-batch + optional hard negatives), early stopping
    retrieve.py  D2T / T2D ranking over the full candidate pool, Retrieved records
    cv.py        grouped k-fold splits (no group in both train and test)

The steps that chain these are in toolbox.steps.align.
"""
