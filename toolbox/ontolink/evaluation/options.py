"""The options of `ontolink eval`, one typed object with each default given here once: the command line shows
these defaults and passes the object to ``ontolink.evaluation.run.eval_files``. Cheap to import: `--help`
reads it without loading what the command runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ontolink.ontology.hierarchy import DEFAULT_WITHIN
from ontolink.core.options import STDIO

if TYPE_CHECKING:
    from ontolink.ontology import OntologySource


@dataclass(frozen=True)
class EvalOptions:
    """Everything `ontolink eval` is asked, each default given here once."""

    predictions: tuple[str, ...] = ()  # Linked-mention or Retrieved files; none: stdin
    ontology: OntologySource | None = None
    gold_path: str | None = None
    id_prefix: str | None = None
    spans: bool = False
    ks: str | None = None  # comma-separated; None: the kind's own Ks
    fmt: str | None = None  # table, json, markdown, tsv or html; None: table on a terminal, json otherwise
    table_name: str | None = None  # the TSV / Markdown table; None: metrics
    output_path: str = STDIO
    errors_path: str | None = None
    plot_path: str | None = None
    labels: tuple[str, ...] = ()
    related_within: int = DEFAULT_WITHIN
    skip_invalid: bool = False
    by_predicate: bool = False
    aggregate: bool | None = None  # several files: True mean ± std, False side by side, None decided (combine.py)
    by_field: str | None = None  # split every table of linked mentions by this record field
    nil_table: bool = False  # the NIL table even when no prediction carries a NIL decision
