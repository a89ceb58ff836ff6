"""What `ontolink eval` makes of the files it is given: their kind, the Ks, the tables of one report.

The first record of the first file decides the kind: Retrieved records (from `align`) carry a
"direction" and no "mention"; everything else is scored as Linked mentions (or, with spans=True,
as mentions found in raw text). Each kind has its own default Ks, metrics and tables.

``evaluate`` gives an Evaluation (the tables, and per file what plots and the list of misses
need); ``evaluate_files`` renders its tables as text.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ontolink.core.errors import InputError
from ontolink.formats import Problems, guess_format, read_documents
from ontolink.core.io import ReadStats, display_name, peek_first_record, read_records, warn, RecordWriter
from ontolink.ontology import load_ontology
from ontolink.ontology.hierarchy import DEFAULT_WITHIN, RELATIONS, Hierarchy
from ontolink.core.records import validate_linked_mention, validate_mention, validate_retrieved
from ontolink.evaluation.combine import combination
from ontolink.evaluation.report import MEAN, Table
from ontolink.formats.convert import document_mentions, parse_id_prefixes
from ontolink.evaluation.evaluate import (DEFAULT_KS as LINKED_KS, LENIENT, NIL_GOLD, NO_VALUE, aggregate,
                                          by_sections, file_metrics, row_name, score_mentions)
from ontolink.evaluation.results import Evaluation, Run, class_counts, count_cell, has_hierarchy
from ontolink.evaluation.retrieval import (DEFAULT_KS as RETRIEVED_KS, aggregate_folds, retrieval_metrics,
                                           retrieval_table)
from ontolink.evaluation.spans import span_evaluation
from ontolink.linking.nil import nil_metrics
from ontolink.evaluation.options import EvalOptions

if TYPE_CHECKING:
    from ontolink.ontology import OntologySource
    from ontolink.ontology.model import Ontology

LENIENT_NOTE = (f"{LENIENT}: R@1 that also counts a top-1 one is_a step from gold (its parent or child) as right; "
                "R@1 is strict.")
NO_CANDIDATE = "no-candidate"
ACCOUNTING_NOTE = "all = HO + LO + NO + not-in-ontology (gold ids the ontology does not hold)."
NIL_NOTE = "NIL: mentions whose gold is [] (counted, not ranked)."
DEPTH_NOTE = "n/a: R@K past the candidates a file holds, not known."


def is_retrieved(record):
    return isinstance(record, dict) and "direction" in record and "mention" not in record


def read_gold_mentions(path, skip_invalid=False, fmt=None, id_prefixes=None):
    """--gold: labeled mentions from Mention JSONL, or the annotations of a PubTator / BioC file."""
    fmt = fmt or guess_format(path)
    if fmt in (None, "text") or str(path).lower().endswith((".jsonl", ".jsonl.gz")) or path == "-":
        # a gold id twice (last one wins in the look-up) is said, as every reader of ids says it
        return read_records(path, validate=validate_mention, skip_invalid=skip_invalid, check_duplicate_ids=True)
    problems = Problems(skip_invalid)
    return document_mentions(read_documents(path, fmt, problems), id_prefixes=id_prefixes, problems=problems)


def default_ks(longest):
    """Linked mentions' default K: those of 1, 5, 32, 64 below the longest candidate list, and its length (a
    file of 10 candidates gets 1, 5, 10): Recall@64 of 10 candidates would only repeat Recall@10."""
    if longest < 1:
        return (1,)
    return tuple(k for k in LINKED_KS if k < min(longest, LINKED_KS[-1])) + (min(longest, LINKED_KS[-1]),)


def parse_ks(text, retrieved=False):
    """Sorted distinct K of Recall@K from "1,5,64"; None gives the kind's defaults (for linked mentions
    None, to be chosen by ``default_ks`` once the candidates are read)."""
    if text is None:
        return RETRIEVED_KS if retrieved else None
    try:
        k_values = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise InputError(f"--ks: {text!r} is not a comma-separated list of integers") from None
    if not k_values or min(k_values) < 1:
        raise InputError("--ks: K values must be positive")
    return k_values


def file_labels(files, labels=None):
    """What plots and tables call each file: --label values in order, else the file name."""
    labels = list(labels or ())
    if labels and len(labels) != len(files):
        raise InputError(f"--label given {len(labels)} time(s) for {len(files)} file(s): give one per file")
    return labels or [display_name(path) for path in files]


def evaluate(files: Sequence[str], ontology: OntologySource | Ontology | None = None, gold_path: str | None = None,
             spans: bool = EvalOptions.spans, ks: str | None = None, skip_invalid: bool = EvalOptions.skip_invalid,
             by_predicate: bool = EvalOptions.by_predicate, id_prefix: str | None = None,
             related_within: int = DEFAULT_WITHIN, labels: Sequence[str] | None = None, aggregate: bool | None = None,
             by_field: str | None = None, nil_table: bool = EvalOptions.nil_table) -> Evaluation:
    """The Evaluation of prediction files ('-' is stdin). ``ontology`` is an OntologySource (loaded only
    when the kind needs it), ``ks`` the --ks text, ``id_prefix`` the --id-prefix text. Several files are
    shown as mean ± std or side by side as ``ontolink.evaluation.combine`` decides (``aggregate``: True
    --aggregate, False --side-by-side, None decide). ``by_field`` splits every table of linked mentions by
    a record field; ``nil_table`` asks for the NIL table even when no prediction carries a NIL decision."""
    first = peek_first_record(files[0])
    retrieved = is_retrieved(first)
    k_values = parse_ks(ks, retrieved)
    file_labels(files, labels)  # checks their number
    combined = combination(files, labels, aggregate, folds=retrieved and "fold" in first)
    names = list(combined.labels)
    if by_field is not None and (retrieved or spans):
        raise InputError("--by splits linked mentions; retrieved records have --by-predicate, --spans has no split")
    if retrieved:
        per_file = [retrieval_metrics(read_records(path, validate=validate_retrieved, skip_invalid=skip_invalid),
                                      ks=k_values, by_predicate=by_predicate, name=display_name(path))
                    for path in files]
        # rows are texts / triples queried, not mentions; files from `align cv` are folds
        table = retrieval_table(aggregate_folds(per_file), unit="folds" if "fold" in first else "files")
        table.per_file = per_file
        return Evaluation("retrieved", list(files), {"metrics": table}, ks=k_values, combination=combined)
    loaded = load_ontology(ontology) if ontology is not None else None  # a source is parsed here, once
    prefixes = parse_id_prefixes(id_prefix)
    if spans:
        if not gold_path:
            raise InputError("--spans needs --gold FILE: gold mentions with doc_id, start and end")
        gold = list(read_gold_mentions(gold_path, skip_invalid, id_prefixes=prefixes))
        evaluation = span_evaluation(files, names, gold, loaded, gold_path, skip_invalid, prefixes, related_within)
        evaluation.combination = combined
        return evaluation
    return linking_evaluation(files, names, loaded, gold_path, k_values, skip_invalid, prefixes, related_within,
                              combined=combined, by_field=by_field, nil_table=nil_table)


def evaluate_files(files: Sequence[str], ontology: OntologySource | None = None, gold_path: str | None = None,
                   spans: bool = EvalOptions.spans, ks: str | None = None, fmt: str = "json",
                   skip_invalid: bool = EvalOptions.skip_invalid, by_predicate: bool = EvalOptions.by_predicate,
                   id_prefix: str | None = None, table: str | None = None, related_within: int = DEFAULT_WITHIN,
                   labels: Sequence[str] | None = None, aggregate: bool | None = None, by_field: str | None = None,
                   nil_table: bool = EvalOptions.nil_table) -> str:
    """The report of prediction files as text in ``fmt`` (``table`` picks the TSV / Markdown table)."""
    return evaluate(files, ontology, gold_path=gold_path, spans=spans, ks=ks, skip_invalid=skip_invalid,
                    by_predicate=by_predicate, id_prefix=id_prefix, related_within=related_within,
                    labels=labels, aggregate=aggregate, by_field=by_field, nil_table=nil_table).render(fmt, table)


def classify_misses(misses, ontology, hierarchy):
    """Give each top-1 miss its class, steps and is_a path (gold ... common ancestor ... prediction)."""
    for miss in misses:
        live_gold = [live for gold_id in miss["gold"] for live in ontology.resolve(gold_id)]
        if miss["predicted"] is None:
            miss.update({"class": NO_CANDIDATE, "steps": None, "path": []})
            continue
        predicted = (ontology.resolve(miss["predicted"]) or [miss["predicted"]])[0]
        relation = hierarchy.closest(live_gold, predicted)
        miss.update({"class": relation.kind, "steps": relation.steps, "up": relation.up, "down": relation.down,
                     "path": [{"id": node, "name": ontology[node].name} for node in relation.path]})


def default_ks_of(depths):
    """The Ks of several files: each file's own default Ks (its depth among them), so files linked 10 and 64
    deep are compared at R@10 too."""
    return tuple(sorted({k for depth in depths for k in default_ks(depth)}))


def linking_evaluation(files, names, loaded, gold_path, k_values, skip_invalid, prefixes, related_within,
                       combined=None, by_field=None, nil_table=False):
    if loaded is None:
        warn("no --ontology: ids compared as given, no HO/LO/NO split, no error classes")
    hierarchy = Hierarchy(loaded, within=related_within) if has_hierarchy(loaded) else None
    gold_by_id = None
    if gold_path:
        gold_by_id = {record["id"]: record.get("gold")
                      for record in read_gold_mentions(gold_path, skip_invalid, id_prefixes=prefixes)}
    scored = []
    for path in files:
        stats = ReadStats()  # its line names the record an error is about
        scored.append(score_mentions(read_records(path, validate=validate_linked_mention, skip_invalid=skip_invalid,
                                                  stats=stats, check_duplicate_ids=True),
                                     ontology=loaded, gold_by_id=gold_by_id, name=display_name(path),
                                     id_prefixes=prefixes, keep_misses=True, by_field=by_field, stats=stats))
    for scores, label in zip(scored, names):
        if by_field is not None and scores.values and set(scores.values) == {NO_VALUE}:
            # a misspelt field gives one "FIELD=(none)" row the size of "all": said, not left to be noticed
            warn(f"warning: {label}: no mention has a {by_field!r} field: --by {by_field} splits nothing")
    depths = [scores.longest for scores in scored]
    if k_values is None:
        k_values = default_ks_of(depths)
    if combined is not None and combined.mode == MEAN:
        depths = [min(depths)] * len(depths)  # a mean over the seeds that reach a K is no mean over the seeds
    per_file, nil_per_file, class_per_file, steps_per_file, runs = [], [], [], [], []
    with_nil = nil_table or any(scores.nil_decided for scores in scored)
    for scores, label, depth in zip(scored, names, depths):
        lenient = None
        run = Run(label, "linked", ranks=scores.ranks, top_scores=scores.top_scores, categories=scores.categories,
                  misses=scores.misses, nil_threshold=inferred_nil_threshold(scores.top_scores), depth=depth)
        if hierarchy is not None:
            classify_misses(scores.misses, loaded, hierarchy)
            run.classes = class_counts(scores.misses, RELATIONS)
            lenient = _lenient(scores, run)
        gold_nil_values = [value for (gold, _, _), value in zip(scores.nil_outcomes, scores.nil_values) if gold]
        run.metrics = file_metrics(scores.ranks, scores.categories, k_values, depth=depth, values=scores.values,
                                   by_field=by_field, nil_values=gold_nil_values, lenient=lenient)
        per_file.append(run.metrics)
        runs.append(run)
        sections = by_sections(scores.values, scores.nil_values, by_field)
        if hierarchy is not None:
            classes, steps = {}, {}
            for prefix, value in sections:
                chosen = [miss for miss, miss_value in zip(scores.misses, scores.miss_values)
                          if value is None or miss_value == value]
                for name, count in class_counts(chosen, RELATIONS).items():
                    classes[row_name(prefix, name)] = count
                    steps[row_name(prefix, name)] = [miss["steps"] for miss in chosen
                                                     if miss["class"] == name and miss["steps"] is not None]
            class_per_file.append(classes)
            steps_per_file.append(steps)
        if with_nil:
            nil_per_file.append({row_name(prefix, "NIL") if prefix else "NIL": nil_metrics(
                [outcome for outcome, outcome_value in zip(scores.nil_outcomes, scores.nil_values)
                 if value is None or outcome_value == value]) for prefix, value in sections})
    sizes = {metrics["all"]["n"] for metrics in per_file}
    if len(sizes) > 1:
        warn(f"warning: the files hold different numbers of mentions ({sorted(sizes)})")
    columns = ["n"] + [f"R@{k}" for k in k_values] + ["MRR"] + ([LENIENT] if hierarchy is not None else [])
    shallow = any(depth < k for depth in depths for k in k_values)
    note = "\n".join(line for line, shown in ((ACCOUNTING_NOTE, loaded is not None),
                                              (NIL_NOTE, any(NIL_GOLD in metrics for metrics in per_file)),
                                              (DEPTH_NOTE, shallow), (LENIENT_NOTE, hierarchy is not None)) if shown)
    tables = {"metrics": Table(aggregate(per_file), note=note, columns=columns, per_file=per_file)}
    if hierarchy is not None:
        rows = _class_rows(class_per_file, steps_per_file)
        tables["errors"] = Table(aggregate(rows), rows_are="top-1 misses", cell=count_cell, per_file=rows,
                                 note=f"related: a common ancestor within {related_within} is_a steps in all; "
                                      "mean_steps: is_a steps between gold and prediction")
    if nil_per_file:
        tables["nil"] = Table(aggregate(nil_per_file), rows_are="NIL", cell=count_cell, per_file=nil_per_file)
    return Evaluation("linked", list(files), tables, runs=runs, ks=k_values, combination=combined,
                      has_hierarchy=hierarchy is not None, has_ontology=loaded is not None)


def _class_rows(class_per_file, steps_per_file):
    """{row: {count, share, mean_steps}} per file, each share of the misses of its own section (the whole
    file, or one --by value)."""
    rows = []
    for classes, steps in zip(class_per_file, steps_per_file):
        totals = {}
        for name, count in classes.items():
            section = name.rsplit(" ", 1)[0] if " " in name else ""
            totals[section] = totals.get(section, 0) + count
        file_rows = {}
        for name, count in classes.items():
            total = totals[name.rsplit(" ", 1)[0] if " " in name else ""]
            chosen = steps.get(name) or []
            file_rows[name] = {"count": count, "share": count / total if total else float("nan"),
                               "mean_steps": sum(chosen) / len(chosen) if chosen else float("nan")}
        rows.append(file_rows)
    return rows


def inferred_nil_threshold(top_scores):
    """The NIL threshold a file was linked with, as far as its marks tell: `link --nil-threshold T` marks
    a mention NIL when its top score is below T, so T is at most the lowest unmarked score (that is the
    value returned) and above the highest marked one. None when nothing is marked NIL."""
    marked = [score for score, _, nil in top_scores if nil and score is not None]
    unmarked = [score for score, _, nil in top_scores if not nil and score is not None]
    if not marked or not unmarked:
        return None
    return min(unmarked)


def _lenient(scores, run):
    """Per linkable mention: top-1 right, or one is_a step from gold (for lenient_R@1)."""
    near = {miss["id"] for miss in run.misses if miss["steps"] == 1 and miss["class"] in RELATIONS[:2]}
    misses_by_position = iter(run.misses)
    return [True if rank == 1 else next(misses_by_position)["id"] in near for rank in scores.ranks]


def error_records(evaluation: Evaluation) -> Iterator[dict[str, Any]]:
    """The --errors records: each run's misses (span errors), with the file's label first."""
    for run in evaluation.runs:
        for miss in run.misses:
            yield {"file": run.label} | miss


def write_errors(evaluation: Evaluation, path: str) -> None:
    """One JSON line per miss into ``path`` ('-': stdout)."""
    with RecordWriter(path) as writer:
        writer.write_all(error_records(evaluation))
