"""Concept recognition from raw text, end to end: `annotate | link` against FastHPOCR on GSC+ and NCBI-disease.

The GSC+ abstracts are rebuilt from ../shared/data/gscplus/mentions.jsonl
(context_left + mention + context_right is the whole abstract, grouped by
doc_id) and written as plain-text documents WITHOUT their spans; the NCBI-disease
training abstracts (../shared/data/ncbi_disease, unlabeled) likewise, for speed.
Each setting runs the pipe exactly as a user does (each stage a subprocess):

    ontolink annotate --ontology hpo --roots HP:0000118 [...] -i docs.txt | ontolink link --index IDX --top-k 5

FastHPOCR 0.1.4 (../shared/tools/peer_fasthpocr.py, in its own virtual environment, /tmp/fasthpocr by
default; skipped with a message when absent) annotates the same documents in the same run. Both
outputs are scored here alike on (span, top-1 id): strict (same span), lenient (overlapping span),
document level (the set of ids of each abstract), and the misses and false positives sorted into
error classes. The ablation rows switch the matcher's pieces off one at a time from the default.
`link --no-annotate-ids` is the row without link keeping the entities annotate found over a span. With
--dense-threshold T, a row adds the dense index's n-grams; with --span-scorer too, a span scorer is fitted
without labels (`ontolink train span-scorer`: HPO names under the roots against the NCBI abstracts' n-grams)
and a row asks the index only about the n-grams it passes.
Speed: documents per second of the whole pipe on the NCBI abstracts, loading included (FastHPOCR:
its index load plus annotation as it times them, without its interpreter's start and imports, which
our pipe's seconds include; its one-off index build is reported apart). The machines are shared and
noisy, so --rounds runs of the pipe, of annotate alone and of FastHPOCR alternate, and the table gives
each one's median and the median of the per-round ratios. Memory: each step's peak resident memory on
the NCBI abstracts once and repeated each of --memory-copies times (annotate alone; with --memory-pipe
also annotate and link each in the pipe). --speed-only runs these two parts alone and writes
benchmarks/results/bench_annotate_speed.md, leaving the whole run's file (and its GSC+ tables) as it was.
--ontology runs the GSC+ tables with another HPO release (both tools, and the gold ids resolved in it; written
to bench_annotate_ontology.md), --aliases adds a row with an alias file (bench_annotate_aliases.md; both:
bench_annotate_ontology_aliases.md); neither measures speed.

    python benchmarks/bench_annotate.py [--workdir DIR] [--peer-python PY] [--rounds N] [--memory-copies N[,N...]]
                                        [--memory-pipe] [--speed-only] [--dense-threshold T [--span-scorer]]
                                        [--ontology HP.OBO] [--aliases ALIASES.JSONL]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter, OrderedDict, defaultdict
from pathlib import Path

from tabulate import tabulate

from setup_work import ONTOLINK, hpo_index, working_folder  # beside this script
from results_file import run_and_record  # beside this script

REPO = Path(__file__).resolve().parent.parent
# ../shared beside the repository, or where ONTOLINK_SHARED_DATA (its data folder, as for the tests) says
SHARED = Path(os.environ["ONTOLINK_SHARED_DATA"]).parent if os.environ.get("ONTOLINK_SHARED_DATA") \
    else REPO.parent / "shared"
PEER = SHARED / "tools" / "peer_fasthpocr.py"
ROOTS = ["--roots", "HP:0000118"]
# Published figures (mention level) for reference: FastHPOCR from its paper's abstract; PhenoTagger
# v1.1 (GSC+ test set) from the table in the ncbi-nlp/PhenoTagger README.
PUBLISHED = [("FastHPOCR (Groza et al. 2024, Bioinformatics 40:btae406)", None, None, "0.76"),
             ("PhenoTagger v1.1, CNN (Luo et al. 2021)", "0.802", "0.703", "0.749"),
             ("PhenoTagger v1.1, BioBERT (Luo et al. 2021)", "0.773", "0.741", "0.757")]
COORDINATED = (" and ", " or ", "/", ", ")  # a gold mention holding one of these is a coordinated one


def rebuild_documents(mentions_path, target, copies=1):
    """Abstracts as 'DOC<TAB>text' lines, in first-seen order (``copies`` times, ids suffixed); returns
    (documents, mentions) of one copy."""
    texts = OrderedDict()
    count = 0
    with open(mentions_path, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            text = record["context_left"] + record["mention"] + record["context_right"]
            if texts.setdefault(record["doc_id"], text) != text:
                sys.exit(f"document {record['doc_id']} has two different texts in {mentions_path}")
            count += 1
    with open(target, "w", encoding="utf-8") as out:
        for copy in range(copies):
            for doc_id, text in texts.items():
                out.write(f"{doc_id}{'' if copies == 1 else f'.{copy}'}\t{' '.join(text.splitlines())}\n")
    return len(texts), count


def pipe(stages, stdin_path, stdout_path):
    """Run ``stages`` (argument lists) as one shell-style pipe; returns its seconds."""
    started = time.perf_counter()
    processes = []
    source = open(stdin_path, "rb")
    for index, stage in enumerate(stages):
        last = index == len(stages) - 1
        sink = open(stdout_path, "wb") if last else subprocess.PIPE
        process = subprocess.Popen(stage, stdin=source, stdout=sink, stderr=subprocess.PIPE)
        if source is not None and hasattr(source, "close"):
            source.close()
        source = process.stdout
        processes.append(process)
    failed = False
    for process in processes:
        _, err = process.communicate()
        for line in err.decode().splitlines():
            if line.startswith("ontolink"):
                print(f"    {line}")
        failed |= process.returncode != 0
    if failed:
        sys.exit(f"pipe failed: {' | '.join(' '.join(stage[2:4]) for stage in stages)}")
    return time.perf_counter() - started


def peak_memory(command, stdin_path):
    """Peak resident memory (MiB) of one command reading ``stdin_path``, by /usr/bin/time."""
    with open(stdin_path, "rb") as source:
        result = subprocess.run(["/usr/bin/time", "-f", "%M"] + command, stdin=source, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, check=True)
    return int(result.stderr.decode().strip().splitlines()[-1]) / 1024


def pipe_peak_memory(stages, stdin_path):
    """Peak resident memory (MiB) of each stage of one pipe reading ``stdin_path`` (output discarded), and its
    seconds."""
    started = time.perf_counter()
    processes = []
    source = open(stdin_path, "rb")
    for index, stage in enumerate(stages):
        last = index == len(stages) - 1
        process = subprocess.Popen(["/usr/bin/time", "-f", "peak %M"] + stage, stdin=source,
                                   stdout=subprocess.DEVNULL if last else subprocess.PIPE, stderr=subprocess.PIPE)
        source.close()
        source = process.stdout
        processes.append(process)
    peaks = []
    for process in processes:
        _, err = process.communicate()
        if process.returncode != 0:
            sys.exit(f"pipe failed:\n{err.decode()[-2000:]}")
        peaks.append(int(err.decode().strip().splitlines()[-1].split()[-1]) / 1024)
    return peaks, time.perf_counter() - started


def predictions(path):
    """(doc, start, end, top id) of each Linked record."""
    found = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            candidates = record.get("candidates") or []
            if candidates and not record.get("nil"):
                found.append((str(record["doc_id"]), int(record["start"]), int(record["end"]), candidates[0]["id"]))
    return found


def gold_mentions(path, ontology):
    from ontolink.evaluation.evaluate import hit_ids

    gold = defaultdict(list)
    texts = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            gold[record["doc_id"]].append((record["start"], record["end"], hit_ids(record["gold"], ontology),
                                           record["mention"]))
            texts[record["doc_id"]] = record["context_left"] + record["mention"] + record["context_right"]
    return gold, texts


def prf(correct, predicted, found, total):
    precision = correct / predicted if predicted else 0.0
    recall = found / total if total else 0.0
    return precision, recall, 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def score(found, gold):
    """Strict, lenient and document P/R/F1, coordination recall, and the error classes."""
    total = sum(len(spans) for spans in gold.values())
    strict_hits, lenient_hits = set(), set()
    strict_correct = lenient_correct = 0
    false_positives = Counter()
    by_doc = defaultdict(list)
    for doc, start, end, entity in found:
        by_doc[doc].append((start, end, entity))
        strict = lenient = False
        classes = []
        for index, (gold_start, gold_end, ids, _) in enumerate(gold.get(doc, ())):
            overlap = gold_start < end and start < gold_end
            if (gold_start, gold_end) == (start, end):
                if entity in ids:
                    strict = True
                    strict_hits.add((doc, index))
                else:
                    classes.append("wrong id on a gold span")
            elif overlap:
                classes.append("inner name of a longer gold mention" if gold_start <= start and end <= gold_end
                               else "span boundary")
            if overlap and entity in ids:
                lenient = True
                lenient_hits.add((doc, index))
        strict_correct += strict
        lenient_correct += lenient
        if not strict:
            false_positives[classes[0] if classes else "no gold mention there"] += 1
    misses = Counter()
    coordinated = coordinated_found = 0
    for doc, spans in gold.items():
        for index, (gold_start, gold_end, ids, mention) in enumerate(spans):
            is_coordinated = any(mark in f" {mention} " for mark in COORDINATED)
            coordinated += is_coordinated
            if (doc, index) in strict_hits:
                coordinated_found += is_coordinated
                continue
            near = [(start, end, entity) for start, end, entity in by_doc.get(doc, ())
                    if gold_start < end and start < gold_end]
            if is_coordinated:
                kind = "coordination"
            elif any((start, end) == (gold_start, gold_end) for start, end, _ in near):
                kind = "wrong id on the gold span"
            elif any(gold_start <= start and end <= gold_end for start, end, _ in near):
                kind = "only a shorter part found"
            elif near:
                kind = "span boundary"
            else:
                kind = "nothing found there"
            misses[kind] += 1
    document_correct = document_predicted = document_found = document_gold = 0
    for doc in set(gold) | set(by_doc):
        predicted_ids = {entity for _, _, entity in by_doc.get(doc, ())}
        gold_sets = list({min(ids): ids for _, _, ids, _ in gold.get(doc, ())}.values())  # one per gold entity
        document_predicted += len(predicted_ids)
        document_gold += len(gold_sets)
        document_correct += sum(1 for entity in predicted_ids if any(entity in ids for ids in gold_sets))
        document_found += sum(1 for ids in gold_sets if ids & predicted_ids)
    return {"predicted": len(found), "strict": prf(strict_correct, len(found), len(strict_hits), total),
            "lenient": prf(lenient_correct, len(found), len(lenient_hits), total),
            "document": prf(document_correct, document_predicted, document_found, document_gold),
            "coordination": (coordinated_found, coordinated), "misses": misses, "false_positives": false_positives}


def row(name, scored, seconds=None):
    strict, lenient, document = scored["strict"], scored["lenient"], scored["document"]
    found, coordinated = scored["coordination"]
    return [name, scored["predicted"], f"{strict[0]:.3f}", f"{strict[1]:.3f}", f"{strict[2]:.3f}", f"{lenient[2]:.3f}",
            f"{document[2]:.3f}", f"{found}/{coordinated}", "" if seconds is None else f"{seconds:.0f}"]


def run_peer(peer_python, obo, documents, out, work):
    result = subprocess.run([peer_python, str(PEER), str(obo), str(documents), str(out), str(work)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FastHPOCR failed:\n{result.stderr[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mentions", default=str(SHARED / "data" / "gscplus" / "mentions.jsonl"))
    parser.add_argument("--ncbi", default=str(SHARED / "data" / "ncbi_disease" / "unlabeled_mentions.jsonl"))
    parser.add_argument("--workdir", default="/tmp/ontolink-bench-annotate")
    parser.add_argument("--peer-python", default="/tmp/fasthpocr/bin/python")
    parser.add_argument("--memory-copies", default="10",
                        help="NCBI abstracts repeated this many times for the memory rows (comma-separated: a row "
                             "each; 169 copies are 100,048 abstracts); 0: no memory rows")
    parser.add_argument("--memory-pipe", action="store_true",
                        help="memory rows of annotate | link too (each stage's peak), not of annotate alone only")
    parser.add_argument("--rounds", type=int, default=3,
                        help="speed runs of each tool, alternating (the table gives medians)")
    parser.add_argument("--speed-only", action="store_true",
                        help="only the NCBI speed and memory parts, written to bench_annotate_speed.md")
    parser.add_argument("--wordnet", default="/usr/share/wordnet" if Path("/usr/share/wordnet/data.adj").exists()
                        else None, help="also a row with annotate --wordnet DIR (default: Debian's wordnet-base where "
                                        "installed; '' for none)")
    parser.add_argument("--dense-threshold", type=float, default=None,
                        help="also a row with annotate --index (dense n-grams) at this threshold")
    parser.add_argument("--ontology", default=None,
                        help="another HPO release (an hp.obo) for both tools and the gold ids, e.g. the one the corpus "
                             "was annotated with; the GSC+ tables only, written to bench_annotate_ontology.md")
    parser.add_argument("--aliases", default=None,
                        help="also a row with an alias file (gen-aliases / filter output): annotate --aliases FILE | "
                             "link over an index built with --aliases FILE; written to bench_annotate_aliases.md")
    parser.add_argument("--span-scorer", action="store_true",
                        help="with --dense-threshold: also a row whose n-grams a span scorer gates (`train span-scorer` "
                             "on the NCBI abstracts, HPO names under the roots; its fit is timed apart)")
    args = parser.parse_args()
    work = working_folder(args.workdir, args.mentions, args.ncbi)
    if work is None:
        return
    from ontolink.ontology import load_ontology

    hpo = load_ontology(args.ontology or "hpo")
    gold, _ = gold_mentions(args.mentions, hpo)
    gsc_docs, ncbi_docs = work / "gscplus_docs.txt", work / "ncbi_docs.txt"
    n_docs, n_mentions = rebuild_documents(args.mentions, gsc_docs)
    n_ncbi, _ = rebuild_documents(args.ncbi, ncbi_docs)
    coordinated = sum(any(mark in f" {m} " for mark in COORDINATED) for spans in gold.values() for *_, m in spans)
    print(f"GSC+ (public split): {n_docs} abstracts, {n_mentions} gold mentions ({coordinated} coordinated), "
          f"rebuilt without spans; NCBI-disease: {n_ncbi} abstracts")
    if args.ontology:  # its own index and FastHPOCR index (the peer keeps one per work folder)
        work = work / f"ontology-{hpo.content_hash[:12]}"
        work.mkdir(exist_ok=True)
        print(f"ontology: {args.ontology} (sha256 {hpo.content_hash[:12]}, {len(hpo)} live terms)")
    index = hpo_index(work / "idx-hpo", args.ontology or "hpo")
    link = ONTOLINK + ["link", "--index", str(index), "--top-k", "5"]
    annotate = ONTOLINK + ["annotate", "--ontology", args.ontology or "hpo"] + ROOTS
    obo = Path(hpo.source)
    if not args.speed_only:
        quality(args, work, gold, gsc_docs, ncbi_docs, index, link, annotate, obo)
    if not (args.ontology or args.aliases):
        speed_and_memory(args, work, ncbi_docs, n_ncbi, link, annotate, obo)


def quality(args, work, gold, gsc_docs, ncbi_docs, index, link, annotate, obo):
    """The GSC+ tables: every setting of ours and FastHPOCR, scored alike."""
    settings = [("ontolink (default)", []),
                ("  without coordination", ["--no-coordination"]),
                ("  nesting all (keep every inner name)", ["--nesting", "all"]),
                ("  nesting none", ["--nesting", "none"]),
                ("  without word forms (stems only)", ["--no-word-forms"]),
                ("  in order (no order-free matching)", ["--in-order"]),
                ("  a name shared with an ancestor finds both (--shared-names all)", ["--shared-names", "all"]),
                ("  + abbreviations defined in the document", ["--abbreviations"]),
                ("  + optional modifiers (names less learned modifiers)", ["--optional-modifiers"]),
                ("  without equivalent words (--no-equivalent-words)", ["--no-equivalent-words"]),
                ("  all five off, nesting all (exact-order names)",
                 ["--in-order", "--no-word-forms", "--no-coordination", "--no-equivalent-words", "--nesting", "all"]),
                ("  link without annotate's ids (link --no-annotate-ids)", [], ["--no-annotate-ids"])]
    if args.wordnet:
        settings.append((f"  + WordNet pertainyms (--wordnet {args.wordnet})", ["--wordnet", args.wordnet]))
    if args.aliases:
        aliased = work / "idx-aliases"
        subprocess.run(ONTOLINK + ["index", "--ontology", str(obo), "--aliases", args.aliases, "--force",
                                   str(aliased)], check=True)
        settings.append((f"  + aliases (--aliases {args.aliases}; an index with them)", ["--aliases", args.aliases],
                         ["--index", str(aliased)]))
    if args.dense_threshold is not None:
        dense = ["--index", str(index), "--dense-threshold", str(args.dense_threshold)]
        settings.append((f"  + dense n-grams >= {args.dense_threshold} (--index)", dense))
        if args.span_scorer:
            scorer = work / "span-scorer"
            started = time.perf_counter()
            trained = subprocess.run(ONTOLINK + ["train", "span-scorer", "--ontology", "hpo"] + ROOTS +
                                     ["-i", str(ncbi_docs), "--force", str(scorer)], capture_output=True, text=True)
            if trained.returncode != 0:
                sys.exit(f"train span-scorer failed:\n{trained.stderr[-2000:]}")
            print(f"    {trained.stderr.strip().splitlines()[-1]} (wall {time.perf_counter() - started:.0f} s)")
            settings.append((f"  + dense n-grams >= {args.dense_threshold}, only those the span scorer passes",
                             dense + ["--span-scorer", str(scorer)]))
    rows, details = [], {}
    for name, options, *link_options in settings:
        print(f"[{name.strip()}]")
        linked = work / "linked.jsonl"
        seconds = pipe([annotate + ["-i", str(gsc_docs)] + options, link + sum(link_options, [])], gsc_docs, linked)
        details[name] = score(predictions(linked), gold)
        rows.append(row(name, details[name], seconds))
    peer = None
    if Path(args.peer_python).exists():
        print("[FastHPOCR 0.1.4]")
        peer_out = work / "fasthpocr.jsonl"
        peer = run_peer(args.peer_python, obo, gsc_docs, peer_out, work / "fasthpocr")
        details["FastHPOCR 0.1.4"] = score(predictions(peer_out), gold)
        rows.append(row("FastHPOCR 0.1.4", details["FastHPOCR 0.1.4"], peer["load_s"] + peer["annotate_s"]))
    else:
        print(f"FastHPOCR: no {args.peer_python} (set it up as ../shared/tools/README.md says); peer skipped")
    for name, precision, recall, f1 in PUBLISHED:
        rows.append([f"published: {name}", "", precision or "", recall or "", f1, "", "", "", ""])
    print()
    print("GSC+ public abstracts, (span, top-1 id); coordinated = gold mentions holding 'and', 'or', '/' or ', '")
    print(tabulate(rows, headers=["setting", "predicted", "P", "R", "strict F1", "lenient F1", "document F1",
                                  "coordinated found", "seconds"], tablefmt="github", disable_numparse=True))
    shown = ["ontolink (default)"] + (["FastHPOCR 0.1.4"] if peer else [])
    for kind in ("misses", "false_positives"):
        classes = sorted({name for tool in shown for name in details[tool][kind]})
        print()
        print(tabulate([[name] + [details[tool][kind][name] for tool in shown] for name in classes],
                       headers=[kind.replace("_", " ")] + shown, tablefmt="github"))


def speed_and_memory(args, work, ncbi_docs, n_ncbi, link, annotate, obo):
    """Speed on the NCBI abstracts, loading included, ``args.rounds`` runs of each alternating; peak memory."""
    peer = Path(args.peer_python).exists()
    if peer:  # built once (the first time: minutes), timed apart, before any timed run
        built = run_peer(args.peer_python, obo, ncbi_docs, work / "fasthpocr_ncbi.jsonl", work / "fasthpocr")
    else:
        print(f"FastHPOCR: no {args.peer_python} (set it up as ../shared/tools/README.md says); peer skipped")
    runs = {"pipe": [], "annotate": [], "peer": [], "peer_wall": [], "peer_load": []}
    linked = work / "ncbi_linked.jsonl"
    # ours too, untimed: annotate keys the ontology's names into the user cache the first time
    pipe([annotate + ["-i", str(ncbi_docs)]], ncbi_docs, work / "ncbi_mentions.jsonl")
    for _ in range(max(1, args.rounds)):
        runs["pipe"].append(pipe([annotate + ["-i", str(ncbi_docs)], link], ncbi_docs, linked))
        runs["annotate"].append(pipe([annotate + ["-i", str(ncbi_docs)]], ncbi_docs, work / "ncbi_mentions.jsonl"))
        if peer:
            started = time.perf_counter()
            timing = run_peer(args.peer_python, obo, ncbi_docs, work / "fasthpocr_ncbi.jsonl", work / "fasthpocr")
            runs["peer_wall"].append(time.perf_counter() - started)
            runs["peer"].append(timing["load_s"] + timing["annotate_s"])
            runs["peer_load"].append(timing["load_s"])

    def shown(seconds):
        return " ".join(f"{value:.1f}" for value in seconds)

    speed = []
    for name, key, note in (("ontolink annotate | link", "pipe", "both processes, from start to exit"),
                            ("ontolink annotate alone", "annotate", "")):
        median = statistics.median(runs[key])
        if peer:
            ratio = statistics.median(theirs / ours for theirs, ours in zip(runs["peer"], runs[key]))
            note = "; ".join(filter(None, [note, f"FastHPOCR's seconds / these, per round: median {ratio:.2f}"]))
        speed.append([name, n_ncbi, f"{median:.2f}", f"{n_ncbi / median:.0f}", shown(runs[key]), note])
    if peer:
        median = statistics.median(runs["peer"])
        speed.append(["FastHPOCR 0.1.4 (load + annotate)", n_ncbi, f"{median:.2f}", f"{n_ncbi / median:.0f}",
                      shown(runs["peer"]), f"load {statistics.median(runs['peer_load']):.1f} s; its process "
                      f"{statistics.median(runs['peer_wall']):.1f} s from start to exit; index built once in "
                      f"{built['build_s'] or 'an earlier run'}{' s' if built['build_s'] else ''}"])
    print()
    print(f"NCBI-disease abstracts, whole run including loading ({os.cpu_count()} CPUs); median of "
          f"{max(1, args.rounds)} alternating rounds")
    print(tabulate(speed, headers=["tool", "abstracts", "seconds", "abstracts/s", "each round (s)", "note"],
                   tablefmt="github", disable_numparse=True))
    copies = [int(part) for part in str(args.memory_copies).split(",") if part.strip() and int(part) > 0]
    if not copies:
        return
    rows = []
    for count in sorted({1, *copies}):  # the abstracts once always; each count once
        documents = ncbi_docs if count == 1 else work / f"ncbi_x{count}.txt"
        if count > 1:
            rebuild_documents(args.ncbi, documents, copies=count)
        started = time.perf_counter()
        alone = peak_memory(annotate + ["-i", "-", "--from", "text"], documents)
        row = [n_ncbi * count, count, f"{alone:.0f}", f"{time.perf_counter() - started:.0f}"]
        if args.memory_pipe:
            (annotated, linking), seconds = pipe_peak_memory([annotate + ["-i", "-", "--from", "text"], link],
                                                             documents)
            row += [f"{annotated:.0f}", f"{linking:.0f}", f"{seconds:.0f}"]
        rows.append(row)
        if count > 1:
            documents.unlink()
    print()
    print("Peak resident memory (MiB), NCBI abstracts repeated")
    print(tabulate(rows, headers=["abstracts", "copies", "annotate alone", "seconds"] + (
        ["annotate in the pipe", "link in the pipe", "pipe seconds"] if args.memory_pipe else []),
        tablefmt="github", disable_numparse=True))


if __name__ == "__main__":
    given = sys.argv[1:]
    parts = [part for part in ("ontology", "aliases")
             if any(arg == f"--{part}" or arg.startswith(f"--{part}=") for arg in given)]
    name = "_".join(["bench_annotate", *parts]) if parts else \
        "bench_annotate_speed" if "--speed-only" in given else None
    sys.exit(run_and_record(main, __file__, name))
