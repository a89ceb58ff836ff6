"""What an evaluation is made of: the scored runs, the report's tables, the error-class rows and how a count
or a rate is shown in a cell; shared by linked-mention and span evaluations."""

from __future__ import annotations

from dataclasses import dataclass, field

from ontolink.evaluation.report import render_report


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


@dataclass
class Evaluation:
    kind: str  # "linked", "spans" or "retrieved"
    files: list
    tables: dict
    runs: list = field(default_factory=list)
    ks: tuple = ()

    def render(self, fmt, table_name=None):
        return render_report(self.tables, fmt, self.files, table_name=table_name)


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


COUNTS = ("gold", "predicted", "nil_gold", "nil_predicted", "linkable", "count")


def count_cell(value, metric, several):
    """Table cells of span and NIL metrics: counts without decimals, rates with three."""
    if value["mean"] != value["mean"]:
        return "-"
    if metric in COUNTS:
        return f"{value['mean']:.0f}" if not several else f"{value['mean']:.1f}"
    if metric == "mean_steps":
        return f"{value['mean']:.1f}"
    return f"{value['mean']:.3f} ± {value['std']:.3f}" if several else f"{value['mean']:.3f}"
