"""`ontolink eval --plot FILE`: the pictures of an Evaluation, drawn by matplotlib (the [plot] extra).

Linked mentions: Recall@K of every file on one axis (K log-scaled), R@1 by HO / LO / NO as grouped
bars, the share of each error class of the misses, and per file the distribution of top-1 scores of
right and wrong answers (with the NIL threshold the file was linked with, when it marks NIL).
Spans: P / R / F1 per file and matching, and the count of each span class per file.

Only the Agg backend is used (no display); matplotlib is imported here and nowhere else, so `eval`
without --plot or --format html never loads it.
"""

from __future__ import annotations

import io
import math
from typing import TYPE_CHECKING

from ontolink.core.errors import OntolinkError
from ontolink.core.cache import write_atomically
from ontolink.core.extras import require

if TYPE_CHECKING:
    from ontolink.evaluation.results import Evaluation

FORMATS = (".svg", ".png", ".pdf")


def _figure_class():
    require("matplotlib", purpose="--plot and --format html")
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "ontolink"  # the same SVG ids for the same report
    from matplotlib.figure import Figure

    return Figure


def _recall_curve(axis, evaluation):
    from ontolink.evaluation.rank_metrics import recall_curve  # late: loads numpy

    largest = max(evaluation.ks) if evaluation.ks else 64
    for run in evaluation.runs:
        # each curve stops at the candidates its file holds: drawn flat past them it would read as found nothing
        depth = min(largest, run.depth) if run.depth else largest
        curve = recall_curve(run.ranks, range(1, depth + 1))
        label = run.label if depth >= largest else f"{run.label} ({depth} candidates)"
        axis.plot([k for k, _ in curve], [value for _, value in curve], label=label, linewidth=1.5,
                  marker="|" if depth < largest else None, markevery=[len(curve) - 1])
    axis.set_xscale("log")
    axis.set_xticks([k for k in (1, 2, 5, 10, 20, 50, 100, 200, 500) if k <= largest] + [largest])
    axis.get_xaxis().set_major_formatter("{x:.0f}")
    axis.minorticks_off()
    axis.set_xlabel("K")
    axis.set_ylabel("Recall@K")
    axis.set_title("Recall@K")
    axis.set_ylim(0, 1.02)
    axis.grid(True, alpha=0.3)
    axis.legend(fontsize="small")


def _grouped_bars(axis, groups, series, title, ylabel, ylim=None):
    """Bars of ``series`` [(label, [value per group])] side by side within each of ``groups``."""
    width = 0.8 / max(len(series), 1)
    for index, (label, values) in enumerate(series):
        positions = [group + (index - (len(series) - 1) / 2) * width for group in range(len(groups))]
        axis.bar(positions, [0 if value is None or value != value else value for value in values], width,
                 label=label)
    axis.set_xticks(range(len(groups)))
    axis.set_xticklabels(groups, rotation=30 if max(map(len, groups)) > 8 else 0, ha="right"
                         if max(map(len, groups)) > 8 else "center", fontsize="small")
    axis.set_title(title)
    axis.set_ylabel(ylabel)
    if ylim:
        axis.set_ylim(*ylim)
    axis.grid(True, axis="y", alpha=0.3)
    axis.legend(fontsize="small")


def _scores(axis, run):
    import numpy as np

    right = [score for score, hit, _ in run.top_scores if hit and score is not None]
    wrong = [score for score, hit, _ in run.top_scores if not hit and score is not None]
    values = right + wrong
    if not values:
        axis.set_title(f"{run.label}: no scores")
        return
    bins = np.linspace(min(values), max(values) + 1e-9, 31)
    axis.hist(right, bins=bins, alpha=0.6, label=f"top-1 right ({len(right)})", color="tab:green")
    axis.hist(wrong, bins=bins, alpha=0.6, label=f"top-1 wrong ({len(wrong)})", color="tab:red")
    if run.nil_threshold is not None:
        axis.axvline(run.nil_threshold, color="black", linestyle="--", linewidth=1,
                     label=f"NIL threshold ({run.nil_threshold:.3f})")
    axis.set_xlabel("top-1 score")
    axis.set_ylabel("mentions")
    axis.set_title(f"Top-1 scores: {run.label}")
    axis.legend(fontsize="small")


def linked_figure(evaluation):
    from ontolink.evaluation.evaluate import CATEGORIES  # late: loads numpy

    runs = evaluation.runs
    with_categories = any(run.categories for run in runs)
    with_classes = any(run.classes for run in runs)
    panels = 1 + with_categories + with_classes + len(runs)
    columns = panel_columns(panels)
    figure = _figure_class()(figsize=(5.2 * columns, 4.2 * math.ceil(panels / columns)), layout="constrained")
    grid = figure.add_gridspec(math.ceil(panels / columns), columns)
    slots = iter(range(panels))  # panels one after another, row by row: no slot left empty before the last

    def axis():
        slot = next(slots)
        return figure.add_subplot(grid[slot // columns, slot % columns])

    _recall_curve(axis(), evaluation)
    if with_categories:
        _grouped_bars(axis(), list(CATEGORIES),
                      [(run.label, [run.metrics.get(group, {}).get("R@1") for group in CATEGORIES]) for run in runs],
                      "R@1 by overlap with the gold name", "R@1", (0, 1.02))
    if with_classes:
        classes = [name for name in runs[0].classes]
        _grouped_bars(axis(), classes,
                      [(run.label, [run.classes.get(name, 0) / max(sum(run.classes.values()), 1) for name in classes])
                       for run in runs], "Top-1 misses by is_a class", "share of misses", (0, 1.02))
    for run in runs:
        _scores(axis(), run)
    return figure


def panel_columns(panels):
    """Columns of a grid of ``panels``: 3 (or 2, or 4) whichever leaves the fewest empty slots in its last row,
    3 on a tie; one row when there are at most 3."""
    if panels <= 3:
        return panels
    return min((3, 2, 4), key=lambda columns: (-panels) % columns)


def span_figure(evaluation):
    runs = evaluation.runs
    figure = _figure_class()(figsize=(15, 4.5), layout="constrained")
    matchings = ["strict", "overlap", "span"]
    axes = [figure.add_subplot(1, 3, position) for position in (1, 2, 3)]
    series = [(f"{run.label} {measure}", [run.metrics[matching][measure] for matching in matchings])
              for run in runs for measure in ("P", "R", "F1")]
    _grouped_bars(axes[0], matchings, series, "Precision / recall / F1", "value", (0, 1.02))
    for axis, side, title in ((axes[1], "predicted/", "Predicted spans by class"),
                              (axes[2], "gold/", "Gold mentions by class")):
        names = [name for name in runs[0].classes if name.startswith(side) and name.count("/") == 1]
        _grouped_bars(axis, [name.removeprefix(side) for name in names],
                      [(run.label, [run.classes.get(name, 0) for name in names]) for run in runs], title, "count")
    return figure


def evaluation_figure(evaluation):
    if evaluation.kind == "linked":
        return linked_figure(evaluation)
    if evaluation.kind == "spans":
        return span_figure(evaluation)
    raise OntolinkError("--plot draws linked mentions and --spans; retrieved records have no plots yet")


def save_plots(evaluation: Evaluation, path: str) -> None:
    """Draw the Evaluation into ``path``, its format from the extension (.svg, .png, .pdf)."""
    from pathlib import Path

    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise OntolinkError(f"--plot {path}: the file name must end in .svg, .png or .pdf")
    figure = evaluation_figure(evaluation)
    metadata = {"Date": None} if suffix in (".svg", ".pdf") else {}  # no timestamp: same input, same file
    write_atomically(path, lambda temporary: figure.savefig(temporary, format=suffix[1:], dpi=100,
                                                            metadata=metadata), output=True)


def svg_text(evaluation: Evaluation) -> str:
    """The Evaluation's plots as an SVG document (text), for the HTML report."""
    buffer = io.BytesIO()
    evaluation_figure(evaluation).savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue().decode("utf-8")
