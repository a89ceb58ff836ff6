"""Print the triple-encoding comparison (Markdown, stdout): python collect_hybrid.py OUT.

Rows: the verbalised baseline (frozen encoder, no training), the aligned KG-only models (cv_KG_*_concat_linear
that ran), and every enc_ENCODING_DIRECTION_COMBINE run (`align cv --triple-encoding verbalized|hybrid`).
MRR and Hits in %, mean ± std over the 5 grouped folds; median ranks over the full pool. Then MRR per
predicate (mean ± std over folds, from the fold files' Retrieved records) for the baseline, the best KG-only
run and the best run of each encoding, both directions.
"""

import gzip
import json
import sys
from pathlib import Path

from ontolink.evaluation.retrieval import aggregate_folds, retrieval_metrics

out = Path(sys.argv[1] if len(sys.argv) > 1 else "out")


def cell(entry, scale=100.0):
    return f"{entry['mean'] * scale:.2f} ± {entry['std'] * scale:.2f}"


def load(name):
    manifest = json.loads((out / name / "manifest.json").read_text())
    seconds = out / f"{name}.seconds"
    train = [report["train_seconds"] for report in manifest["fold_reports"] if report.get("train_seconds")]
    epochs = [report["epochs_run"] for report in manifest["fold_reports"] if report.get("epochs_run")]
    return {"name": name, "manifest": manifest, "summary": manifest["summary"],
            "seconds": float(seconds.read_text()) if seconds.exists() else None,
            "train": sum(train) / len(train) if train else None,
            "epochs": sum(epochs) / len(epochs) if epochs else None}


runs = []
if (out / "cv_baseline" / "manifest.json").exists():
    runs.append({**load("cv_baseline"), "encoding": "verbalized baseline (untrained)", "kg": "—",
                 "direction": "—", "combine": "—", "hard": "—"})
for path in sorted(out.glob("cv_*_concat_linear/manifest.json")):
    kg, direction = path.parent.name.split("_")[1:3]
    runs.append({**load(path.parent.name), "encoding": "kg", "kg": kg, "direction": direction, "combine": "—",
                 "hard": "none"})
for path in sorted(out.glob("enc_*/manifest.json")):
    run = load(path.parent.name)
    manifest = run["manifest"]
    kg = Path(manifest["kg"]["directory"]).name.removeprefix("emb_") if manifest.get("kg") else "—"
    runs.append({**run, "encoding": manifest["triple_encoding"], "kg": kg, "direction": manifest["direction"],
                 "combine": manifest.get("combine") or "—",
                 "hard": manifest["training"]["options"]["hard_negatives"]})
if not runs:
    sys.exit(f"no CV runs under {out}")


def number(value, digits):
    return "" if value is None else f"{value:.{digits}f}"


print("## Triple encodings: verbalised, KG, hybrid (5-fold grouped CV, linear head, concat composition)\n")
print("| triple encoding | KG | direction | combine | hard neg. | D2T MRR | D2T H@1 | D2T H@10 | D2T med. rank "
      "| D2T macro MRR | T2D MRR | T2D H@1 | T2D H@10 | T2D med. rank | T2D macro MRR | epochs | train s/fold "
      "| wall s |")
print("|" + "---|" * 18)
for run in runs:
    d2t, t2d = run["summary"]["d2t"], run["summary"]["t2d"]
    print(f"| {run['encoding']} | {run['kg']} | {run['direction']} | {run['combine']} | {run['hard']} "
          f"| {cell(d2t['MRR'])} | {cell(d2t['Hits@1'])} | {cell(d2t['Hits@10'])} | {d2t['median_rank']['mean']:.0f} "
          f"| {cell(d2t['macro_MRR'])} | {cell(t2d['MRR'])} | {cell(t2d['Hits@1'])} | {cell(t2d['Hits@10'])} "
          f"| {t2d['median_rank']['mean']:.0f} | {cell(t2d['macro_MRR'])} "
          f"| {number(run['epochs'], 0)} | {number(run['train'], 1)} | {number(run['seconds'], 0)} |")


def per_predicate(run):
    """{"d2t Association": {metric: {mean, std}}, ...} over the run's folds."""
    folds = []
    for fold in range(1, run["manifest"]["folds"] + 1):
        with gzip.open(out / run["name"] / f"fold-{fold}.jsonl.gz", "rt", encoding="utf-8") as handle:
            records = [json.loads(line) for line in handle]
        folds.append(retrieval_metrics(records, by_predicate=True))
    return aggregate_folds(folds)


def best(selected):
    return max(selected, key=lambda run: run["summary"]["d2t"]["MRR"]["mean"]) if selected else None


chosen = [run for run in runs if run["name"] == "cv_baseline"]
for encoding in ("kg", "verbalized", "hybrid"):
    top = best([run for run in runs if run["encoding"] == encoding and run["hard"] == "none"])
    if top:
        chosen.append(top)
tables = [(run, per_predicate(run)) for run in chosen]
label = {run["name"]: f"{run['encoding']}" + ("" if run["direction"] == "—" else
                                             f" {run['direction']}" + ("" if run["combine"] == "—"
                                                                        else f" {run['combine']}"))
         for run, _ in tables}
counts = {}
for key, entry in tables[0][1].items():
    if key.startswith("d2t "):
        counts[key[4:]] = entry["n"]["mean"] if isinstance(entry.get("n"), dict) else entry.get("n")
predicates = sorted({key.split(" ", 1)[1] for _, table in tables for key in table if " " in key},
                    key=lambda name: (-(counts.get(name) or 0), name))
for direction in ("d2t", "t2d"):
    print(f"\n## {direction.upper()} MRR (%) per predicate, mean ± std over folds\n")
    print("| predicate | test pairs / fold | " + " | ".join(label[run["name"]] for run, _ in tables) + " |")
    print("|---|---|" + "---|" * len(tables))
    for predicate in predicates:
        cells = [cell(table[f"{direction} {predicate}"]["MRR"]) if f"{direction} {predicate}" in table else "—"
                 for _, table in tables]
        count = counts.get(predicate)
        print(f"| {predicate} | {number(count, 0)} | " + " | ".join(cells) + " |")
    print("| **macro MRR** | | " + " | ".join(cell(run["summary"][direction]["macro_MRR"]) for run, _ in tables)
          + " |")
