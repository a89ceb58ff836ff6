"""Where `link`'s time goes, and what running encoder sessions side by side buys.

Links the 6,284 mentions of NCBI-disease + GSC+ against the default HPO index in this process, in
`link`'s own batches of 256 mentions, and times each stage: encoding the distinct new texts,
the flat search, candidates per entity, and candidate records (with link's folded exact-name check). Then encodes the same distinct
mention texts, in chunks of 100 (a link batch's worth), with the encoder as shipped (one
single-threaded ONNX Runtime session per core, batches side by side) and with one session whose
operations are split across the same threads: the ratio is what the sessions give on this machine.

    python benchmarks/bench_link_stages.py [--workdir DIR] [--index DIR] [--repeat N]
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from setup_work import hpo_index, working_folder  # beside this script
from results_file import run_and_record  # beside this script

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data"
BATCH = 256


def stage_times(loaded, texts):
    """Seconds per stage, linking ``texts`` in batches of BATCH as `link` does (repeats from the memo)."""
    from ontolink.indexes.flat_search import flat_search
    from ontolink.linking.link import LinkBatches

    name_index = loaded.name_index
    link_batch = LinkBatches(loaded)
    linker = link_batch.linker
    seconds = dict.fromkeys(("encode", "search", "per entity", "records"), 0.0)
    for start in range(0, len(texts), BATCH):
        new = list(dict.fromkeys(text for text in texts[start:start + BATCH] if text not in linker.memo))
        if not new:
            continue
        began = time.perf_counter()
        vectors = name_index.encoder.encode(new, known=name_index._known)
        encoded = time.perf_counter()
        scores, rows = flat_search(name_index._flat_vectors(), vectors, linker.names_to_search,
                                   name_index._name_scan())
        searched = time.perf_counter()
        found = linker._by_entity(scores, rows)
        grouped = time.perf_counter()
        for text, result in zip(new, found):
            linker.memo.put(text, result)
            link_batch.folded.candidates(text, result, loaded)  # candidate records, exact names first, as link makes them
        done = time.perf_counter()
        for stage, seconds_taken in zip(seconds, (encoded - began, searched - encoded, grouped - searched,
                                                  done - grouped)):
            seconds[stage] += seconds_taken
    return seconds


def session_ratio(texts, chunk=100):
    """Seconds to encode ``texts`` in chunks: sessions side by side, then one session split across threads."""
    import ontolink.encoders.onnx_sessions as onnx_sessions
    from ontolink.encoders.onnx import OnnxSentenceEncoder

    side_by_side = OnnxSentenceEncoder()
    shipped_limit = onnx_sessions.MAX_SESSIONS
    onnx_sessions.MAX_SESSIONS = 1  # one session holding every thread: how the encoder ran before
    try:
        one_session = OnnxSentenceEncoder()
    finally:
        onnx_sessions.MAX_SESSIONS = shipped_limit
    timings = {}
    for label, encoder in (("sessions side by side", side_by_side), ("one session, threads split", one_session)):
        encoder.encode(texts[:200])  # warm-up: the first run of a session allocates
        began = time.perf_counter()
        for start in range(0, len(texts), chunk):
            encoder.encode(texts[start:start + chunk])
        timings[label] = time.perf_counter() - began
    return timings, side_by_side.parallel_batches


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/ontolink-bench-stages"))
    parser.add_argument("--index", type=Path, help="a default HPO index (built in --workdir when absent)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measurement; the median is printed")
    args = parser.parse_args()
    ncbi, gsc = SHARED / "ncbi_disease" / "unlabeled_mentions.jsonl", SHARED / "gscplus" / "mentions.jsonl"
    work = working_folder(args.workdir, ncbi, gsc)
    if work is None:
        return 0
    from tabulate import tabulate

    from ontolink.indexes.artifact import load_index
    from ontolink.encoders.base import token_key

    loaded = load_index(args.index or hpo_index(work / "idx-hpo"))
    texts = [json.loads(line)["mention"].strip() for path in (ncbi, gsc) for line in open(path, encoding="utf-8")]
    distinct = list(dict.fromkeys(texts))
    keys = {token_key(ids) for ids in loaded.name_index.encoder.tokenize(distinct)}
    named = len(loaded.name_index._known.get_many(list(keys)))
    print(f"{len(texts):,} mentions, {len(distinct):,} distinct texts, {len(keys):,} distinct token sequences, "
          f"{named:,} of them spelled like an indexed name (their stored vector is reused)\n")
    runs = [stage_times(loaded, texts) for _ in range(args.repeat)]
    stages = {stage: float(np.median([run[stage] for run in runs])) for stage in runs[0]}
    total = sum(stages.values())
    print(tabulate([[stage, seconds, 100 * seconds / total] for stage, seconds in stages.items()] +
                   [["all", total, 100.0]], headers=["stage", "seconds (median)", "%"], floatfmt=(".2f", ".2f", ".0f")))
    print(f"{len(texts) / total:,.0f} mentions/s for these stages alone\n")
    timings = [session_ratio(distinct) for _ in range(args.repeat)]
    sessions = timings[0][1]
    medians = {label: float(np.median([run[0][label] for run in timings])) for label in timings[0][0]}
    print(tabulate([[label, seconds] for label, seconds in medians.items()],
                   headers=[f"encoding {len(distinct):,} distinct texts in chunks of 100 ({sessions} threads)",
                            "seconds (median)"], floatfmt=".2f"))
    one, side = medians["one session, threads split"], medians["sessions side by side"]
    print(f"sessions side by side: {one / side:.2f}x as fast")
    return 0


if __name__ == "__main__":
    sys.exit(run_and_record(main, __file__))
