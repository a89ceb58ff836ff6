"""Index build time, link throughput, peak memory and Recall@1/@64: ontolink against its peers, one run.

Every system runs as a child process (peak memory is the child's max RSS), in
this order, on this machine's CPU, over every name and synonym of the embedded
HPO (about 40,500 names):

  sentence-transformers  all-MiniLM-L6-v2 used as its documentation says: ``encode(list)`` of the
                         distinct names / mentions (batched), normalised, faiss.IndexFlatIP; each
                         entity keeps its best name
  scispaCy 0.6.2         the candidate generator (char 3-gram TF-IDF + nmslib), ``../shared/tools/
                         peer_scispacy.py`` in its own Python 3.10 venv (skipped, with a message,
                         when /tmp/scispacy310 or --scispacy-python is absent)
  ontolink default       `ontolink index` / `link` as shipped: ONNX Runtime, int8 per token
                         first run (ONNX export + every name encoded), cold (embedding cache
                         empty), warm (a rebuild: names from the embedding cache)
  ontolink fp32          `--precision fp32` (ONNX Runtime)
  ontolink torch int8    `--runtime torch --precision int8`: the previous default (PyTorch dynamic
                         quantisation; activation scales span the batch)
  ontolink tfidf         `--method tfidf`

Mentions: GSC+ (1,151 labeled, ../shared/data/gscplus) and the corpus of NCBI-disease's 5,133 unlabeled
mentions + GSC+ (6,284, repeats included, as in real corpora). Link rate is what `ontolink link`
reports (mentions / seconds of linking, index load excluded), the median of --repeat runs made in
turn across the ontolink systems, so that a change of load hits each alike.
Recall is scored on GSC+. Batch invariance: GSC+ linked at --batch-size 7 and the default (4,096), top-1 compared.
Ratios are against sentence-transformers and scispaCy of the same run (machines are noisy).

    python benchmarks/bench_index_link.py [--skip-peer] [--skip-baseline] [--systems default,fp32,...]
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results_file import nothing_measured, run_and_record  # beside this script

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
TOP_K = 64
SYSTEMS = {
    "default": [],
    "fp32": ["--precision", "fp32"],
    "torch-int8": ["--runtime", "torch", "--precision", "int8"],
    "tfidf": ["--method", "tfidf"],
}


def timed(command, env=None):
    """Run ``command``; (seconds, peak RSS in MB, stdout + stderr). Fails loudly: an error is no number."""
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as output:
        process = subprocess.Popen(list(map(str, command)), stdout=output, stderr=subprocess.STDOUT, text=True,
                                   env={**os.environ, **(env or {})})
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        output.seek(0)
        text = output.read()
    if status != 0:
        sys.exit(f"failed ({status}): {' '.join(map(str, command))}\n{text[-2000:]}")
    return seconds, usage.ru_maxrss / 1024, text


def ontolink(*args):
    return [sys.executable, "-m", "ontolink", *map(str, args)]


def link_rate(stderr):
    match = re.search(r"\(([\d,]+) mentions/s\)", stderr)
    return float(match.group(1).replace(",", "")) if match else None


def recall(linked_path, ontology):
    from ontolink.core.io import read_records
    from ontolink.evaluation.evaluate import file_metrics, score_file

    ranks, categories = score_file(read_records(linked_path), ontology, ks=(1, TOP_K))
    metrics = file_metrics(ranks, categories, ks=(1, TOP_K))["all"]
    return metrics["R@1"], metrics[f"R@{TOP_K}"]


def top1(path):
    return [json.loads(line)["candidates"][0]["id"] for line in open(path, encoding="utf-8")]


def run_ontolink(name, options, work, mention_sets, cache, rows, ontology):
    directory = work / f"idx-{name}"
    env = {"ONTOLINK_CACHE_DIR": str(cache)}
    builds = {}
    if name == "default":
        # first run: nothing cached; cold: the ONNX export kept, no name vectors; warm: a rebuild
        for label in ("first run", "cold", "warm"):
            if label == "cold":
                shutil.rmtree(cache, ignore_errors=True)
                cache.mkdir(parents=True)
                shutil.copytree(work / "first-cache" / "onnx", cache / "onnx")
            builds[label] = timed(ontolink("index", "--ontology", "hpo", *options, directory), env)
            if label == "first run":
                shutil.copytree(cache, work / "first-cache")
    else:
        builds["cold"] = timed(ontolink("index", "--ontology", "hpo", "--no-cache", *options, directory), env)
    link = {}
    for label, path in mention_sets.items():
        out = work / f"{name}-{label}.jsonl"
        link[label] = timed(ontolink("link", "--index", directory, "--top-k", TOP_K, "-i", path, "-o", out), env)
    small = work / f"{name}-gsc-bs7.jsonl"
    timed(ontolink("link", "--index", directory, "--top-k", TOP_K, "--batch-size", 7, "-i", mention_sets["GSC+"],
                   "-o", small), env)
    changed = sum(a != b for a, b in zip(top1(small), top1(work / f"{name}-GSC+.jsonl")))
    r1, r64 = recall(work / f"{name}-GSC+.jsonl", ontology)
    rows[f"ontolink {name}"] = {
        "build": {label: seconds for label, (seconds, _, _) in builds.items()},
        "build_mb": max(mb for _, mb, _ in builds.values()),
        "link_runs": {label: [link_rate(stderr)] for label, (_, _, stderr) in link.items()},
        "link_wall": {label: seconds for label, (seconds, _, _) in link.items()},
        "link_mb": max(mb for _, mb, _ in link.values()),
        "R@1": r1, "R@64": r64, "top1_changed_bs7": changed}


def baseline_child(mentions_paths, out_dir):
    """sentence-transformers as documented; prints JSON timings (run as a child for its peak memory)."""
    import faiss
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from ontolink.encoders.model_files import DEFAULT_ENCODER, resolve_model_path
    from ontolink.ontology import load_ontology
    from ontolink.indexes.build import index_rows

    ontology = load_ontology("hpo")
    entity_ids, entity_names = [entity.id for entity in ontology], [entity.name for entity in ontology]
    texts, owners, _ = index_rows(ontology)
    started = time.perf_counter()
    model = SentenceTransformer(resolve_model_path(DEFAULT_ENCODER), device="cpu")
    unique = list(dict.fromkeys(texts))
    vectors = model.encode(unique, normalize_embeddings=True)
    row_of = {text: row for row, text in enumerate(unique)}
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(np.asarray(vectors[[row_of[text] for text in texts]], dtype=np.float32))
    result = {"build": time.perf_counter() - started, "link": {}}
    for label, path in mentions_paths.items():
        records = [json.loads(line) for line in open(path, encoding="utf-8")]
        started = time.perf_counter()
        queries = list(dict.fromkeys(record["mention"].strip() for record in records))
        scores, rows = index.search(model.encode(queries, normalize_embeddings=True), TOP_K * 5)
        best = {}
        for query, score_row, name_row in zip(queries, scores, rows):
            candidates, seen = [], set()
            for score, row in zip(score_row, name_row):
                if row >= 0 and owners[row] not in seen:
                    seen.add(owners[row])
                    candidates.append({"id": entity_ids[owners[row]], "name": entity_names[owners[row]],
                                       "score": float(score)})
            best[query] = candidates[:TOP_K]
        with open(Path(out_dir, f"st-{label}.jsonl"), "w", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps({**record, "candidates": best[record["mention"].strip()]}) + "\n")
        result["link"][label] = len(records) / (time.perf_counter() - started)
    print(json.dumps(result))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-peer", action="store_true", help="skip scispaCy")
    parser.add_argument("--skip-baseline", action="store_true", help="skip sentence-transformers")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help="ontolink systems (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="link runs per ontolink system and mention set, interleaved across systems so that "
                             "a change of load hits each alike; the median is reported (default: %(default)s)")
    parser.add_argument("--scispacy-python", type=Path, default=Path("/tmp/scispacy310/bin/python"))
    parser.add_argument("--baseline-child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.baseline_child:
        gsc, corpus, out_dir = args.baseline_child
        return baseline_child({"GSC+": gsc, "corpus": corpus}, out_dir)
    gsc = SHARED / "data" / "gscplus" / "mentions.jsonl"
    ncbi = SHARED / "data" / "ncbi_disease" / "unlabeled_mentions.jsonl"
    if not gsc.exists() or not ncbi.exists():
        nothing_measured(f"needs the shared data ({gsc.parent.parent}); nothing measured")
        return 0
    from ontolink.ontology import load_ontology

    ontology = load_ontology("hpo")
    cores = len(os.sched_getaffinity(0))
    print(f"machine: {cores} usable CPU cores, load average {os.getloadavg()[0]:.1f} at start")
    rows = {}
    with tempfile.TemporaryDirectory(prefix="bench-index-link-") as temporary:
        work = Path(temporary)
        corpus = work / "corpus.jsonl"
        with open(corpus, "w", encoding="utf-8") as handle:
            for prefix, path in (("ncbi", ncbi), ("gsc", gsc)):
                for line in open(path, encoding="utf-8"):
                    record = json.loads(line)
                    handle.write(json.dumps({**record, "id": f"{prefix}:{record['id']}"}) + "\n")
        mention_sets = {"GSC+": gsc, "corpus": corpus}
        counts = {label: sum(1 for _ in open(path, encoding="utf-8")) for label, path in mention_sets.items()}
        print(f"mentions: GSC+ {counts['GSC+']}, NCBI-disease + GSC+ {counts['corpus']}\n")
        if not args.skip_baseline:
            print("running sentence-transformers ...", file=sys.stderr, flush=True)
            _, mb, output = timed([sys.executable, __file__, "--baseline-child", gsc, corpus, work])
            result = json.loads([line for line in output.splitlines() if line.startswith("{")][-1])
            r1, r64 = recall(work / "st-GSC+.jsonl", ontology)
            rows["sentence-transformers"] = {"build": {"cold": result["build"]}, "build_mb": mb,
                                             "link": result["link"], "link_mb": mb, "R@1": r1, "R@64": r64}
        systems = args.systems.split(",")
        for name in systems:
            print(f"running ontolink {name} ...", file=sys.stderr, flush=True)
            run_ontolink(name, SYSTEMS[name], work, mention_sets, work / "cache", rows, ontology)
        for _ in range(args.repeat - 1):
            for name in systems:
                for label, path in mention_sets.items():
                    _, _, output = timed(ontolink("link", "--index", work / f"idx-{name}", "--top-k", TOP_K, "-i",
                                                  path, "-o", os.devnull), {"ONTOLINK_CACHE_DIR": str(work / "cache")})
                    rows[f"ontolink {name}"]["link_runs"][label].append(link_rate(output))
        for name in systems:
            row = rows[f"ontolink {name}"]
            row["link"] = {label: statistics.median(runs) for label, runs in row["link_runs"].items()}
            print(f"ontolink {name} link runs (mentions/s): " + "; ".join(
                f"{label} {', '.join(f'{rate:,.0f}' for rate in runs)}" for label, runs in row["link_runs"].items()))
        peer = None
        if not args.skip_peer and args.scispacy_python.exists():
            print("running scispaCy ...", file=sys.stderr, flush=True)
            _, mb, output = timed([args.scispacy_python, SHARED / "tools" / "peer_scispacy.py", _hpo_path(), corpus,
                                   work / "scispacy"])
            peer = json.loads([line for line in output.splitlines() if line.startswith("{")][-1])
            rows["scispaCy 0.6.2"] = {"build": {"cold": peer["build_s"]}, "build_mb": mb, "link_mb": mb,
                                      "link": {"corpus": peer["mentions_per_s"]},
                                      "R@1": peer.get("R@1"), "R@64": peer.get("R@64")}
        elif not args.skip_peer:
            print(f"scispaCy skipped: no {args.scispacy_python} (see ../shared/tools/README.md)")
    report(rows)
    return 0


def report(rows):
    from tabulate import tabulate

    st = rows.get("sentence-transformers")
    peer = rows.get("scispaCy 0.6.2")
    table = []
    for name, row in rows.items():
        build = row["build"]
        link = row["link"]
        ratio = lambda value, base: f"{value / base:.2f}x" if value and base else "-"  # noqa: E731
        table.append([
            name, build.get("first run"), build["cold"], build.get("warm"), row["build_mb"],
            link.get("GSC+"), link.get("corpus"), row["link_mb"],
            ratio(link.get("corpus"), st and st["link"]["corpus"]),
            ratio(link.get("corpus"), peer and peer["link"]["corpus"]),
            row["R@1"], row["R@64"], row.get("top1_changed_bs7")])
    print(tabulate(table, floatfmt=("", ".1f", ".1f", ".1f", ".0f", ",.0f", ",.0f", ".0f", "", "", ".3f", ".3f"),
                   missingval="-", headers=[
                       "system", "index first (s)", "index cold (s)", "index warm (s)", "index peak MB",
                       "link GSC+ (m/s)", "link corpus (m/s)", "link peak MB", "corpus vs ST", "corpus vs scispaCy",
                       "R@1", "R@64", "top-1 changed at batch 7"]))
    print("\nindex first: ONNX export + every name; cold: embedding cache empty; warm: a rebuild. Link rates as "
          "`ontolink link` reports them (index load excluded; median of the runs above); scispaCy links the corpus only (R@K on its GSC+ part).")


def _hpo_path():
    from ontolink.ontology import _hpo_path as embedded

    return embedded()


if __name__ == "__main__":
    sys.exit(run_and_record(main, __file__))
