"""`ontolink eval --format html`: one self-contained page of an Evaluation.

The page holds the report's tables, its plots as inline SVG and the list of misses (span errors
with --spans) as a table that sorts by any column on a click. Nothing is fetched: no CDN, no
font, no script file; it opens from disk in any browser, with no server.
"""

from __future__ import annotations

import html

from ontolink.evaluation.files import error_records
from ontolink.evaluation.plots import svg_text
from ontolink.evaluation.report import SIDE, _text_rows, combined_footer
from ontolink.evaluation.results import Evaluation

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


# the most misses the page lists (a 10,000-miss table makes a page of megabytes nobody scrolls); --errors has all
MISSES_SHOWN = 1000


def _escape(value):
    return html.escape("" if value is None else str(value))


def _table_html(name, table, combined, labels):
    headers = [table.rows_are] + (["file"] if combined == SIDE else []) + table.metric_names()
    head = "".join(f"<th>{_escape(header)}</th>" for header in headers)
    named = 2 if combined == SIDE else 1  # the row's name (and file) columns, then numbers
    rows = []
    for row in _text_rows(table, combined, labels):
        rows.append("<tr>" + "".join(f"<td>{_escape(text)}</td>" for text in row[:named]) +
                    "".join(f'<td class="number">{_escape(text)}</td>' for text in row[named:]) + "</tr>")
    note = "".join(f'<p class="note">{_escape(line)}</p>' for line in table.note.splitlines())
    return (f'<h2>{_escape(name)}</h2><table class="sortable" id="table-{_escape(name)}"><thead><tr>{head}</tr>'
            f'</thead><tbody>{"".join(rows)}</tbody></table>{note}')


def _entity(entity_id, name):
    if not entity_id:
        return ""
    return f"{entity_id} {name}" if name else str(entity_id)


def _miss_cells(record, columns):
    """(text, numeric) per column of one --errors record."""
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
    return [(values[key], key in ("rank", "score", "steps", "start")) for key, _ in columns]


def _miss_columns(evaluation):
    """The misses table's columns: without is_a relations no class, steps or path (they would stay empty)."""
    if evaluation.kind != "linked":
        return SPAN_COLUMNS if evaluation.has_hierarchy else [column for column in SPAN_COLUMNS
                                                              if column[0] != "hierarchy"]
    if evaluation.has_hierarchy:
        return LINKED_COLUMNS
    return [column for column in LINKED_COLUMNS if column[0] not in ("class", "steps", "path")]


def _why_no_classes(evaluation):
    """The sentence that says why the page has no error classes, or ""."""
    if evaluation.has_hierarchy:
        return ""
    if not evaluation.has_ontology:
        return ("No --ontology: gold ids are compared as given, named only by the candidates, and the misses have "
                "no error class (too-general, sibling...), which come from an ontology's is_a relations.")
    return ("This ontology has no is_a relations (no entity has a parent), so the misses have no error class "
            "(too-general, too-specific, sibling...) and no is_a path, and there is no errors table.")


def shown_misses(evaluation, cap=MISSES_SHOWN):
    """(records shown, total): the first ``cap`` // files misses of each file, so every file is seen."""
    records = list(error_records(evaluation))
    per_file = max(cap // max(len(evaluation.runs), 1), 1)
    taken: dict = {}
    shown = []
    for record in records:
        taken[record["file"]] = taken.get(record["file"], 0) + 1
        if taken[record["file"]] <= per_file:
            shown.append(record)
    return shown, len(records)


def _misses_html(evaluation):
    records, total = shown_misses(evaluation)
    title = "Misses (top-1 wrong)" if evaluation.kind == "linked" else "Span errors"
    columns = _miss_columns(evaluation)
    head = "".join(f"<th>{_escape(label)}</th>" for _, label in columns)
    rows = []
    for record in records:
        cells = _miss_cells(record, columns)
        rows.append("<tr>" + "".join(
            f'<td class="number" data-sort="{_escape(text)}">{_escape(text)}</td>' if numeric else
            f"<td>{_escape(text)}</td>" for text, numeric in cells) + "</tr>")
    capped = ""
    if len(records) < total:
        per_file = max(MISSES_SHOWN // max(len(evaluation.runs), 1), 1)
        capped = (f"<p class=\"note\" id=\"misses-capped\">{len(records):,} of {total:,} shown: the first "
                  f"{per_file:,} of each file (the page shows at most {MISSES_SHOWN:,}); <code>--errors FILE.jsonl"
                  "</code> writes every one.</p>")
    return (f"<h2>{_escape(title)}: {total:,}</h2>{capped}<p class=\"note\">Click a column to sort by it.</p>"
            f'<table class="sortable" id="misses"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody>'
            "</table>")


def _inline_svg(svg):
    """An SVG document as an element to put in HTML: its XML declaration, doctype and RDF metadata left out."""
    svg = svg[svg.find("<svg"):]
    start, end = svg.find("<metadata>"), svg.find("</metadata>")
    return svg[:start] + svg[end + len("</metadata>"):] if 0 <= start < end else svg


def html_report(evaluation: Evaluation) -> str:
    """The whole page as text."""
    combined, labels = evaluation.combined, evaluation.labels
    files = ", ".join(labels)
    parts = [f"<h1>ontolink eval: {_escape(files)}</h1>"]
    if combined is not None:
        reason = evaluation.combination.reason if evaluation.combination is not None else ""
        unit = next(iter(evaluation.tables.values())).unit
        footer = combined_footer(combined, len(evaluation.files), unit, reason)
        parts.append(f'<p class="note" id="combined">{_escape(footer)}</p>')
    parts.extend(_table_html(name, table, combined, labels) for name, table in evaluation.tables.items())
    if evaluation.kind in ("linked", "spans"):
        why = _why_no_classes(evaluation)
        if why:
            parts.append(f'<p class="note" id="no-classes">{_escape(why)}</p>')
        parts.append(f"<h2>Plots</h2><figure>{_inline_svg(svg_text(evaluation))}</figure>")
        parts.append(_misses_html(evaluation))
    title = _escape(f"ontolink eval: {files}")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{title}</title><style>{_STYLE}</style></head><body>{''.join(parts)}"
            f"<script>{_SCRIPT}</script></body></html>")
