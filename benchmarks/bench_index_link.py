"""Index build time, link throughput and Recall@1/@64 of ontolink against a naive baseline.

Measures, in one run on this machine's CPU, for every name and synonym of an
ontology (default: the embedded ``hpo``, about 40,500 names):

  naive        sentence-transformers all-MiniLM-L6-v2, ``encode(names, batch_size=32)``
               into a faiss.IndexFlatIP; linking encodes and searches one mention
               at a time (k=256 names), then keeps each entity's best name
  dense fp32   ``build_index(method="dense", precision="fp32")``, ``load_index``, ``link_mentions``
  dense int8   the same with the default CPU precision (int8 dynamic quantisation)
  tfidf        character 3-gram TF-IDF

Build time includes loading the model and writing the index. Link throughput
is mentions / seconds of linking; ``load_index`` (model load) is timed apart.
Speed-ups are against the naive baseline of the same run; Recall@K is scored
on labeled mentions (default: ../shared/data/gscplus/mentions.jsonl, GSC+).

Run from the repository root (takes a few minutes, the naive build about one):

    python benchmarks/bench_index_link.py [--mentions PATH] [--ontology hpo] [--skip-naive]
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import faiss
import numpy as np
import torch
from sentence_transformers import SentenceTransformer
from tabulate import tabulate
from transformers.utils import logging as transformers_logging

from toolbox.artifacts.index import load_index
from toolbox.backends.encoders.sentence import DEFAULT_ENCODER, resolve_model_path
from toolbox.io import read_records
from toolbox.ontology import load_ontology
from toolbox.steps.eval import file_metrics, score_file
from toolbox.steps.index import build_index, index_rows
from toolbox.steps.link import link_mentions

REPO = Path(__file__).resolve().parent.parent
DEFAULT_MENTIONS = REPO / ".." / "shared" / "data" / "gscplus" / "mentions.jsonl"
TOP_K = 64


def naive(ontology, mentions):
    """The baseline: plain sentence-transformers, flat FAISS, one mention at a time."""
    entity_ids, entity_names, texts, owners = index_rows(ontology)
    started = time.perf_counter()
    model = SentenceTransformer(resolve_model_path(DEFAULT_ENCODER), device="cpu")
    vectors = model.encode(texts, batch_size=32, normalize_embeddings=True)
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(np.asarray(vectors, dtype=np.float32))
    build = time.perf_counter() - started

    linked = []
    started = time.perf_counter()
    for record in mentions:
        query = model.encode([record["mention"].strip()], normalize_embeddings=True)
        scores, rows = index.search(np.asarray(query, dtype=np.float32), TOP_K * 4)
        candidates, seen = [], set()
        for score, row in zip(scores[0], rows[0]):
            if row >= 0 and owners[row] not in seen:
                seen.add(owners[row])
                candidates.append({"id": entity_ids[owners[row]], "name": entity_names[owners[row]],
                                   "score": float(score)})
                if len(candidates) == TOP_K:
                    break
        linked.append({**record, "candidates": candidates})
    return build, 0.0, time.perf_counter() - started, linked


def ontolink(ontology, mentions, directory, **options):
    started = time.perf_counter()
    build_index(ontology, directory, device="cpu", **options)
    build = time.perf_counter() - started
    started = time.perf_counter()
    loaded = load_index(directory, ontology=ontology, device="cpu")
    load = time.perf_counter() - started
    started = time.perf_counter()
    linked = list(link_mentions(mentions, loaded, top_k=TOP_K))
    return build, load, time.perf_counter() - started, linked


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mentions", type=Path, default=DEFAULT_MENTIONS,
                        help="labeled Mention JSONL (default: %(default)s)")
    parser.add_argument("--ontology", default="hpo", help="ontology file or embedded name (default: hpo)")
    parser.add_argument("--skip-naive", action="store_true", help="skip the (slow) naive baseline")
    args = parser.parse_args()
    transformers_logging.disable_progress_bar()  # as ontolink does; keeps the output to the table
    if not args.mentions.exists():
        print(f"no mentions file at {args.mentions.resolve()}; pass --mentions PATH "
              "(a labeled Mention JSONL, e.g. GSC+ from the shared data folder). Nothing measured.")
        return 0

    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # non-Linux
        cores = os.cpu_count()
    print(f"machine: {cores} usable CPU cores, torch {torch.__version__} with {torch.get_num_threads()} "
          f"threads, faiss {faiss.__version__} with {faiss.omp_get_max_threads()} threads")
    ontology = load_ontology(args.ontology)
    mentions = list(read_records(args.mentions))
    names = len(index_rows(ontology)[2])
    unique = len({record["mention"].strip() for record in mentions})
    print(f"ontology {args.ontology}: {len(ontology)} entities, {names} names; "
          f"mentions {args.mentions.name}: {len(mentions)} ({unique} distinct texts)\n")

    runs = {} if args.skip_naive else {"naive sentence-transformers": lambda directory: naive(ontology, mentions)}
    runs["ontolink dense fp32"] = lambda d: ontolink(ontology, mentions, d, method="dense", precision="fp32")
    runs["ontolink dense int8 (default)"] = lambda d: ontolink(ontology, mentions, d, method="dense")
    runs["ontolink tfidf"] = lambda d: ontolink(ontology, mentions, d, method="tfidf")

    rows, reference = [], None
    with tempfile.TemporaryDirectory(prefix="bench-index-link-") as temporary:
        for number, (label, run) in enumerate(runs.items()):
            print(f"running {label} ...", file=sys.stderr, flush=True)
            build, load, link, linked = run(Path(temporary, f"index{number}"))
            ranks, categories = score_file(linked, ontology, ks=(1, TOP_K))
            recall = file_metrics(ranks, categories, ks=(1, TOP_K))["all"]
            rate = len(mentions) / link
            if reference is None and label.startswith("naive"):
                reference = (build, rate)
            rows.append([label, build, f"{reference[0] / build:.1f}x" if reference else "-",
                         load if label.startswith("ontolink dense") else None, rate,
                         f"{rate / reference[1]:.1f}x" if reference else "-",
                         recall["R@1"], recall[f"R@{TOP_K}"]])
    print(tabulate(rows, headers=["method", "build (s)", "build speed-up", "load (s)", "link (mentions/s)",
                                  "link speed-up", "R@1", f"R@{TOP_K}"],
                   floatfmt=("", ".1f", "", ".2f", ".0f", "", ".3f", ".3f"), missingval="-"))
    if reference is None:
        print("\n(--skip-naive: no speed-ups; the issue's naive reference was about 160 s build, 114 mentions/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
