"""Single- vs multi-vector linking, side by side in one run: quality, index size, link throughput.

On GSC+ (../shared/data/gscplus/mentions.jsonl) against the embedded hpo, every
multi-vector model trained on the same pseudo pairs: P_Syn by default (the
mentions, stripped of their labels, whose text is a curated synonym; labels are
used only to score), or any Pair file given with --pairs. Settings:

  single-vector      frozen all-MiniLM-L6-v2 dense index (the project's default)
  single-vector tuned  `train retriever` (base negatives) on the same pairs and epochs
  mv untrained       the same MiniLM's word-piece vectors, no training, no projection
  mv name τ          name-based KB, learned temperature, flat token index
  mv name τ sq8      the same model, 8-bit scalar-quantised token index (a byte per dimension)
  mv name τ ivfpq    the same model, IVF-PQ token index (--pq-m bytes per token, --nprobe)
  mv name no-τ       name-based KB, τ fixed at 1
  mv entity τ        entity-based KB (one document per entity), learned temperature

Reports R@1, R@64, MRR, R@1 on HO/LO/NO mentions, index size on disk and
link throughput, with ratios against the single-vector index of the same run.
Trained models and indexes stay in --workdir, so a rerun only links again.

    python benchmarks/bench_multivector.py [--epochs 1] [--pairs PAIRS] [--workdir DIR] [--settings a,b]
"""

import argparse
import json
import sys
import time
from pathlib import Path

from tabulate import tabulate

from ontolink.indexes.artifact import load_index
from ontolink.core.io import read_records
from ontolink.ontology import load_ontology
from ontolink.core.records import pair_validator
from ontolink.evaluation.evaluate import file_metrics, score_file
from ontolink.indexes.build import build_index, build_multivector_index
from ontolink.linking.link import link_mentions
from ontolink.aliases.pairs import build_matcher, make_pairs
from ontolink.training.multivector import train_multivector
from ontolink.training.retriever import train_retriever

from setup_work import working_folder  # beside this script
from results_file import run_and_record  # beside this script

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data"
TOP_K = 64

MODELS = {"name-tau": dict(kb="name", temperature=True), "name-notau": dict(kb="name", temperature=False),
          "entity-tau": dict(kb="entity", temperature=True)}
SETTINGS = {  # label: (model, FAISS type); model None = single-vector, "" = untrained multi-vector
    "single-vector": (None, "flat"),
    "single-vector tuned": ("retriever", "flat"),
    "mv untrained": ("", "flat"),
    "mv name τ": ("name-tau", "flat"),
    "mv name τ sq8": ("name-tau", "sq8"),
    "mv name τ ivfpq": ("name-tau", "ivfpq"),
    "mv name no-τ": ("name-notau", "flat"),
    "mv entity τ": ("entity-tau", "flat"),
}


def pseudo_pairs(mentions, ontology, path):
    """P_Syn: mentions (labels removed) whose normalised text is a curated synonym of one entity."""
    unlabeled = [{key: value for key, value in mention.items() if key != "gold"} for mention in mentions]
    pairs = list(make_pairs(unlabeled, build_matcher(ontology, [], sources=("synonym",))))
    path.write_text("".join(json.dumps(pair) + "\n" for pair in pairs), encoding="utf-8")
    return path


def directory_bytes(directory):
    return sum(item.stat().st_size for item in Path(directory).iterdir() if item.name != "names.json")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mentions", default=str(SHARED / "gscplus" / "mentions.jsonl"))
    parser.add_argument("--pairs", help="Pair records to train on  [default: P_Syn of the mentions]")
    parser.add_argument("--workdir", default="/tmp/ontolink-bench-mv")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--hard-negatives", type=int, default=32)
    parser.add_argument("--token-k", type=int, default=2048)
    parser.add_argument("--pq-m", type=int, default=16)
    parser.add_argument("--nprobe", type=int, default=16)
    parser.add_argument("--settings", default=",".join(SETTINGS), help="comma-separated labels of SETTINGS")
    args = parser.parse_args()
    work = working_folder(args.workdir, args.mentions)
    if work is None:
        return
    ontology = load_ontology("hpo")
    mentions = list(read_records(args.mentions))
    pairs_path = Path(args.pairs) if args.pairs else pseudo_pairs(mentions, ontology, work / "pairs-P_Syn.jsonl")
    pairs = list(read_records(pairs_path, validate=pair_validator(ontology, accept_gold=True)))
    print(f"{len(mentions)} test mentions; {len(pairs)} training pairs from {pairs_path}", flush=True)

    rows, reference = [], None
    for label in args.settings.split(","):
        model_name, faiss_type = SETTINGS[label]
        train_seconds = ""
        model = None
        if model_name == "retriever":
            model = work / f"model-retriever-e{args.epochs}"
            if not (model / "manifest.json").exists():
                manifest = train_retriever([dict(pair) for pair in pairs], ontology, model, epochs=args.epochs)
                print(f"[{label}] trained in {manifest['seconds']:.0f} s, losses {manifest['losses']}", flush=True)
            train_seconds = json.loads((model / "manifest.json").read_text())["seconds"]
        elif model_name:
            model = work / f"model-{model_name}-e{args.epochs}"
            if not (model / "manifest.json").exists():
                manifest, _ = train_multivector([dict(pair) for pair in pairs], ontology, model, epochs=args.epochs,
                                                hard_negatives=args.hard_negatives, **MODELS[model_name])
                print(f"[{label}] trained in {manifest['seconds']:.0f} s, losses {manifest['losses']}", flush=True)
            train_seconds = json.loads((model / "manifest.json").read_text())["seconds"]
        suffix = f"-m{args.pq_m}-p{args.nprobe}" if faiss_type == "ivfpq" else ""
        index = work / f"idx-{label.replace(' ', '_')}-e{args.epochs}{suffix}"
        started = time.perf_counter()
        if not (index / "manifest.json").exists():
            if model_name in (None, "retriever"):
                build_index(ontology, index, model=str(model) if model else None)
            else:
                extra = {"pq_m": args.pq_m, "nprobe": args.nprobe} if faiss_type == "ivfpq" else {}
                build_multivector_index(ontology, index, model=str(model) if model else None, faiss_type=faiss_type,
                                        token_k=args.token_k, **extra)
        build = time.perf_counter() - started
        loaded = load_index(index, ontology)
        started = time.perf_counter()
        linked = list(link_mentions(iter(mentions), loaded, top_k=TOP_K))
        rate = len(linked) / (time.perf_counter() - started)
        ranks, categories = score_file(linked, ontology, ks=(1, TOP_K))
        metrics = file_metrics(ranks, categories, ks=(1, TOP_K))
        size = directory_bytes(index) / 1e6
        if reference is None:  # ratios are against the first setting run
            reference = (size, rate)
        rows.append([label, train_seconds, f"{build:.0f}", f"{metrics['all']['R@1']:.3f}",
                     f"{metrics['all'][f'R@{TOP_K}']:.3f}", f"{metrics['all']['MRR']:.3f}",
                     *(f"{metrics[group]['R@1']:.3f}" for group in ("HO", "LO", "NO")),
                     f"{size:.1f}", f"{size / reference[0]:.2f}x", f"{rate:.0f}", f"{rate / reference[1]:.2f}x"])
        print(tabulate([rows[-1]], tablefmt="plain"), flush=True)
    print()
    print(tabulate(rows, headers=["setting", "train s", "index s", "R@1", f"R@{TOP_K}", "MRR", "HO R@1", "LO R@1",
                                  "NO R@1", "index MB", "size", "mentions/s", "speed"]))


if __name__ == "__main__":
    sys.exit(run_and_record(main, __file__))
