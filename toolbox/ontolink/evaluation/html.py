"""`ontolink eval --format html`: one self-contained page of an Evaluation.

The page holds the report's tables, its plots as inline SVG and the list of misses (span errors
with --spans) as a table that sorts by any column on a click. Nothing is fetched: no CDN, no
font, no script file; it opens from disk in any browser, with no server.
"""

from __future__ import annotations

import html
import math

from ontolink.evaluation.files import error_records
from ontolink.evaluation.results import Evaluation
from ontolink.evaluation.plots import svg_text

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
table.sortable th { cursor: pointer; background: #f3f3f3; user-select: none; }
table.sortable th[aria-sort="ascending"]::after { content: " \\25B2"; }
table.sortable th[aria-sort="descending"]::after { content: " \\25BC"; }
p.note { color: #555; font-size: 0.85em; }
figure { margin: 0; } figure svg { max-width: 100%; height: auto; }
"""

# Sorts a table.sortable by the clicked column: numbers (data-sort) as numbers, the rest as text;
# a second click reverses. Empty cells go last.
_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (header, column) {
    header.addEventListener("click", function () {
      var descending = header.getAttribute("aria-sort") === "ascending";
      table.querySelectorAll("th").forEach(function (other) { other.removeAttribute("aria-sort"); });
      header.setAttribute("aria-sort", descending ? "descending" : "ascending");
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      function key(row) {
        var cell = row.cells[column];
        var value = cell.getAttribute("data-sort");
        if (value === null) { value = cell.textContent; }
        if (value === "") { return null; }
        var number = Number(value);
        return isNaN(number) ? value.toLowerCase() : number;
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x === null || y === null) { return (x === null) - (y === null); }
        if (typeof x !== typeof y) { x = String(x); y = String(y); }
        var order = x < y ? -1 : x > y ? 1 : 0;
        return descending ? -order : order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""

LINKED_COLUMNS = [("file", "file"), ("mention", "mention"), ("context", "context"), ("gold", "gold"),
                  ("predicted", "predicted"), ("rank", "rank of gold"), ("score", "score"), ("class", "class"),
                  ("steps", "steps"), ("path", "is_a path")]
SPAN_COLUMNS = [("file", "file"), ("error", "error"), ("class", "class"), ("doc_id", "document"),
                ("start", "start"), ("mention", "mention"), ("context", "context"), ("gold", "gold"),
                ("predicted", "predicted"), ("score", "score"), ("hierarchy", "is_a class")]


def _escape(value):
    return html.escape("" if value is None else str(value))


def _table_html(name, table, several):
    summary = table.summary
    metrics = table.columns or [metric for metric in next(iter(summary.values())) if not metric.startswith("gold_")]
    empty = {"mean": math.nan, "std": math.nan}
    head = "".join(f"<th>{_escape(header)}</th>" for header in [table.rows_are] + metrics)
    rows = []
    for group, values in summary.items():
        cells = "".join(f'<td class="number">{_escape(table.cell(values.get(metric, empty), metric, several))}</td>'
                        for metric in metrics)
        rows.append(f"<tr><td>{_escape(group)}</td>{cells}</tr>")
    note = f'<p class="note">{_escape(table.note)}</p>' if table.note else ""
    return (f'<h2>{_escape(name)}</h2><table class="sortable" id="table-{_escape(name)}"><thead><tr>{head}</tr>'
            f'</thead><tbody>{"".join(rows)}</tbody></table>{note}')


def _entity(entity_id, name):
    if not entity_id:
        return ""
    return f"{entity_id} {name}" if name else str(entity_id)


def _miss_cells(record, kind):
    """(text, sort key or None) per column of one --errors record."""
    gold = " | ".join(record.get("gold") or [])
    gold_text = f"{gold} {record.get('gold_name') or ''}".strip()
    predicted = _entity(record.get("predicted"), record.get("predicted_name"))
    score = record.get("score")
    values = {"file": record.get("file"), "mention": record.get("mention"), "context": record.get("context"),
              "gold": gold_text, "predicted": predicted, "rank": record.get("rank"),
              "score": f"{score:.3f}" if isinstance(score, (int, float)) else score, "class": record.get("class"),
              "steps": record.get("steps"), "error": record.get("error"), "doc_id": record.get("doc_id"),
              "start": record.get("start"), "hierarchy": record.get("hierarchy"),
              "path": " → ".join(node["name"] for node in record.get("path") or [])}
    columns = LINKED_COLUMNS if kind == "linked" else SPAN_COLUMNS
    return [(values[key], key in ("rank", "score", "steps", "start")) for key, _ in columns]


def _misses_html(evaluation):
    records = list(error_records(evaluation))
    title = "Misses (top-1 wrong)" if evaluation.kind == "linked" else "Span errors"
    columns = LINKED_COLUMNS if evaluation.kind == "linked" else SPAN_COLUMNS
    head = "".join(f"<th>{_escape(label)}</th>" for _, label in columns)
    rows = []
    for record in records:
        cells = _miss_cells(record, evaluation.kind)
        rows.append("<tr>" + "".join(
            f'<td class="number" data-sort="{_escape(text)}">{_escape(text)}</td>' if numeric else
            f"<td>{_escape(text)}</td>" for text, numeric in cells) + "</tr>")
    return (f"<h2>{_escape(title)}: {len(records)}</h2><p class=\"note\">Click a column to sort by it.</p>"
            f'<table class="sortable" id="misses"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody>'
            "</table>")


def _inline_svg(svg):
    """An SVG document as an element to put in HTML: its XML declaration, doctype and RDF metadata left out."""
    svg = svg[svg.find("<svg"):]
    start, end = svg.find("<metadata>"), svg.find("</metadata>")
    return svg[:start] + svg[end + len("</metadata>"):] if 0 <= start < end else svg


def html_report(evaluation: Evaluation) -> str:
    """The whole page as text."""
    several = len(evaluation.files) > 1
    files = ", ".join(run.label for run in evaluation.runs) or ", ".join(map(str, evaluation.files))
    parts = [f"<h1>ontolink eval: {_escape(files)}</h1>"]
    if several:
        parts.append(f'<p class="note">mean ± std over {len(evaluation.files)} files</p>')
    parts.extend(_table_html(name, table, several) for name, table in evaluation.tables.items())
    if evaluation.kind in ("linked", "spans"):
        parts.append(f"<h2>Plots</h2><figure>{_inline_svg(svg_text(evaluation))}</figure>")
        parts.append(_misses_html(evaluation))
    title = _escape(f"ontolink eval: {files}")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{title}</title><style>{_STYLE}</style></head><body>{''.join(parts)}"
            f"<script>{_SCRIPT}</script></body></html>")
