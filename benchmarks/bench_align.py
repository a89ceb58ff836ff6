"""Speed of text ↔ KG alignment on the real pairs (../shared/data/align/pairs.jsonl, 4,835 pairs).

Measures, on this machine's CPU, with the step functions the CLI calls:

  encode (cached)  TextEmbedder.encode of every text when the content-hash cache holds them
  encode (cold)    the same into an empty cache (--cold; the all-MiniLM-L6-v2 fp32 forward pass),
                   i.e. what every run of a grid would pay without the cache
  train HEAD       train_alignment_model (text2kg, concat) on all pairs, 15% held out by group
                   for early stopping, the published settings (≤100 epochs, patience 15)
  retrieve         D2T and T2D of every pair over the full pool (4,835 × 4,835), linear head

Measured here (2 shared CPU cores, --threads 1, RDF2Vec 200-d from the example, --cold):
encode cached 0.03 s vs cold 77.7 s (4,835 texts, model load included); train linear 8.3 s (67
epochs, 0.12 s each, 4,108 train pairs), mlp 7.5 s (44 epochs), cross-attention 34.2 s (79 epochs);
retrieve both ways over 4,835 × 4,835 in 1.7 s.

Run from the repository root after building KG embeddings (the example's Makefile does):

    python benchmarks/bench_align.py --kg-embeddings examples/align-bc5cdr-biored/out/emb_rdf2vec [--cold]
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from tabulate import tabulate

from results_file import run_and_record  # beside this script

REPO = Path(__file__).resolve().parent.parent
DEFAULT_PAIRS = REPO / ".." / "shared" / "data" / "align" / "pairs.jsonl"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", default=str(DEFAULT_PAIRS))
    parser.add_argument("--kg-embeddings", required=True)
    parser.add_argument("--heads", default="linear,mlp,cross-attention")
    parser.add_argument("--cold", action="store_true", help="also time encoding into an empty cache")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's choice)")
    arguments = parser.parse_args()

    import torch

    if arguments.threads:
        torch.set_num_threads(arguments.threads)
    from ontolink.kg.alignment.compose import Composer
    from ontolink.kg.embeddings import load_kg_embeddings
    from ontolink.core.io import read_records
    from ontolink.core.records import triple_pair_validator
    from ontolink.kg.alignment.workflows import retrieve
    from ontolink.kg.alignment.cv import grouped_holdout
    from ontolink.kg.alignment.fit_heads import TrainOptions, train_alignment_model
    from ontolink.kg.alignment.pairs import group_of, pair_triple
    from ontolink.kg.alignment.scorers import AlignedScorer
    from ontolink.kg.alignment.text import TextEmbedder
    from ontolink.evaluation.retrieval import retrieval_metrics

    rows = []
    kg = load_kg_embeddings(arguments.kg_embeddings)
    pairs = list(read_records(arguments.pairs, validate=triple_pair_validator(kg), check_duplicate_ids=False))
    texts = [record["text"] for record in pairs]

    started = time.perf_counter()
    embedder = TextEmbedder(device="cpu")
    vectors = embedder.encode(texts)
    rows.append(["encode (cached)", len(texts), f"{time.perf_counter() - started:.2f}",
                 f"{embedder.encoded} encoded"])
    if arguments.cold:
        with tempfile.TemporaryDirectory() as empty:
            previous = os.environ.get("ONTOLINK_CACHE_DIR")
            os.environ["ONTOLINK_CACHE_DIR"] = empty
            try:
                started = time.perf_counter()
                cold = TextEmbedder(device="cpu")
                cold.encode(texts)
                rows.append(["encode (cold, model load included)", len(texts),
                             f"{time.perf_counter() - started:.2f}", f"{cold.encoded} encoded"])
            finally:
                if previous is None:
                    os.environ.pop("ONTOLINK_CACHE_DIR")
                else:
                    os.environ["ONTOLINK_CACHE_DIR"] = previous

    composer = Composer(kg, "concat")
    triple_rows = composer.rows([pair_triple(record) for record in pairs])
    train_index, validation_index = grouped_holdout(np.arange(len(pairs)), [group_of(r) for r in pairs], 0.15, 0)
    models = {}
    for head in arguments.heads.split(","):
        started = time.perf_counter()
        model, curve, summary = train_alignment_model(vectors, triple_rows, composer, "text2kg", head, train_index,
                                                      validation_index, TrainOptions(), seed=0)
        seconds = time.perf_counter() - started
        models[head] = model
        rows.append([f"train {head} (text2kg, concat)", len(train_index), f"{seconds:.2f}",
                     f"{summary['epochs_run']} epochs ({seconds / summary['epochs_run']:.3f} s each), "
                     f"best val MRR {summary['best_validation_mrr']:.3f} at {summary['best_epoch']}"])

    head = next(iter(models))
    scorer = AlignedScorer(models[head], composer, embedder)
    started = time.perf_counter()
    records = list(retrieve(pairs, pairs, scorer, top_k=10))
    seconds = time.perf_counter() - started
    metrics = retrieval_metrics(records)
    rows.append([f"retrieve d2t + t2d ({head})", f"{len(pairs)} × {len(pairs)}", f"{seconds:.2f}",
                 f"in-sample D2T MRR {metrics['d2t']['MRR']:.3f} (trained on 85% of these pairs)"])
    print(f"torch threads: {torch.get_num_threads()}, KG embeddings: {kg.manifest['method']} "
          f"({kg.entity.shape[1]}-d), pairs: {len(pairs)}", file=sys.stderr)
    print(tabulate(rows, headers=["stage", "items", "seconds", "notes"], tablefmt="github"))


if __name__ == "__main__":
    sys.exit(run_and_record(main, __file__))
