"""Metric tables: tabulate for people, JSON/TSV for pipes."""

import json

FORMATS = ("table", "markdown", "tsv", "json")


def _cell(value, metric, several):
    if metric == "n" or metric.startswith("gold_"):
        mean = value["mean"]
        return str(int(mean)) if float(mean).is_integer() else f"{mean:.1f}"
    if value["mean"] != value["mean"]:  # NaN: an empty category
        return "-"
    if several:
        return f"{value['mean']:.3f} ± {value['std']:.3f}"
    return f"{value['mean']:.3f}"


def render(summary, fmt, files, rows_are="mentions", unit="files", cell=_cell):
    """Render {group: {metric: {mean, std}}} in one of FORMATS; the first column says what the rows
    scored (``rows_are``) and several runs are averaged over ``unit``."""
    if fmt == "json":
        return json.dumps({"files": [str(path) for path in files], "metrics": summary}, indent=2)
    from tabulate import tabulate

    several = len(files) > 1
    metrics = [metric for metric in next(iter(summary.values())) if not metric.startswith("gold_")]
    rows = [[group] + [cell(summary[group][metric], metric, several) for metric in metrics] for group in summary]
    headers = [rows_are] + metrics
    if fmt == "tsv":
        return "\n".join("\t".join(map(str, row)) for row in [headers] + rows)
    text = tabulate(rows, headers=headers, tablefmt="github" if fmt == "markdown" else "simple",
                    disable_numparse=True)
    if several:
        text += f"\n\nmean ± std over {len(files)} {unit}"
    return text
