"""Metric tables: tabulate for people, JSON/TSV for pipes.

A report is one or more named tables ({group: {metric: {mean, std}}}). JSON holds them all, a
single run's values as plain numbers (mean ± std only over several runs); TSV and Markdown print
one table per stream (the first, or the one asked for by name), so a pipe never has to split them;
the terminal table prints each under its name.
"""

import json
import math
from dataclasses import dataclass, field

from ontolink.core.errors import InputError

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


@dataclass
class Table:
    """One table of a report: ``summary`` is {row: {metric: {mean, std}}}; ``rows_are`` heads the first
    column; ``note`` is printed under it for people (table and Markdown), never in TSV or JSON."""

    summary: dict
    rows_are: str = "mentions"
    cell: object = _cell
    unit: str = "files"
    note: str = ""
    columns: list = field(default_factory=list)  # metric order when rows differ; default: the first row's


def _json_number(value):
    return None if isinstance(value, float) and math.isnan(value) else value


def plain_values(summary, several):
    """``summary`` for JSON: {mean, std} over several runs, the plain value of a single one; NaN as null."""
    if several:
        return {group: {metric: {key: _json_number(number) for key, number in value.items()}
                        for metric, value in metrics.items()} for group, metrics in summary.items()}
    return {group: {metric: _json_number(value["mean"]) for metric, value in metrics.items()}
            for group, metrics in summary.items()}


def _text_table(table, fmt, several):
    from tabulate import tabulate

    summary = table.summary
    metrics = table.columns or [metric for metric in next(iter(summary.values())) if not metric.startswith("gold_")]
    empty = {"mean": math.nan, "std": math.nan}
    rows = [[group] + [table.cell(summary[group].get(metric, empty), metric, several) for metric in metrics]
            for group in summary]
    headers = [table.rows_are] + metrics
    if fmt == "tsv":
        return "\n".join("\t".join(map(str, row)) for row in [headers] + rows)
    return tabulate(rows, headers=headers, tablefmt="github" if fmt == "markdown" else "simple",
                    disable_numparse=True)


def render_report(tables, fmt, files, table_name=None):
    """Render {name: Table} in one of FORMATS. ``table_name`` picks the table of TSV / Markdown (default:
    the first); the terminal table shows every table, each after its name."""
    files = [str(path) for path in files]
    several = len(files) > 1
    if fmt == "json":
        report = {"files": files}
        report.update((name, plain_values(table.summary, several)) for name, table in tables.items())
        return json.dumps(report, indent=2)
    if table_name is not None and table_name not in tables:
        raise InputError(f"--table {table_name}: this report has no such table (it has: {', '.join(tables)})")
    unit = next(iter(tables.values())).unit
    footer = f"\n\nmean ± std over {len(files)} {unit}" if several and fmt != "tsv" else ""
    if fmt in ("tsv", "markdown"):
        name = table_name or next(iter(tables))
        chosen = tables[name]
        note = f"\n\n{chosen.note}" if chosen.note and fmt == "markdown" else ""
        return _text_table(chosen, fmt, several) + note + footer
    shown = {table_name: tables[table_name]} if table_name else tables
    parts = []
    for name, table in shown.items():
        text = _text_table(table, fmt, several)
        if len(shown) > 1:
            text = f"{name}\n{text}"
        parts.append(text + (f"\n{table.note}" if table.note else ""))
    return "\n\n".join(parts) + footer


def render(summary, fmt, files, rows_are="mentions", unit="files", cell=_cell):
    """Render one table {group: {metric: {mean, std}}} in one of FORMATS (JSON under "metrics")."""
    return render_report({"metrics": Table(summary, rows_are=rows_are, cell=cell, unit=unit)}, fmt, files)
