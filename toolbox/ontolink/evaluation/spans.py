"""`ontolink eval --spans`: mention-level precision, recall and F1 of predicted (span, id) pairs, and the
class of every error.

For mentions found in raw text (`annotate | link`), scored against gold
mentions with offsets (``doc_id``, ``start``, ``end``, ``gold``): a prediction
is its top candidate (none when NIL). Three matchings: ``strict`` (same span,
a gold id), ``overlap`` (overlapping spans, a gold id) and ``span`` (same span,
any id: how well mentions are found).

Each linked prediction gets one class, the first that applies:
``exact`` (same span as a gold mention, a right id), ``wrong-id`` (same span,
another id; with its is_a class), ``coordination-part`` (inside a longer gold
mention that coordinates several, "breast and ovarian cancer"), ``boundary``
(overlaps a gold mention whose id it has), ``inner-of-longer`` (inside a longer
gold mention, another id), ``spurious`` (anything else). Each linkable gold
mention gets ``found`` (an exact prediction), ``wrong-id``, ``boundary``,
``shorter-part-found`` (a prediction inside it) or ``not-found``.
"""

import re
from collections import defaultdict

from ontolink.core.errors import InputError
from ontolink.formats import top_link
from ontolink.evaluation.evaluate import hit_ids, snippet, with_id_prefix, aggregate
from ontolink.evaluation.results import Evaluation, Run, class_rows, count_cell, has_hierarchy
from ontolink.core.io import display_name, read_records
from ontolink.core.records import validate_linked_mention
from ontolink.evaluation.report import Table
from ontolink.ontology.hierarchy import RELATIONS, Hierarchy

PREDICTED_CLASSES = ("exact", "wrong-id", "coordination-part", "boundary", "inner-of-longer", "spurious")
GOLD_CLASSES = ("found", "wrong-id", "boundary", "shorter-part-found", "not-found")
_COORDINATION = re.compile(r"\b(?:and|or|nor)\b|,|/|&", re.IGNORECASE)


def _span(record, name):
    try:
        return str(record["doc_id"]), int(record["start"]), int(record["end"])
    except (KeyError, TypeError, ValueError):
        raise InputError(f"mention {record.get('id')!r} has no doc_id/start/end: span scoring needs offsets",
                         name) from None


def _prf(correct_predictions, predictions, found_gold, gold):
    precision = correct_predictions / predictions if predictions else 0.0
    recall = found_gold / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"gold": gold, "predicted": predictions, "P": precision, "R": recall, "F1": f1}


def _inside(start, end, outer_start, outer_end):
    return outer_start <= start and end <= outer_end and (start, end) != (outer_start, outer_end)


def _overlap(start, end, other_start, other_end):
    return other_start < end and start < other_end


def _gold_spans(gold_records, ontology, gold_name, prefixes):
    gold_by_doc = defaultdict(list)  # doc -> [(start, end, correct ids, record)]
    for record in gold_records:
        doc, start, end = _span(record, gold_name)
        ids = with_id_prefix(record.get("gold") or [], prefixes, record.get("type", ""))
        gold_by_doc[doc].append((start, end, hit_ids(ids, ontology), record | {"gold": ids}))
    return gold_by_doc


def predicted_class(start, end, predicted_id, golds):
    """(class, the gold entry it is judged against or None) of one linked prediction among its document's
    gold spans."""
    overlapping = [gold for gold in golds if _overlap(start, end, gold[0], gold[1])]
    same = [gold for gold in overlapping if (gold[0], gold[1]) == (start, end)]
    for gold in same:
        if predicted_id in gold[2]:
            return "exact", gold
    if same:
        return "wrong-id", same[0]
    containing = [gold for gold in overlapping if _inside(start, end, gold[0], gold[1])]
    for gold in containing:
        if _COORDINATION.search(str(gold[3].get("mention", ""))):
            return "coordination-part", gold
    for gold in overlapping:
        if predicted_id in gold[2]:
            return "boundary", gold
    if containing:
        return "inner-of-longer", containing[0]
    return "spurious", None


def gold_class(gold, predictions):
    """(class, the prediction it is judged by or None) of one linkable gold span among its document's
    linked predictions [(start, end, id, record)]."""
    start, end, ids, _ = gold
    overlapping = [p for p in predictions if _overlap(p[0], p[1], start, end)]
    same = [p for p in overlapping if (p[0], p[1]) == (start, end)]
    for prediction in same:
        if prediction[2] in ids:
            return "found", prediction
    if same:
        return "wrong-id", same[0]
    for prediction in overlapping:
        if prediction[2] in ids:
            return "boundary", prediction
    inner = [p for p in overlapping if _inside(p[0], p[1], start, end)]
    if inner:
        return "shorter-part-found", inner[0]
    return "not-found", None


def span_metrics(predictions, gold_records, ontology=None, name="<stdin>", gold_name="gold", prefixes=None,
                 hierarchy=None):
    """({"strict" | "overlap" | "span": {gold, predicted, P, R, F1}}, {class: count}, [error records]) for
    one predictions file; the class counts are keyed "predicted/CLASS" and "gold/CLASS"."""
    gold_by_doc = _gold_spans(gold_records, ontology, gold_name, prefixes)
    gold_count = sum(len(spans) for spans in gold_by_doc.values())
    linkable = sum(1 for spans in gold_by_doc.values() for _, _, ids, _ in spans if ids)
    if not gold_count:
        raise InputError("no gold mentions", gold_name)
    found = {"strict": set(), "overlap": set(), "span": set()}
    correct = {"strict": 0, "overlap": 0, "span": 0}
    linked_by_doc = defaultdict(list)
    counts = {f"predicted/{kind}": 0 for kind in PREDICTED_CLASSES} | {f"gold/{kind}": 0 for kind in GOLD_CLASSES}
    errors = []
    linked = spans = 0
    for record in predictions:
        doc, start, end = _span(record, name)
        best = top_link(record)
        spans += 1
        linked += best is not None
        golds = gold_by_doc.get(doc, ())
        hits = {"strict": False, "overlap": False, "span": False}
        for index, (gold_start, gold_end, ids, _) in enumerate(golds):
            same = (gold_start, gold_end) == (start, end)
            right = best is not None and best[0] in ids
            for kind, ok in (("strict", same and right), ("overlap", right and _overlap(start, end, gold_start, gold_end)),
                             ("span", same)):
                if ok:
                    hits[kind] = True
                    found[kind].add((doc, index))
        for kind, hit in hits.items():
            correct[kind] += hit
        if best is None:
            continue
        linked_by_doc[doc].append((start, end, best[0], record))
        kind, gold = predicted_class(start, end, best[0], golds)
        counts[f"predicted/{kind}"] += 1
        if kind != "exact":
            errors.append(_error("false-positive", kind, record, best, gold, ontology, hierarchy))
    if not spans:
        raise InputError("no records to evaluate", name)
    for doc, golds in gold_by_doc.items():
        for gold in golds:
            if not gold[2]:
                continue  # unlinkable gold: scored by the NIL metrics, not here
            kind, prediction = gold_class(gold, linked_by_doc.get(doc, ()))
            counts[f"gold/{kind}"] += 1
            if kind != "found":
                best = top_link(prediction[3]) if prediction else None
                errors.append(_error("false-negative", kind, prediction[3] if prediction else gold[3], best, gold,
                                     ontology, hierarchy))
    metrics = {"strict": _prf(correct["strict"], linked, len(found["strict"]), linkable),
               "overlap": _prf(correct["overlap"], linked, len(found["overlap"]), linkable),
               "span": _prf(correct["span"], spans, len(found["span"]), gold_count)}
    return metrics, counts, errors


def _error(side, kind, record, best, gold, ontology, hierarchy):
    """One --errors record of a span error: what was predicted where, what gold says, and their class."""
    gold_record = gold[3] if gold else {}
    entry = {"error": side, "class": kind, "doc_id": str(record.get("doc_id")), "start": record.get("start"),
             "end": record.get("end"), "mention": record.get("mention"), "context": snippet(record),
             "gold_span": [gold[0], gold[1]] if gold else None, "gold_mention": gold_record.get("mention"),
             "gold": list(gold_record.get("gold") or []), "predicted": best[0] if best else None,
             "predicted_name": best[1] if best else None, "score": best[2] if best else None}
    if ontology is not None and entry["gold"]:
        live = [resolved for gold_id in entry["gold"] for resolved in ontology.resolve(gold_id)]
        entry["gold_name"] = "; ".join(ontology[resolved].name for resolved in live)
        if kind == "wrong-id" and hierarchy is not None and best:
            relation = hierarchy.closest(live, (ontology.resolve(best[0]) or [best[0]])[0])
            entry.update({"hierarchy": relation.kind, "steps": relation.steps,
                          "path": [{"id": node, "name": ontology[node].name} for node in relation.path]})
    return entry


def span_evaluation(files, names, gold, ontology, gold_path, skip_invalid, prefixes, related_within):
    """The Evaluation of --spans: P / R / F1 per matching and the span classes, per file."""
    hierarchy = Hierarchy(ontology, within=related_within) if has_hierarchy(ontology) else None
    per_file, runs = [], []
    for path, label in zip(files, names):
        metrics, counts, errors = span_metrics(
            read_records(path, validate=validate_linked_mention, skip_invalid=skip_invalid), gold, ontology=ontology,
            name=display_name(path), gold_name=gold_path, prefixes=prefixes, hierarchy=hierarchy)
        if hierarchy is not None:
            for relation in RELATIONS:
                counts[f"predicted/wrong-id/{relation}"] = sum(1 for error in errors if error["error"] ==
                                                               "false-positive" and error.get("hierarchy") == relation)
        per_file.append(metrics)
        runs.append(Run(label, "spans", misses=errors, metrics=metrics, classes=counts))
    rows = []
    for run in runs:  # a share of the predictions or of the gold mentions, not of both
        predicted = {key: value for key, value in run.classes.items() if key.startswith("predicted/")
                     and key.count("/") == 1}
        gold_side = {key: value for key, value in run.classes.items() if key.startswith("gold/")}
        wrong = {key: value for key, value in run.classes.items() if key.count("/") == 2}
        rows.append(class_rows([predicted])[0] | class_rows([wrong])[0] | class_rows([gold_side])[0])
    tables = {"metrics": Table(aggregate(per_file), rows_are="matching", cell=count_cell, per_file=per_file),
              "errors": Table(aggregate(rows), rows_are="span class", cell=count_cell, per_file=rows,
                              note="share: of the linked predictions (predicted/...), of the wrong ids on gold "
                                   "spans (predicted/wrong-id/...) or of the linkable gold mentions (gold/...)")}
    return Evaluation("spans", list(files), tables, runs=runs, has_hierarchy=hierarchy is not None,
                      has_ontology=ontology is not None)
