"""`ontolink eval` as one call: score the files, then write the report, the misses and the plots."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ontolink.core.errors import UsageError
from ontolink.core.io import write_text
from ontolink.evaluation.files import evaluate, write_errors
from ontolink.evaluation.html import html_report
from ontolink.evaluation.plots import save_plots

if TYPE_CHECKING:
    from ontolink.evaluation.options import EvalOptions
    from ontolink.evaluation.results import Evaluation


def eval_files(options: EvalOptions) -> Evaluation:
    """`ontolink eval`: score ``options.predictions`` ('-' or none: stdin) and write the report to
    ``options.output_path`` in ``options.fmt``, the misses to ``options.errors_path`` and the plots to
    ``options.plot_path`` when given; return the Evaluation."""
    files = list(options.predictions) or ["-"]
    if files.count("-") > 1:
        raise UsageError("stdin ('-') can be read only once")
    plot_path, labels = options.plot_path, options.labels
    if plot_path and not plot_path.lower().endswith((".svg", ".png", ".pdf")):
        raise UsageError(f"{plot_path}: the file name must end in .svg, .png or .pdf", option="--plot")
    if labels and len(labels) != len(files):
        raise UsageError(f"given {len(labels)} time(s) for {len(files)} file(s): give one per file", option="--label")
    fmt = options.fmt
    if fmt is None:
        fmt = "table" if options.output_path == "-" and sys.stdout.isatty() else "json"
    evaluation = evaluate(files, options.ontology, gold_path=options.gold_path, spans=options.spans, ks=options.ks,
                          skip_invalid=options.skip_invalid, by_predicate=options.by_predicate,
                          id_prefix=options.id_prefix, related_within=options.related_within, labels=labels,
                          aggregate=options.aggregate, by_field=options.by_field, nil_table=options.nil_table)
    if options.errors_path:
        write_errors(evaluation, options.errors_path)
    if plot_path:
        save_plots(evaluation, plot_path)
    if fmt == "html":
        write_text(options.output_path, html_report(evaluation))
    else:
        write_text(options.output_path, evaluation.render(fmt, options.table_name))
    return evaluation
