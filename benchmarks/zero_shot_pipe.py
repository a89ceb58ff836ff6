"""The README's zero-shot pipe, run as a user runs it (each step a subprocess), on LPT and on HPO.

    ontolink index --ontology O idx/frozen
    ontolink select-entities ... | gen-aliases | filter | make-pairs --sources name,alias,synonym > pairs.jsonl
    ontolink make-pairs --ontology O --sources ontology -i /dev/null > synonym-pairs.jsonl
    cat pairs.jsonl synonym-pairs.jsonl | ontolink train retriever --ontology O --negatives pc-pos models/retriever
    ontolink index --ontology O --model models/retriever idx/tuned
    ontolink train reranker --ontology O --index idx/tuned -i pairs.jsonl models/reranker
    ontolink link --index idx/tuned --reranker models/reranker -i test.jsonl | ontolink eval

LPT: the Sci-ZSEL livestock-trait ontology with its 42 public test mentions as the unlabeled corpus (their
labels stripped) and, with labels, as the test. HPO: NCBI-disease's unlabeled mentions as the corpus and
GSC+ (gold spans) as the test. The rows: each learned model against its start as its trainer reports it
(its summary line and manifest: held-out R@1 at the start and kept), and frozen vs tuned R@1 on the test
mentions, each stage as the pipe leaves it (a trainer that refuses its pairs, exit 2, leaves the stage
before it in place, as in a user's shell).

On a CPU (2 shared cores) three things are cut, and say so in the output: gen-aliases asks SmolLM2 about
the ``max_entities`` most-mentioned selected entities only (an LLM call takes ~3 s), the retriever learns from
``ONTOLOGY_PAIRS_CPU`` of the ontology's synonyms (`make-pairs --ontology-pairs`; HPO has 21,472, a quarter
of an hour of training), and the reranker is trained with ``RERANKER_CPU`` (fewer candidates, negatives and
word pieces, one epoch) instead of its GPU-sized defaults.

    python benchmarks/zero_shot_pipe.py [--only lpt|hpo] [--workdir DIR]   # benchmarks/results/zero_shot_pipe.md
"""

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from setup_work import ONTOLINK  # beside this script
from results_file import nothing_measured, run_and_record  # beside this script

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data"
ONTOLOGY_PAIRS_CPU = 4000
RERANKER_CPU = ["--top-k", "16", "--negatives", "7", "--max-length", "64", "--epochs", "1", "--lr", "1e-4",
                "--head-lr", "1e-3"]


def datasets(shared=SHARED):
    """name -> (ontology, unlabeled corpus, labeled test mentions, gen-aliases domain, max entities)."""
    return {
        "lpt": (shared / "sci-zsel" / "lpt_kb.json", None, shared / "sci-zsel" / "lpt_test_grag.PARTIAL_first42.json",
                "livestock product trait", 0),
        "hpo": ("hpo", shared / "ncbi_disease" / "unlabeled_mentions.jsonl", shared / "gscplus" / "mentions.jsonl",
                "human phenotype", 24),
    }


def scizsel_mentions(path):
    """Sci-ZSEL test JSON ({mention, mention_context with [MENTION_START]...}) as Mention records with gold."""
    records = []
    for item in json.loads(Path(path).read_text(encoding="utf-8")):
        left, _, rest = item["mention_context"].partition("[MENTION_START]")
        _, _, right = rest.partition("[MENTION_END]")
        records.append({"id": str(item["sample_id"]), "mention": item["mention"], "context_left": left.rstrip() + " ",
                        "context_right": " " + right.lstrip(), "gold": [g["id"] for g in item["ground_truth"]]})
    return records


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def step(name, arguments, log, stdin=None, stdout=None, allowed=(0,)):
    """Run one ontolink command; returns (exit status, its last stderr line: the summary)."""
    started = time.perf_counter()
    with open(stdin, "rb") if stdin else open("/dev/null", "rb") as source, \
            open(stdout, "wb") if stdout else open("/dev/null", "wb") as target:
        result = subprocess.run(ONTOLINK + [str(argument) for argument in arguments], stdin=source, stdout=target,
                                stderr=subprocess.PIPE, text=True)
    lines = [line for line in result.stderr.splitlines() if line.startswith("ontolink:")]
    summary = lines[-1] if lines else ""
    log.append((name, round(time.perf_counter() - started, 1), result.returncode, summary))
    print(f"[{name}] exit {result.returncode}, {log[-1][1]} s: {summary}", flush=True)
    if result.returncode not in allowed:
        raise RuntimeError(f"{name} failed (exit {result.returncode}):\n{result.stderr[-3000:]}")
    return result.returncode, result.stderr


def test_r1(linked_path, ontology):
    """R@1 and R@10 of a linked file with gold (ontolink.evaluation, as `ontolink eval` scores it)."""
    from ontolink.evaluation.evaluate import file_metrics, score_file
    from ontolink.ontology import load_ontology

    records = [json.loads(line) for line in Path(linked_path).read_text(encoding="utf-8").splitlines() if line]
    metrics = file_metrics(*score_file(records, ontology=load_ontology(str(ontology)), ks=(1, 10)), ks=(1, 10))["all"]
    return metrics["R@1"], metrics["R@10"]


def learned(model_dir):
    """(start R@1, kept R@1, kept epoch, improved) from a trained model's manifest."""
    manifest = json.loads((Path(model_dir) / "manifest.json").read_text())
    return manifest.get("start_R@1"), manifest.get("kept_R@1"), manifest.get("kept_epoch"), manifest.get("improved")


def run_pipe(name, work, shared=SHARED, reranker_options=RERANKER_CPU, max_entities=None, llm=True):
    """Rows of one dataset's pipe: (dataset, stage, what it reports, test R@1, test R@10)."""
    ontology, corpus, test, domain, default_cap = datasets(shared)[name]
    cap = default_cap if max_entities is None else max_entities
    work.mkdir(parents=True, exist_ok=True)
    labeled = (write_jsonl(work / "test.jsonl", scizsel_mentions(test)) if str(test).endswith(".json")
               else Path(test))
    unlabeled = work / "corpus.jsonl"
    if corpus is None:  # the test mentions themselves, labels stripped
        write_jsonl(unlabeled, [{key: value for key, value in json.loads(line).items() if key != "gold"}
                                for line in labeled.read_text(encoding="utf-8").splitlines() if line])
    else:
        unlabeled.write_bytes(Path(corpus).read_bytes())
    log, rows = [], []
    on = ["--ontology", ontology]
    step("index (frozen)", ["index", *on, "--force", work / "idx-frozen"], log)
    step("select-entities", ["select-entities", *on, "--index", work / "idx-frozen", "-i", unlabeled, "-o",
                             work / "selected.jsonl"], log)
    if not llm:  # no LLM: make-pairs from the ontology's names and synonyms alone
        print("no gen-aliases | filter (--no-llm): pairs from names and synonyms only")
        (work / "filtered.jsonl").write_text("", encoding="utf-8")
    elif cap:
        lines = (work / "selected.jsonl").read_text(encoding="utf-8").splitlines()[:cap]
        (work / "selected.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        print(f"gen-aliases on the {len(lines)} most-mentioned selected entities (LLM time on a CPU)")
    if llm:
        step("gen-aliases", ["gen-aliases", *on, "--domain", domain, "-i", work / "selected.jsonl", "-o",
                             work / "aliases.jsonl"], log)
        step("filter", ["filter", *on, "-i", work / "aliases.jsonl", "-o", work / "filtered.jsonl"], log)
    step("make-pairs", ["make-pairs", *on, "--mentions", unlabeled, "--sources", "name,alias,synonym", "-i",
                        work / "filtered.jsonl", "-o", work / "pairs.jsonl"], log)
    pairs = sum(1 for line in (work / "pairs.jsonl").read_text().splitlines() if line.strip())
    print(f"{pairs} pairs")
    # the retriever also learns from the ontology's own synonyms (the reranker reads mentions in context: not them)
    step("make-pairs (ontology)", ["make-pairs", *on, "--sources", "ontology", "--ontology-pairs",
                                   str(ONTOLOGY_PAIRS_CPU), "-i", "/dev/null", "-o", work / "synonym-pairs.jsonl"],
         log)
    synonyms = sum(1 for line in (work / "synonym-pairs.jsonl").read_text().splitlines() if line.strip())
    (work / "retriever-pairs.jsonl").write_bytes((work / "pairs.jsonl").read_bytes()
                                                 + (work / "synonym-pairs.jsonl").read_bytes())

    step("link (frozen)", ["link", "--index", work / "idx-frozen", "-i", labeled, "-o", work / "frozen.jsonl"], log)
    frozen = test_r1(work / "frozen.jsonl", ontology)
    rows.append([name, "frozen index", f"{pairs} corpus pairs made, {synonyms} synonym pairs", *frozen])

    # a fresh directory rather than --force, which also trains on pairs too few to learn from
    shutil.rmtree(work / "retriever", ignore_errors=True)
    status, stderr = step("train retriever", ["train", "retriever", *on, "-i", work / "retriever-pairs.jsonl", "--negatives",
                                              "pc-pos", work / "retriever"], log, allowed=(0, 2))
    if status:
        rows.append([name, "retriever", "refused: " + log[-1][3].removeprefix("ontolink: ")[:160], *frozen])
        rows.append([name, "pipe ends at", "the frozen index (no step after a refusal)", *frozen])
        return rows, log
    summary = log[-1][3].split("; ", 1)[-1]
    step("index (tuned)", ["index", *on, "--model", work / "retriever", "--force", work / "idx-tuned"], log)
    step("link (tuned)", ["link", "--index", work / "idx-tuned", "-i", labeled, "-o", work / "tuned.jsonl"], log)
    tuned = test_r1(work / "tuned.jsonl", ontology)
    rows.append([name, "retriever", summary, *tuned])

    shutil.rmtree(work / "reranker", ignore_errors=True)
    status, _ = step("train reranker", ["train", "reranker", *on, "--index", work / "idx-tuned", "-i",
                                        work / "pairs.jsonl", *reranker_options, work / "reranker"], log,
                     allowed=(0, 2))
    if status:
        rows.append([name, "reranker", "refused: " + log[-1][3].removeprefix("ontolink: ")[:160], *tuned])
        rows.append([name, "pipe ends at", "the tuned index", *tuned])
        return rows, log
    summary = log[-1][3].split("; ", 1)[-1]
    top_k = reranker_options[reranker_options.index("--top-k") + 1] if "--top-k" in reranker_options else "64"
    step("link (reranked)", ["link", "--index", work / "idx-tuned", "--reranker", work / "reranker", "--top-k", top_k,
                             "-i", labeled, "-o", work / "reranked.jsonl"], log)
    reranked = test_r1(work / "reranked.jsonl", ontology)
    rows.append([name, "reranker", summary, *reranked])
    rows.append([name, "pipe ends at", "tuned index + reranker", *reranked])
    return rows, log


READINGS = (("torch", "fp32"), ("torch", "int8"), ("onnx", "int8"))


def precision_rows(name, work, shared=SHARED):
    """A tuned retriever (the pipe's, in ``work``) indexed in each reading (runtime, precision) and scored on the
    test mentions: what CPU int8 costs against the fp32 it was trained and scored in."""
    ontology, _, test, *_ = datasets(shared)[name]
    labeled = work / "test.jsonl" if str(test).endswith(".json") else Path(test)
    rows, log = [], []
    for runtime, precision in READINGS:
        folder = work / f"idx-{runtime}-{precision}"
        step(f"index {runtime} {precision}", ["index", "--ontology", ontology, "--model", work / "retriever",
                                              "--runtime", runtime, "--precision", precision, "--no-cache", "--force",
                                              folder], log)
        seconds = log[-1][1]
        step(f"link {runtime} {precision}", ["link", "--index", folder, "-i", labeled, "-o", work / "read.jsonl"], log)
        rows.append([name, runtime, precision, *test_r1(work / "read.jsonl", ontology), seconds, log[-1][1]])
    return rows


def precision_markdown(workdir, names):
    """The tuned retrievers of ``names`` (pipes run in ``workdir``) read in each precision, as a markdown table."""
    lines = ["What reading a tuned retriever in int8 costs (indexed with --no-cache in each reading, test mentions "
             "linked):", "", "| data | runtime | precision | test R@1 | test R@10 | index s | link s |",
             "|---|---|---|---|---|---|---|"]
    for name in names:
        if (Path(workdir) / name / "retriever" / "manifest.json").exists():
            for row in precision_rows(name, Path(workdir) / name):
                lines.append("| " + " | ".join(f"{value:.3f}" if isinstance(value, float) and value < 1.0001
                                               else str(value) for value in row) + " |")
    return "\n".join(lines)


def zero_shot_rows(workdir="/tmp/ontolink-zero-shot-pipe", only=("lpt", "hpo"), shared=SHARED,
                   reranker_options=RERANKER_CPU, llm=True):
    """Rows (dataset, stage, what the trainer reports, test R@1, test R@10) of the pipe on each dataset, and
    the step log (name, seconds, exit status, summary). For bench_default_path.py and this script's main."""
    rows, log = [], []
    for name in only:
        ontology, corpus, test, *_ = datasets(shared)[name]
        if not all(Path(path).exists() for path in (corpus, test) if path is not None):
            print(f"{name}: shared data absent, skipped")
            continue
        more_rows, more_log = run_pipe(name, Path(workdir) / name, shared, reranker_options, llm=llm)
        rows += more_rows
        log += [(name, *entry) for entry in more_log]
    return rows, log


def markdown(rows):
    lines = ["| data | stage | as its trainer reports it (held-out pairs) | test R@1 | test R@10 |", "|---|---|---|---|---|"]
    for data, stage, said, r1, r10 in rows:
        lines.append(f"| {data} | {stage} | {said} | {r1:.3f} | {r10:.3f} |" if r10 is not None else
                     f"| {data} | {stage} | {said} | {r1:.3f} | - |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["lpt", "hpo"], action="append")
    parser.add_argument("--workdir", default="/tmp/ontolink-zero-shot-pipe")
    parser.add_argument("--no-llm", action="store_true",
                        help="skip gen-aliases | filter (SmolLM2 on a busy CPU: minutes a call); pairs from names "
                             "and synonyms only")
    parser.add_argument("--precision", action="store_true",
                        help="also index each tuned retriever in torch fp32, torch int8 and ONNX int8 and score them")
    args = parser.parse_args()
    if not SHARED.exists():
        nothing_measured(f"{SHARED} is absent (the project's shared data sits beside the repository); nothing to do")
        return 0
    started = time.perf_counter()
    rows, log = zero_shot_rows(args.workdir, tuple(args.only or ("lpt", "hpo")), llm=not args.no_llm)
    print()
    print(f"reranker options (CPU): {' '.join(RERANKER_CPU)}")
    print()
    print(markdown(rows))
    print()
    print("| data | step | seconds | exit |")
    print("|---|---|---|---|")
    for data, step_name, seconds, status, _ in log:
        print(f"| {data} | {step_name} | {seconds} | {status} |")
    if args.precision:
        print()
        print(precision_markdown(Path(args.workdir), args.only or ("lpt", "hpo")))
    print(f"\nwhole run: {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(run_and_record(main, __file__))
