"""Does a retriever warm-started from the frozen encoder (`train retriever --input-mode bare`) beat it?

Training pairs: make-pairs --sources name,synonym over the unlabeled corpus
(NCBI-disease mentions + the GSC+ mentions with their labels removed), as in
examples/zero-shot-hpo. The checkpoint is chosen on a held-out slice of those
pairs (--validation-fraction); the GSC+ gold is used ONLY to score:

  frozen (torch fp32)  the packaged all-MiniLM-L6-v2 in PyTorch fp32, the bare retriever's step 0
  frozen (default)     the same model through the default runtime (ONNX int8 on a CPU)
  bare, N epochs       `train retriever --input-mode bare` with the options given

Reports R@1, R@64, MRR and R@1 on HO/LO/NO mentions, the held-out pseudo-pair
R@1 per epoch and the epoch kept. Models and indexes stay in --workdir (named by
their options), so a rerun only links again.

    python benchmarks/bench_warm_retriever.py [--epochs 2] [--batch-size 32] [--lr 2e-5] [--negatives base]
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
from ontolink.indexes.build import build_index
from ontolink.linking.link import link_mentions
from ontolink.aliases.pairs import build_matcher, make_pairs
from ontolink.training.retriever import train_retriever

from setup_work import working_folder  # beside this script
from results_file import run_and_record  # beside this script

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data"
TOP_K = 64


def unlabeled(path):
    return [{key: value for key, value in record.items() if key != "gold"} for record in read_records(path)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mentions", default=str(SHARED / "gscplus" / "mentions.jsonl"))
    parser.add_argument("--corpus", default=str(SHARED / "ncbi_disease" / "unlabeled_mentions.jsonl"),
                        help="unlabeled mentions paired besides the test mentions (labels removed)")
    parser.add_argument("--workdir", default="/tmp/ontolink-bench-warm")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--negatives", default="base")
    parser.add_argument("--validation-fraction", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bridged", action="store_true",
                        help="also train on the BC5CDR + BioRED disease mentions that `make-pairs --sources concept "
                             "--distinct` bridges to HPO (other corpora's labels; no GSC+ document among them)")
    args = parser.parse_args()
    work = working_folder(args.workdir, args.mentions)
    if work is None:
        return
    ontology = load_ontology("hpo")
    mentions = list(read_records(args.mentions))
    corpus = unlabeled(args.corpus) + unlabeled(args.mentions)
    pairs = list(make_pairs(corpus, build_matcher(ontology, [], sources=("name", "synonym"))))
    if args.bridged:
        from bench_ranker import bridged_pairs  # beside this script

        pairs += bridged_pairs(ontology)
    validate = pair_validator(ontology)
    for pair in pairs:
        validate(pair)  # resolves the entity id and adds "golds", as `train retriever` reads them
    print(f"{len(mentions)} test mentions; {len(pairs)} pseudo pairs (name, synonym) from {len(corpus)} "
          f"unlabeled mentions", flush=True)

    label = (f"bare, {args.negatives}, {args.epochs} ep, batch {args.batch_size}, lr {args.lr:g}, "
             f"val {args.validation_fraction:g}, seed {args.seed}" + (", bridged" if args.bridged else ""))
    model = work / ("model-bare-" + label.replace(", ", "_").replace(" ", ""))
    settings = [("frozen (torch fp32)", None, "torch"), ("frozen (default)", None, "auto"), (label, model, "torch")]
    rows, notes = [], []
    for name, model_dir, runtime in settings:
        train_seconds = ""
        if model_dir is not None:
            if not (model_dir / "manifest.json").exists():
                train_retriever([dict(pair) for pair in pairs], ontology, model_dir, negatives=args.negatives,
                                epochs=args.epochs, learning_rate=args.lr, batch_size=args.batch_size,
                                seed=args.seed, input_mode="bare", validation_fraction=args.validation_fraction)
            manifest = json.loads((model_dir / "manifest.json").read_text())
            train_seconds = f"{manifest['seconds']:.0f}"
            validation = manifest.get("validation")
            notes.append(f"{name}: {manifest['training_pairs']} training pairs (de-duplicated, validation "
                         f"held out); " + ("held-out pseudo-pair R@1 by epoch " + ", ".join(
                             f"{entry['epoch']}: {entry['R@1']:.3f} (MRR {entry['MRR']:.3f}, {entry['queries']} "
                             f"queries)" for entry in validation) + f"; kept: {manifest['kept']}" if validation
                             else "no validation: the last epoch kept")
                         + f"; losses {[round(loss, 4) for loss in manifest['losses']]}")
        index = work / f"idx-{runtime}-{model_dir.name if model_dir else 'frozen'}"
        started = time.perf_counter()
        if not (index / "manifest.json").exists():
            build_index(ontology, index, model=str(model_dir) if model_dir else None, runtime=runtime,
                        precision="fp32" if runtime == "torch" else "auto", cache=False)
        build = time.perf_counter() - started
        loaded = load_index(index, ontology)
        linked = list(link_mentions(iter(mentions), loaded, top_k=TOP_K))
        ranks, categories = score_file(linked, ontology, ks=(1, TOP_K))
        metrics = file_metrics(ranks, categories, ks=(1, TOP_K))
        rows.append([name, train_seconds, f"{build:.0f}", f"{metrics['all']['R@1']:.3f}",
                     f"{metrics['all'][f'R@{TOP_K}']:.3f}", f"{metrics['all']['MRR']:.3f}",
                     *(f"{metrics[group]['R@1']:.3f}" for group in ("HO", "LO", "NO"))])
        print(tabulate([rows[-1]], tablefmt="plain"), flush=True)
    print()
    print(tabulate(rows, headers=["setting", "train s", "index s", "R@1", f"R@{TOP_K}", "MRR", "HO R@1", "LO R@1",
                                  "NO R@1"], tablefmt="github"))
    for note in notes:
        print(note)


if __name__ == "__main__":
    sys.exit(run_and_record(main, __file__))
