"""A table as the ontology, end to end: entity subsets, types, ids as the corpus writes them, SSSOM predicates.

The ontology is the shared KG's entity table (../shared/data/align/entities.tsv: 4,192 Chemical, Disease, Gene and
Variant entities of BC5CDR and BioRED, `id<TAB>name<TAB>type`, MESH:/NCBIGene: ids, no header, no hierarchy),
indexed with `--field id=1,name=2,type=3` (TF-IDF: a table of names). The corpus is BC5CDR's test set (500
abstracts, PubTator, bare MeSH ids such as D003693). Each stage runs as a user runs it (a subprocess):

1. `annotate` the abstracts with every entity, and with `--where type=Disease`: mentions, and precision / recall
   of their spans against the corpus's Disease spans (same start and end).
2. `link` the Disease mentions found, `convert --to pubtator` with and without `--strip-prefix MESH:`, scored
   by the `bioc` package's PubTator reader against the corpus: (span, id) pairs equal to a corpus annotation's.
3. The corpus's own Disease mentions (`convert --id-prefix MESH:`) linked top-5; `convert --to sssom` at each
   `--exact-min`: how many rows are skos:exactMatch, and how many of those are right (the corpus's id).

    python benchmarks/bench_tables.py [--workdir DIR]
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from tabulate import tabulate

from results_file import run_and_record  # beside this script
from setup_work import ONTOLINK, working_folder  # beside this script

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
ENTITIES = SHARED / "align" / "entities.tsv"
CORPUS = SHARED / "align" / "raw" / "bc5cdr" / "CDR_TestSet.PubTator.txt"
FIELDS = "id=1,name=2,type=3"
EXACT_MINS = (None, 0.5, 0.7, 0.9)


def ontolink(*arguments, stdin=None):
    """Run one ontolink command; (stdout, seconds)."""
    started = time.perf_counter()
    done = subprocess.run(ONTOLINK + [str(argument) for argument in arguments], input=stdin, capture_output=True,
                          text=True, check=True)
    return done.stdout, time.perf_counter() - started


def corpus_annotations(path):
    """{(pmid, start, end): set of ids} of the corpus's Disease annotations, read by bioc's PubTator reader."""
    from bioc import pubtator

    with open(path, encoding="utf-8") as handle:
        return {(ann.pmid, ann.start, ann.end): set(ann.id.split("|")) for document in pubtator.load(handle)
                for ann in document.annotations if ann.type == "Disease"}


def written_annotations(path):
    from bioc import pubtator

    with open(path, encoding="utf-8") as handle:
        return [(ann.pmid, ann.start, ann.end, ann.id) for document in pubtator.load(handle)
                for ann in document.annotations]


def spans(records):
    return {(record["doc_id"], record["start"], record["end"]) for record in records}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", default="/tmp/ontolink-bench-tables")
    args = parser.parse_args()
    work = working_folder(args.workdir, ENTITIES, CORPUS)
    if work is None:
        return 0
    gold = corpus_annotations(CORPUS)
    index = work / "idx-entities"
    _, seconds = ontolink("index", "--ontology", ENTITIES, "--field", FIELDS, "--method", "tfidf", "--force", index)
    print(f"index: {ENTITIES.name} with --field {FIELDS}, TF-IDF, {seconds:.1f} s; corpus {CORPUS.name}: "
          f"{len(gold)} Disease annotations\n")

    rows = []
    found = {}
    for label, options in (("every entity", ()), ("--where type=Disease", ("--where", "type=Disease"))):
        text, seconds = ontolink("annotate", "--ontology", ENTITIES, "--field", FIELDS, "-i", CORPUS, "--from",
                                 "pubtator", *options)
        records = [json.loads(line) for line in text.splitlines()]
        found[label] = records
        hits = len(spans(records) & set(gold))
        types = sorted({record["type"] for record in records})
        rows.append([label, len(records), f"{hits / len(records):.3f}", f"{hits / len(gold):.3f}", ", ".join(types),
                     f"{seconds:.1f}"])
    print("## 1. annotate: spans against the corpus's Disease spans\n")
    print(tabulate(rows, ["annotate", "mentions", "precision", "recall", "mention types", "seconds"],
                   tablefmt="github"))

    linked, _ = ontolink("link", "--index", index, "--top-k", 5, stdin=jsonl(found["--where type=Disease"]))
    linked_path = work / "annotated-linked.jsonl"
    linked_path.write_text(linked, encoding="utf-8")
    rows = []
    for label, options in (("as linked (MESH:...)", ()), ("--strip-prefix MESH:", ("--strip-prefix", "MESH:"))):
        out = work / "linked.pubtator"
        ontolink("convert", "-i", linked_path, "--to", "pubtator", "--documents", CORPUS, "-o", out, *options)
        written = written_annotations(out)
        correct = sum(entity_id in gold.get((pmid, start, end), ()) for pmid, start, end, entity_id in written)
        rows.append([label, len(written), correct, f"{correct / len(written):.3f}", f"{correct / len(gold):.3f}"])
    print("\n## 2. annotate --where type=Disease | link | convert --to pubtator, scored by bioc's PubTator reader\n")
    print(tabulate(rows, ["ids written", "annotations", "(span, id) right", "precision", "recall"],
                   tablefmt="github"))

    mentions, _ = ontolink("convert", "-i", CORPUS, "--types", "Disease", "--id-prefix", "MESH:")
    linked, _ = ontolink("link", "--index", index, "--top-k", 5, stdin=mentions)
    records = [json.loads(line) for line in linked.splitlines()]
    right = sum(bool(record["candidates"]) and record["candidates"][0]["id"] in record["gold"] for record in records)
    print(f"\n## 3. SSSOM: the corpus's {len(records)} Disease mentions linked (top-1 right: {right}, "
          f"{right / len(records):.3f}); rows of skos:exactMatch by --exact-min\n")
    linked_path.write_text(linked, encoding="utf-8")
    rows = []
    for exact_min in EXACT_MINS:
        out = work / "links.sssom.tsv"
        options = ("--exact-min", exact_min) if exact_min is not None else ()
        ontolink("convert", "-i", linked_path, "--to", "sssom", "-o", out, *options)
        exact = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()
                 if not line.startswith("#") and "\tskos:exactMatch\t" in line]
        gold_of = {f"mention:{record['id']}": set(record["gold"]) for record in records}
        exact_right = sum(cells[3] in gold_of.get(cells[0], ()) for cells in exact)
        rows.append(["none (rank only)" if exact_min is None else exact_min, len(exact),
                     f"{len(exact) / len(records):.3f}", f"{exact_right / max(1, len(exact)):.3f}"])
    print(tabulate(rows, ["--exact-min", "exactMatch rows", "share of mentions", "exactMatch right"],
                   tablefmt="github"))
    return 0


def jsonl(records):
    return "".join(json.dumps(record) + "\n" for record in records)


if __name__ == "__main__":
    sys.exit(run_and_record(main, __file__))
