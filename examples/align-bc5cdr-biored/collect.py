"""Collect the example's CV directories into one Markdown report (stdout): python collect.py OUT.

MRR and Hits are in % (as the paper reports them), mean ± std over folds; ranks are over the full
pool of 4,835 pairs. Also: mean D2T MRR per factor level (over the other factors), and wall times.
"""

import json
import sys
from pathlib import Path

out = Path(sys.argv[1] if len(sys.argv) > 1 else "out")


def seconds(name):
    path = out / f"{name}.seconds"
    return float(path.read_text()) if path.exists() else None


def cell(summary, direction, metric, scale=100.0):
    value = summary[direction][metric]
    return f"{value['mean'] * scale:.2f} ± {value['std'] * scale:.2f}"


def rank(summary, direction):
    return f"{summary[direction]['median_rank']['mean']:.0f}"


runs = []
for manifest_path in sorted(out.glob("cv_*/manifest.json")):
    name = manifest_path.parent.name
    manifest = json.loads(manifest_path.read_text())
    parts = name.split("_")[1:]
    if parts == ["baseline"]:
        setting = {"kg": "—", "direction": "verbalized baseline", "compose": "—", "head": "—", "hard": "—"}
    else:
        setting = dict(zip(["kg", "direction", "compose", "head"], parts[:4]))
        setting["hard"] = parts[4] if len(parts) > 4 else "none"
    epochs = [report.get("epochs_run") for report in manifest["fold_reports"] if report.get("epochs_run")]
    train = [report.get("train_seconds") for report in manifest["fold_reports"] if report.get("train_seconds")]
    runs.append({"name": name, **setting, "summary": manifest["summary"], "seconds": seconds(name),
                 "encode": manifest.get("encode_seconds"), "encoded": manifest.get("texts_encoded"),
                 "epochs": sum(epochs) / len(epochs) if epochs else None,
                 "train": sum(train) / len(train) if train else None})

order = {"—": 0, "rdf2vec": 1, "rotate": 2, "tucker": 3}
directions = {"verbalized baseline": 0, "text2kg": 1, "kg2text": 2, "both": 3}
compositions = {"—": 0, "concat": 1, "hadamard": 2, "l1": 3, "l2": 4}
heads = {"—": 0, "linear": 1, "mlp": 2, "cross-attention": 3}
runs.sort(key=lambda run: (order.get(run["kg"], 9), directions.get(run["direction"], 9),
                           compositions.get(run["compose"], 9), heads.get(run["head"], 9), run["hard"] != "none",
                           run["hard"]))

print("# Text ↔ KG alignment, BC5CDR + BioRED (4,835 pairs, 1,689 PubMed groups), 5-fold grouped CV\n")
print("MRR and Hits in %, mean ± std over folds; median rank over the full pool of 4,835 candidates.\n")
print("| KG | direction | compose | head | hard neg. | D2T MRR | D2T H@1 | D2T H@10 | D2T med. rank | D2T macro MRR "
      "| T2D MRR | T2D H@10 | T2D med. rank | epochs | train s/fold | wall s |")
print("|" + "---|" * 16)
def number(value, digits):
    return "" if value is None else f"{value:.{digits}f}"


for run in runs:
    summary = run["summary"]
    print(f"| {run['kg']} | {run['direction']} | {run['compose']} | {run['head']} | {run['hard']} "
          f"| {cell(summary, 'd2t', 'MRR')} | {cell(summary, 'd2t', 'Hits@1')} | {cell(summary, 'd2t', 'Hits@10')} "
          f"| {rank(summary, 'd2t')} | {cell(summary, 'd2t', 'macro_MRR')} | {cell(summary, 't2d', 'MRR')} "
          f"| {cell(summary, 't2d', 'Hits@10')} | {rank(summary, 't2d')} "
          f"| {number(run['epochs'], 0)} | {number(run['train'], 1)} | {number(run['seconds'], 0)} |")

aligned = [run for run in runs if run["kg"] != "—"]
plain = [run for run in aligned if run["hard"] == "none"]


def mean_mrr(selected, direction="d2t"):
    values = [run["summary"][direction]["MRR"]["mean"] * 100 for run in selected]
    return f"{sum(values) / len(values):.2f} (n={len(values)})" if values else "—"


def setting(run):
    return run["direction"], run["compose"], run["head"]


if plain:
    by_kg = {}
    for run in plain:
        by_kg.setdefault(run["kg"], set()).add(setting(run))
    largest = max(len(settings) for settings in by_kg.values())
    full = [kg for kg, settings in by_kg.items() if len(settings) == largest]
    balanced = [run for run in plain if run["kg"] in full]
    print(f"\n## Mean MRR (%) per factor level, over the other factors: the full grid ({', '.join(full)}, "
          "no hard negatives)\n")
    print("| factor | level | D2T MRR | T2D MRR |")
    print("|---|---|---|---|")
    for factor, levels in (("direction", directions), ("compose", compositions), ("head", heads)):
        for level in levels:
            selected = [run for run in balanced if run[factor] == level]
            if selected:
                print(f"| {factor} | {level} | {mean_mrr(selected)} | {mean_mrr(selected, 't2d')} |")
    common = set.intersection(*by_kg.values())
    if len(by_kg) > 1 and common:
        print(f"\n## KG models on the {len(common)} settings all of them ran (mean MRR %)\n")
        print("| KG | D2T MRR | T2D MRR |")
        print("|---|---|---|")
        for kg in sorted(by_kg, key=lambda name: order.get(name, 9)):
            selected = [run for run in plain if run["kg"] == kg and setting(run) in common]
            print(f"| {kg} | {mean_mrr(selected)} | {mean_mrr(selected, 't2d')} |")
    best = max(plain, key=lambda run: run["summary"]["d2t"]["MRR"]["mean"])
    print(f"\nBest aligned setting by D2T MRR: {best['kg']} {best['direction']} {best['compose']} {best['head']} "
          f"({best['summary']['d2t']['MRR']['mean'] * 100:.2f}).")

hard = [run for run in aligned if run["hard"] != "none"]
if hard:
    print("\n## Hard negatives (text2kg, concat, linear)\n")
    print("| KG | hard negatives | D2T MRR | T2D MRR |")
    print("|---|---|---|---|")
    for run in sorted([run for run in plain if (run["direction"], run["compose"], run["head"]) ==
                       ("text2kg", "concat", "linear")] + hard, key=lambda run: (order.get(run["kg"], 9),
                                                                                run["hard"] != "none")):
        print(f"| {run['kg']} | {run['hard']} | {cell(run['summary'], 'd2t', 'MRR')} "
              f"| {cell(run['summary'], 't2d', 'MRR')} |")

print("\n## Wall time per stage on this machine (seconds)\n")
print("| stage | seconds |")
print("|---|---|")
for path in sorted(out.glob("emb_*.seconds")):
    manifest = json.loads((out / path.stem / "manifest.json").read_text())
    print(f"| embed-kg {path.stem[4:]} ({manifest['embedding'].get('model', 'rdf2vec')}, "
          f"{manifest['embedding'].get('epochs_run', manifest['embedding'].get('options', {}).get('epochs'))} epochs"
          + (f", best validation MRR {manifest['embedding']['best_validation_mrr']:.4f}"
             if manifest['embedding'].get('best_validation_mrr') is not None else "")
          + f") | {float(path.read_text()):.0f} |")
encoders = [run for run in runs if run["encoded"]]
for run in encoders:
    print(f"| text encoding in {run['name']} ({run['encoded']} texts, the rest cached) | {run['encode']:.0f} |")
total = sum(run["seconds"] for run in runs if run["seconds"])
print(f"| align cv, all {len(runs)} runs together | {total:.0f} |")
