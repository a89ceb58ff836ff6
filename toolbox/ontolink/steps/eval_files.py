"""What `ontolink eval` makes of the files it is given: their kind, the Ks, one report.

The first record of the first file decides the kind: Retrieved records (from `align`) carry a
"direction" and no "mention"; everything else is scored as Linked mentions (or, with spans=True,
as mentions found in raw text). Each kind has its own default Ks, metrics and report layout.
"""

from ontolink.errors import InputError
from ontolink.formats import Problems, guess_format, read_documents
from ontolink.io import display_name, peek_first_record, read_records, warn
from ontolink.records import validate_linked_mention, validate_mention, validate_retrieved
from ontolink.steps.convert import document_mentions
from ontolink.steps.eval import DEFAULT_KS as LINKED_KS
from ontolink.steps.eval_retrieval import DEFAULT_KS as RETRIEVED_KS


def is_retrieved(record):
    return isinstance(record, dict) and "direction" in record and "mention" not in record


def read_gold_mentions(path, skip_invalid=False, fmt=None):
    """--gold: labeled mentions from Mention JSONL, or the annotations of a PubTator / BioC file."""
    fmt = fmt or guess_format(path)
    if fmt in (None, "text") or str(path).lower().endswith((".jsonl", ".jsonl.gz")) or path == "-":
        return read_records(path, validate=validate_mention, skip_invalid=skip_invalid)
    problems = Problems(skip_invalid)
    return document_mentions(read_documents(path, fmt, problems), problems=problems)


def parse_ks(text, retrieved=False):
    """Sorted distinct K of Recall@K from "1,5,64"; None gives the kind's defaults."""
    if text is None:
        return RETRIEVED_KS if retrieved else LINKED_KS
    try:
        k_values = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise InputError(f"--ks: {text!r} is not a comma-separated list of integers") from None
    if not k_values or min(k_values) < 1:
        raise InputError("--ks: K values must be positive")
    return k_values


def evaluate_files(files, ontology=None, gold_path=None, spans=False, ks=None, fmt="json", skip_invalid=False,
                   by_predicate=False):
    """The report of prediction files ('-' is stdin) as text in `fmt`. `ontology` is an OntologySource
    (loaded only when the kind needs it), `ks` the --ks text; several files give mean ± std."""
    first = peek_first_record(files[0])
    retrieved = is_retrieved(first)
    k_values = parse_ks(ks, retrieved)
    if spans:
        summary = span_summary(files, ontology, gold_path, skip_invalid)
    elif retrieved:
        from ontolink.steps.eval_retrieval import aggregate_folds, render_retrieval, retrieval_metrics

        summary = aggregate_folds([retrieval_metrics(read_records(path, validate=validate_retrieved,
                                                                  skip_invalid=skip_invalid),
                                                     ks=k_values, by_predicate=by_predicate, name=display_name(path))
                                   for path in files])
        # rows are texts / triples queried, not mentions; files from `align cv` are folds
        return render_retrieval(summary, fmt, files, unit="folds" if "fold" in first else "files")
    else:
        summary = linking_summary(files, ontology, gold_path, k_values, skip_invalid)
    from ontolink.report import render

    nil = summary.pop("NIL", None)
    text = render(summary, fmt, files)
    return text if nil is None else _with_nil(text, nil, fmt, files)


def linking_summary(files, ontology, gold_path, k_values, skip_invalid):
    from ontolink.steps.eval import aggregate, file_metrics, score_file

    loaded = ontology.load() if ontology else None
    if loaded is None:
        warn("no --ontology: ids compared as given, no HO/LO/NO split")
    gold_by_id = None
    if gold_path:
        gold_by_id = {record["id"]: record.get("gold") for record in read_gold_mentions(gold_path, skip_invalid)}
    per_file = []
    for path in files:
        records = read_records(path, validate=validate_linked_mention, skip_invalid=skip_invalid)
        outcomes = []
        ranks, categories = score_file(records, ontology=loaded, ks=k_values, gold_by_id=gold_by_id,
                                       name=display_name(path), nil_outcomes=outcomes)
        per_file.append(file_metrics(ranks, categories, k_values))
        if any(gold or nil for gold, nil, _ in outcomes):  # NIL in the gold or in the predictions
            from ontolink.steps.nil import nil_metrics

            per_file[-1]["NIL"] = nil_metrics(outcomes)
    sizes = {metrics["all"]["n"] for metrics in per_file}
    if len(sizes) > 1:
        warn(f"warning: the files hold different numbers of mentions ({sorted(sizes)})")
    return aggregate(per_file)


def span_summary(files, ontology, gold_path, skip_invalid):
    from ontolink.steps.eval import aggregate
    from ontolink.steps.eval_spans import span_metrics

    if not gold_path:
        raise InputError("--spans needs --gold FILE: gold mentions with doc_id, start and end")
    loaded = ontology.load() if ontology else None
    gold = list(read_gold_mentions(gold_path, skip_invalid))
    return aggregate([span_metrics(read_records(path, validate=validate_linked_mention, skip_invalid=skip_invalid),
                                   gold, ontology=loaded, name=display_name(path), gold_name=gold_path)
                      for path in files])


def _with_nil(text, nil, fmt, files):
    """The NIL row (precision / recall / F1 of NIL marks, R@1 of linkable mentions counting them) after
    the linking table, or under "NIL" in JSON."""
    import json

    from ontolink.report import render
    from ontolink.steps.eval_spans import count_cell

    if fmt == "json":
        data = json.loads(text)
        data["metrics"]["NIL"] = nil
        return json.dumps(data, indent=2)
    return text + "\n\n" + render({"NIL": nil}, fmt, files, rows_are="NIL", cell=count_cell)
