"""What an evaluation is made of: the scored runs, the report's tables, the error-class rows and how a count
or a rate is shown in a cell; shared by linked-mention and span evaluations."""

from __future__ import annotations

from dataclasses import dataclass, field

from typing import TYPE_CHECKING

from ontolink.evaluation.report import COUNTS, MEAN, render_report

if TYPE_CHECKING:
    from ontolink.evaluation.combine import Combination


@dataclass
class Run:
    """One scored file: its label and what its plots and misses are made of."""

    label: str
    kind: str
    ranks: list = field(default_factory=list)
    top_scores: list = field(default_factory=list)  # (score, top-1 right)
    categories: list = field(default_factory=list)
    misses: list = field(default_factory=list)  # dicts, one per top-1 miss (linked) or span error (spans)
    metrics: dict = field(default_factory=dict)  # {group: {metric: value}}
    classes: dict = field(default_factory=dict)  # {class: count}
    nil_threshold: float | None = None
    depth: int = 0  # the most candidates a mention has: Recall@K past it is not known


@dataclass
class Evaluation:
    kind: str  # "linked", "spans" or "retrieved"
    files: list
    tables: dict
    runs: list = field(default_factory=list)
    ks: tuple = ()
    combination: Combination | None = None  # how several files are shown; None: mean ± std, as before
    has_hierarchy: bool = False  # the ontology has is_a relations: the misses have error classes
    has_ontology: bool = False

    @property
    def combined(self):
        return self.combination.mode if self.combination is not None else (MEAN if len(self.files) > 1 else None)

    @property
    def labels(self):
        if self.combination is not None:
            return list(self.combination.labels)
        return [run.label for run in self.runs] or [str(path) for path in self.files]

    def render(self, fmt, table_name=None):
        reason = self.combination.reason if self.combination is not None else ""
        return render_report(self.tables, fmt, self.files, table_name=table_name, combined=self.combined,
                             labels=self.labels, reason=reason)


def has_hierarchy(ontology):
    return ontology is not None and any(entity.parents for entity in ontology)


def class_counts(misses, classes):
    counts = {name: 0 for name in classes}
    for miss in misses:
        counts[miss["class"]] = counts.get(miss["class"], 0) + 1
    return counts


def class_rows(per_file_counts, per_file_steps=None):
    """{class: {count, share}} rows per file (share of that file's misses), plus mean steps when given."""
    rows = []
    for index, counts in enumerate(per_file_counts):
        total = sum(counts.values())
        file_rows = {}
        for name, count in counts.items():
            file_rows[name] = {"count": count, "share": count / total if total else float("nan")}
            if per_file_steps is not None:
                steps = per_file_steps[index].get(name) or []
                file_rows[name]["mean_steps"] = sum(steps) / len(steps) if steps else float("nan")
        rows.append(file_rows)
    return rows


def count_cell(value, metric, several):
    """Table cells of span and NIL metrics: counts without decimals (a mean over files with one when it is
    not whole), rates with three."""
    if value is None:
        return "n/a"
    if value["mean"] != value["mean"]:
        return "-"
    if metric in COUNTS:
        mean = float(value["mean"])
        return f"{mean:.0f}" if mean.is_integer() else f"{mean:.1f}"
    if metric == "mean_steps":
        return f"{value['mean']:.1f}"
    return f"{value['mean']:.3f} ± {value['std']:.3f}" if several else f"{value['mean']:.3f}"
