"""`ontolink eval --spans`: mention-level precision, recall and F1 of predicted (span, id) pairs.

For mentions found in raw text (`annotate | link`), scored against gold
mentions with offsets (``doc_id``, ``start``, ``end``, ``gold``): a prediction
is its top candidate (none when NIL). Three matchings: ``strict`` (same span,
a gold id), ``overlap`` (overlapping spans, a gold id) and ``span`` (same span,
any id: how well mentions are found).
"""

from collections import defaultdict

from ontolink.errors import InputError
from ontolink.formats import top_link
from ontolink.steps.eval import hit_ids


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


def span_metrics(predictions, gold_records, ontology=None, name="<stdin>", gold_name="gold"):
    """{"strict" | "overlap" | "span": {gold, predicted, P, R, F1}} for one predictions file."""
    gold_by_doc = defaultdict(list)  # doc -> [(start, end, correct ids)]
    for record in gold_records:
        doc, start, end = _span(record, gold_name)
        gold_by_doc[doc].append((start, end, hit_ids(record.get("gold") or [], ontology)))
    gold_count = sum(len(spans) for spans in gold_by_doc.values())
    linkable = sum(1 for spans in gold_by_doc.values() for _, _, ids in spans if ids)
    if not gold_count:
        raise InputError("no gold mentions", gold_name)
    found = {"strict": set(), "overlap": set(), "span": set()}
    correct = {"strict": 0, "overlap": 0, "span": 0}
    linked = spans = 0
    for record in predictions:
        doc, start, end = _span(record, name)
        best = top_link(record)
        spans += 1
        linked += best is not None
        hits = {"strict": False, "overlap": False, "span": False}
        for index, (gold_start, gold_end, ids) in enumerate(gold_by_doc.get(doc, ())):
            same = (gold_start, gold_end) == (start, end)
            right = best is not None and best[0] in ids
            for kind, ok in (("strict", same and right), ("overlap", right and gold_start < end and start < gold_end),
                             ("span", same)):
                if ok:
                    hits[kind] = True
                    found[kind].add((doc, index))
        for kind, hit in hits.items():
            correct[kind] += hit
    if not spans:
        raise InputError("no records to evaluate", name)
    return {"strict": _prf(correct["strict"], linked, len(found["strict"]), linkable),
            "overlap": _prf(correct["overlap"], linked, len(found["overlap"]), linkable),
            "span": _prf(correct["span"], spans, len(found["span"]), gold_count)}


COUNTS = ("gold", "predicted", "nil_gold", "nil_predicted", "linkable")


def count_cell(value, metric, several):
    """Table cells of span and NIL metrics: counts without decimals, rates with three."""
    if value["mean"] != value["mean"]:
        return "-"
    if metric in COUNTS:
        return f"{value['mean']:.0f}" if not several else f"{value['mean']:.1f}"
    return f"{value['mean']:.3f} ± {value['std']:.3f}" if several else f"{value['mean']:.3f}"
