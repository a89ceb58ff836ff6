"""Metric tables: tabulate for people, JSON/TSV for pipes.

A report is one or more named tables. Each Table keeps every file's own values ({row: {metric: value}},
``per_file``) and their mean ± std ({row: {metric: {mean, std}}}, ``summary``); how several files are
shown is the report's ``combined``: ``"mean"`` (mean ± std: seeds, folds) or ``"side"`` (one row per
file and table row, the file in its own column). JSON holds every table (a single file's values as
plain numbers); TSV and Markdown print one table per stream (the first, or the one asked for by name),
so a pipe never has to split them; the terminal table prints each under its name.

A metric a row does not have (R@64 of a file linked 10 deep, R@1 of the NIL gold row) is "n/a" in
text and null in JSON; a metric over no mention (an empty HO group) is "-" in text and null in JSON.
"""

import json
import math
from dataclasses import dataclass, field

from ontolink.core.errors import InputError
from ontolink.formats.tab_rows import FIELD_BREAKS

FORMATS = ("table", "markdown", "tsv", "json")
NOT_AVAILABLE = "n/a"
# metrics that count things: integers in JSON and text (a mean over seeds too when it is whole)
COUNTS = ("n", "count", "gold", "predicted", "nil_gold", "nil_predicted", "linkable")
MEAN = "mean"  # several files shown as mean ± std
SIDE = "side"  # several files shown side by side


def _cell(value, metric, several):
    if value is None:
        return NOT_AVAILABLE
    if metric in COUNTS or metric.startswith("gold_"):
        mean = value["mean"]
        if mean != mean:
            return "-"
        return str(int(mean)) if float(mean).is_integer() else f"{mean:.1f}"
    if value["mean"] != value["mean"]:  # NaN: an empty category
        return "-"
    if several:
        return f"{value['mean']:.3f} ± {value['std']:.3f}"
    return f"{value['mean']:.3f}"


@dataclass
class Table:
    """One table of a report: ``summary`` is {row: {metric: {mean, std}}} and ``per_file`` the files' own
    {row: {metric: value}} (in the report's file order; empty: only the summary is known); ``rows_are``
    heads the first column; ``note`` is printed under it for people (table and Markdown), never in TSV or
    JSON; ``columns`` the metrics in order (default: every metric of any row, in order of appearance)."""

    summary: dict
    rows_are: str = "mentions"
    cell: object = _cell
    unit: str = "files"
    note: str = ""
    columns: list = field(default_factory=list)
    per_file: list = field(default_factory=list)

    def metric_names(self):
        if self.columns:
            return list(self.columns)
        names: list = []
        for metrics in self.summary.values():
            names.extend(name for name in metrics if name not in names and not name.startswith("gold_"))
        return names

    def rows(self):
        names: list = list(self.summary)
        for metrics in self.per_file:
            names.extend(name for name in metrics if name not in names)
        return names


def _json_number(value, metric=""):
    if isinstance(value, float) and math.isnan(value):
        return None
    if metric in COUNTS and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def plain_values(table, combined, labels):
    """A table for JSON: the plain values of a single file; {mean, std} over several files (``combined``
    MEAN); {label: value} over several shown side by side. A metric a row lacks is null."""
    metrics = table.metric_names()
    result: dict = {}
    for row in table.rows():
        if combined == SIDE:
            result[row] = {metric: {label: _json_number(values.get(row, {}).get(metric), metric)
                                    for label, values in zip(labels, table.per_file)} for metric in metrics}
        elif combined == MEAN:
            result[row] = {metric: ({key: _json_number(number, metric if key == "mean" else "")
                                     for key, number in table.summary[row][metric].items()}
                                    if metric in table.summary.get(row, {}) else None) for metric in metrics}
        else:
            result[row] = {metric: (_json_number(table.summary[row][metric]["mean"], metric)
                                    if metric in table.summary.get(row, {}) else None) for metric in metrics}
    return result


def _text_rows(table, combined, labels):
    """[[row, (file,) cell, ...]] of a table as people read it."""
    metrics = table.metric_names()
    rows = []
    for row in table.rows():
        if combined == SIDE:
            for label, values in zip(labels, table.per_file):
                found = values.get(row, {})
                rows.append([row, label] + [table.cell({"mean": found[metric], "std": 0.0} if metric in found
                                                       else None, metric, False) for metric in metrics])
        else:
            found = table.summary.get(row, {})
            rows.append([row] + [table.cell(found.get(metric), metric, combined == MEAN) for metric in metrics])
    return rows


def _text_table(table, fmt, combined, labels):
    from tabulate import tabulate

    headers = [table.rows_are] + (["file"] if combined == SIDE else []) + table.metric_names()
    rows = _text_rows(table, combined, labels)
    if fmt == "tsv":  # a tab or line break in a row's name (an --by value) would shift or split its row
        return "\n".join("\t".join(FIELD_BREAKS.sub(" ", str(cell)) for cell in row) for row in [headers] + rows)
    if fmt == "markdown":  # a "|" in a row's name (--by sources: "ner|dict") would end its cell
        rows = [[str(cell).replace("|", "\\|") for cell in row] for row in rows]
    return tabulate(rows, headers=headers, tablefmt="github" if fmt == "markdown" else "simple",
                    disable_numparse=True)


def combined_footer(combined, count, unit, reason=""):
    """The line under the tables that says how several files are shown, and why."""
    if combined == MEAN:
        return f"mean ± std over {count} {unit}" + (f" ({reason})" if reason else "")
    if combined == SIDE:
        return f"{count} {unit} side by side" + (f" ({reason})" if reason else "")
    return ""


def render_report(tables, fmt, files, table_name=None, combined=None, labels=None, reason=""):
    """Render {name: Table} in one of FORMATS. ``combined``: None for one file, MEAN or SIDE for several
    (default MEAN when there are several files); ``labels`` name the files side by side (default: the
    file names); ``reason`` says in the footer why they are combined so. ``table_name`` picks the table of
    TSV / Markdown (default: the first); the terminal table shows every table, each after its name."""
    files = [str(path) for path in files]
    labels = [str(label) for label in labels] if labels else files
    if len(files) <= 1:
        combined = None
    elif combined is None:
        combined = MEAN
    if fmt == "json":
        report = {"files": files}
        if combined is not None:
            report |= {"labels": labels, "combined": "mean ± std" if combined == MEAN else "side by side"}
        report.update((name, plain_values(table, combined, labels)) for name, table in tables.items())
        return json.dumps(report, indent=2)
    if table_name is not None and table_name not in tables:
        raise InputError(f"--table {table_name}: this report has no such table (it has: {', '.join(tables)})")
    unit = next(iter(tables.values())).unit
    footer = combined_footer(combined, len(files), unit, reason)
    footer = f"\n\n{footer}" if footer and fmt != "tsv" else ""
    if fmt in ("tsv", "markdown"):
        name = table_name or next(iter(tables))
        chosen = tables[name]
        note = f"\n\n{chosen.note}" if chosen.note and fmt == "markdown" else ""
        return _text_table(chosen, fmt, combined, labels) + note + footer
    shown = {table_name: tables[table_name]} if table_name else tables
    parts = []
    for name, table in shown.items():
        text = _text_table(table, fmt, combined, labels)
        if len(shown) > 1:
            text = f"{name}\n{text}"
        parts.append(text + (f"\n{table.note}" if table.note else ""))
    return "\n\n".join(parts) + footer


def render(summary, fmt, files, rows_are="mentions", unit="files", cell=_cell):
    """Render one table {group: {metric: {mean, std}}} in one of FORMATS (JSON under "metrics")."""
    return render_report({"metrics": Table(summary, rows_are=rows_are, cell=cell, unit=unit)}, fmt, files)
