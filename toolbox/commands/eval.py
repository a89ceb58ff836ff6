import sys

import click

from toolbox.options import config_option, ontology_option, output_option


@click.command("eval")
@click.argument("predictions", nargs=-1, type=click.Path(allow_dash=True))
@ontology_option(required=False, help_text="Ontology of the gold ids: resolves alt/obsolete ids and gives the "
                                           "HO/LO/NO overlap categories (file or 'hpo').")
@click.option("--gold", "gold_path", type=click.Path(dir_okay=False, allow_dash=True),
              help="Labeled mentions whose gold ids (joined by id) replace those in the predictions: Mention JSONL, "
                   "or PubTator / BioC (read as `ontolink convert` does).")
@click.option("--spans", is_flag=True, help="Mentions found in raw text (`annotate | link`): precision, recall, F1 "
                                            "of (span, top id) against --gold's offsets.")
@click.option("--ks", help="Comma-separated K of Recall@K.  [default: 1,5,32,64 for linked mentions; 1,10 for "
                          "retrieved records]")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown", "tsv"]),
              help="Output format.  [default: table on a terminal, json otherwise]")
@output_option
@click.option("--skip-invalid", is_flag=True, help="Count, report and skip bad lines.")
@click.option("--by-predicate", is_flag=True, help="Retrieved records: also one row per direction and predicate.")
@config_option
def command(predictions, ontology, gold_path, spans, ks, fmt, output_path, skip_invalid, by_predicate):
    """Score Linked-mention or Retrieved files: Recall@K, MRR and more.

    PREDICTIONS are outputs of `ontolink link` ('-' or none: stdin). Several
    files (one per seed) give mean ± std. With --ontology, a hit counts any
    gold id, what it resolves to (alt_id, replaced_by) and its alt ids, and
    mentions are split by overlap with the gold name: HO (mention inside the
    name), LO (a shared token), NO (none).

    \b
    Examples:
      ontolink eval linked.jsonl --ontology hpo
      ontolink eval seed0.jsonl seed42.jsonl seed52313.jsonl --ontology hpo --format markdown
      ontolink link --index idx/hpo -i gold.jsonl | ontolink eval --ontology hpo --format json
      ontolink eval cv/fold-*.jsonl --by-predicate --format markdown
    """
    from toolbox.io import peek_first_record, read_records, write_text

    files = list(predictions) or ["-"]
    if files.count("-") > 1:
        raise click.UsageError("stdin ('-') can be read only once")
    first = peek_first_record(files[0])
    retrieved = _is_retrieved(first)
    try:
        k_values = tuple(sorted({int(part) for part in (ks or ("1,10" if retrieved else "1,5,32,64")).split(",")
                                 if part.strip()}))
    except ValueError:
        raise click.BadParameter(f"{ks!r} is not a comma-separated list of integers", param_hint="--ks") from None
    if not k_values or min(k_values) < 1:
        raise click.BadParameter("K values must be positive", param_hint="--ks")
    if spans:
        summary = _span_summary(files, ontology, gold_path, skip_invalid)
    elif retrieved:
        from toolbox.steps.eval_retrieval import aggregate_folds, retrieval_metrics, validate_retrieved

        per_file = [retrieval_metrics(read_records(path, validate=validate_retrieved, skip_invalid=skip_invalid),
                                      ks=k_values, by_predicate=by_predicate,
                                      name="<stdin>" if path == "-" else path)
                    for path in files]
        summary = aggregate_folds(per_file)
    else:
        summary = _linking_summary(files, ontology, gold_path, k_values,
                                   skip_invalid)
    if fmt is None:
        fmt = "table" if output_path == "-" and sys.stdout.isatty() else "json"
    if retrieved:  # rows are texts / triples queried, not mentions; files from `align cv` are folds
        from toolbox.steps.eval_retrieval import render_retrieval

        text = render_retrieval(summary, fmt, files, unit="folds" if "fold" in first else "files")
    else:
        from toolbox.report import render

        nil = summary.pop("NIL", None)
        text = render(summary, fmt, files)
        if nil is not None:
            text = _with_nil(text, nil, fmt, files)
    write_text(output_path, text)


def _is_retrieved(record):
    """Retrieved records carry a "direction"; the first record of the first file decides."""
    return isinstance(record, dict) and "direction" in record and "mention" not in record


def _linking_summary(files, ontology, gold_path, k_values, skip_invalid):
    from toolbox.io import read_records
    from toolbox.records import validate_linked_mention
    from toolbox.steps.eval import aggregate, file_metrics, score_file

    loaded = ontology.load() if ontology else None
    if loaded is None:
        click.echo("ontolink: no --ontology: ids compared as given, no HO/LO/NO split", err=True)
    gold_by_id = None
    if gold_path:
        from toolbox.steps.convert import gold_mentions

        gold_by_id = {record["id"]: record.get("gold") for record in gold_mentions(gold_path, skip_invalid)}
    per_file = []
    for path in files:
        records = read_records(path, validate=validate_linked_mention, skip_invalid=skip_invalid)
        outcomes = []
        ranks, categories = score_file(records, ontology=loaded, ks=k_values, gold_by_id=gold_by_id,
                                       name="<stdin>" if path == "-" else path, nil_outcomes=outcomes)
        per_file.append(file_metrics(ranks, categories, k_values))
        if any(gold or nil for gold, nil, _ in outcomes):  # NIL in the gold or in the predictions
            from toolbox.steps.nil import nil_metrics

            per_file[-1]["NIL"] = nil_metrics(outcomes)
    sizes = {metrics["all"]["n"] for metrics in per_file}
    if len(sizes) > 1:
        click.echo(f"ontolink: warning: the files hold different numbers of mentions ({sorted(sizes)})", err=True)
    return aggregate(per_file)


def _span_summary(files, ontology, gold_path, skip_invalid):
    from toolbox.io import read_records
    from toolbox.records import validate_linked_mention
    from toolbox.steps.convert import gold_mentions
    from toolbox.steps.eval import aggregate
    from toolbox.steps.eval_spans import span_metrics

    if not gold_path:
        raise click.UsageError("--spans needs --gold FILE: gold mentions with doc_id, start and end")
    loaded = ontology.load() if ontology else None
    gold = list(gold_mentions(gold_path, skip_invalid))
    return aggregate([span_metrics(read_records(path, validate=validate_linked_mention, skip_invalid=skip_invalid),
                                   gold, ontology=loaded, name="<stdin>" if path == "-" else path, gold_name=gold_path)
                      for path in files])


def _with_nil(text, nil, fmt, files):
    """The NIL row (precision / recall / F1 of NIL marks, R@1 of linkable mentions counting them) after
    the linking table, or under "NIL" in JSON."""
    import json

    from toolbox.report import render
    from toolbox.steps.eval_spans import count_cell

    if fmt == "json":
        data = json.loads(text)
        data["metrics"]["NIL"] = nil
        return json.dumps(data, indent=2)
    return text + "\n\n" + render({"NIL": nil}, fmt, files, rows_are="NIL", cell=count_cell)
