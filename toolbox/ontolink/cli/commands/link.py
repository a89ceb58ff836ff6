import itertools
import time
from pathlib import Path

import click

from ontolink.core.io import plural, warn as summary
from ontolink.cli.options import (
    config_option,
    device_option,
    engine_options,
    input_options,
    ontology_option,
    output_option,
)


@click.command("link")
@click.argument("phrases", nargs=-1)
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False),
              help="Index directory made by `ontolink index`.")
@input_options(help_text="Mention records, JSONL; a directory or a quoted glob of shards ('-' is stdin; .gz is "
                          "read transparently).")
@output_option(help_text="Linked mentions: JSONL, or TSV when FILE ends in .tsv or with --to tsv ('-' is stdout; "
                         ".gz is compressed).")
@click.option("--to", "output_format", type=click.Choice(["jsonl", "tsv"]),
              help="jsonl: each Mention record with its candidates; tsv: one row per (mention, rank): "
                   "mention_id, mention, rank, id, name, score, matched_name, matched_kind, matched_by (choose "
                   "them with --fields and --candidate-fields).  [default: from the -o name, else jsonl]")
@click.option("--fields", "fields_text", metavar="FIELD,...",
              help="Keep only these fields of each output record, in this order (e.g. id,mention,candidates; a "
                   "field a record lacks is left out).  With --to tsv: the mention's columns before rank "
                   "(candidates, the rows, is skipped).  [default: every field; tsv: id,mention]")
@click.option("--candidate-fields", "candidate_fields_text", metavar="FIELD,...",
              help="Keep only these fields of each candidate, in this order (e.g. id,name,score).  With --to tsv: "
                   "the columns after rank.  [default: every field; tsv: id,name,score,matched_name,matched_kind,"
                   "matched_by]")
@click.option("--no-context", is_flag=True,
              help="Leave context_left and context_right out of the output records (they are still read; "
                   "the same as --fields without them).")
@click.option("--output-dir", type=click.Path(file_okay=False),
              help="With -i DIRECTORY or a quoted glob of shards: one output shard per input shard, of the same "
                   "name, in this directory (instead of one -o stream).")
@click.option("--top-k", type=click.IntRange(1),
              help="Candidates per mention.  [default: 10; with --ranker or --reranker, the number it was trained "
                   "on (64)]")
@click.option("--batch-size", type=click.IntRange(1),
              help="Mentions encoded and searched together (output is flushed after each batch); the links "
                   "are the same at any size, a large one encodes and searches faster.  [default: 4096; 256 "
                   "with --reranker, whose cross-encoder takes seconds a batch]")
@ontology_option(required=False, help_text="Check that the index was built for this ontology (file or 'hpo'; "
                                           "compared by content hash, not parsed).")
@click.option("--reranker", "reranker_dir", type=click.Path(file_okay=False),
              help="A reranker from `ontolink train reranker` (either architecture): rescores all top-K "
                   "candidates.")
@click.option("--ranker", "ranker_dir", type=click.Path(file_okay=False),
              help="A feature ranker from `ontolink train ranker`: orders the top-K candidates (CPU-cheap).")
@click.option("--prior", default="auto", show_default=True, metavar="auto|hpo|none|FILE",
              help="With --ranker: the entity prior ('hpo', a select-entities output or id/count file, 'none'; "
                   "auto: hpo for an HPO index, else none).")
@click.option("--with-features", is_flag=True,
              help="With --ranker: add each candidate's feature values (\"features\") to the output.")
@click.option("--nil-threshold", metavar="FLOAT|auto",
              help="Mark a mention \"nil\": true (candidates kept) when its best score is below this; 'auto' "
                   "calibrates it on the index, without labels (docs/recognition.md: NIL).")
@click.option("--annotate-ids/--no-annotate-ids", default=True, show_default=True,
              help="Candidates that `annotate`'s dictionary found over the mention (its matched_ids) are marked "
                   "\"matched_by\": \"annotate\" and come right after exact names, before the index's order (a "
                   "--ranker or --reranker orders them afterwards); --no-annotate-ids ignores matched_ids.")
@device_option
@engine_options
@config_option
def command(phrases, index_dir, input_path, skip_invalid, output_path, output_format, fields_text,
            candidate_fields_text, no_context, output_dir, top_k, batch_size, ontology, reranker_dir, ranker_dir, prior,
            with_features, nil_threshold, annotate_ids, device, start_engine):
    """Add the top-K entities to every Mention record.

    Reads Mention records ({"id", "mention", ...}; other fields pass through;
    a record with an "expansion", as `annotate` writes for a coordinated
    name, is searched by it: "palmar pits" for "palmar and plantar pits")
    and writes each with "candidates": [{"id", "name", "score",
    "matched_name", "matched_kind", "matched_by"}], best first, one per
    entity. "matched_name" is the entity's name or synonym that matched,
    "matched_kind" what it is ("name", or its synonym scope: EXACT,
    RELATED, ...). A candidate whose matched name is the mention itself
    once case, British spellings and plurals are folded (as `annotate`
    folds them: "astrocytes" is "astrocyte") comes first, with
    "matched_by": "exact". Then, for a mention `annotate` found in its
    dictionary, the entities whose name it found there ("matched_ids"),
    with "matched_by": "annotate"; the others have the index method
    ("dense", "tfidf", ...). With --reranker or --ranker the order is theirs and
    each candidate also keeps its "retriever_score"; a --ranker's
    candidate found through the long form of an abbreviation defined in
    the mention's document has "matched_by": "abbreviation".

    PHRASES given as arguments are linked instead of -i, as Mention
    records with ids "1", "2", ... in order.

    --fields and --candidate-fields keep only the fields named, in that
    order, of each record and of each of its candidates (leave out the
    context copied into every record, or keep three fields of each
    candidate); in a TSV they choose its columns.

    \b
    Examples:
      ontolink link --index idx/hpo -i mentions.jsonl -o linked.jsonl
      ontolink link --index idx/cl --to tsv "Kupffer cells" "astrocytes"
      ontolink link --index idx/hpo -i mentions.jsonl --no-context -o linked.jsonl
      ontolink link --index idx/hpo -i mentions.jsonl --fields id,mention,candidates --candidate-fields id,name,score
      ontolink link --index idx/hpo -i mentions.jsonl --fields doc_id,start,end,mention -o linked.tsv
      echo '{"id": "m1", "mention": "short stature"}' | ontolink link --index idx/hpo --top-k 3
      zcat mentions.jsonl.gz | ontolink link --index idx/hpo | head -1
      ontolink link --index idx/tuned --reranker models/reranker -i mentions.jsonl
      ontolink link --index idx/hpo --ranker models/ranker -i mentions.jsonl -o linked.jsonl
      ontolink link --index idx/hpo --engine ray --workers 8 -i mentions.jsonl -o linked.jsonl
      ontolink link --index idx/hpo --engine ray --ray-address auto -i 'pubmed/*.jsonl.gz' --output-dir linked/
    """
    from ontolink.indexes.artifact import load_index
    from ontolink.core.io import ReadStats, RecordBatchReader, RecordWriter, input_shards, output_shard
    from ontolink.core.progress import counting
    from ontolink.core.records import validate_mention
    from ontolink.linking.link import LINK_BATCH_SIZE, RERANK_BATCH_SIZE, link_inputs
    from ontolink.linking.options import trained_top_k

    if ranker_dir and reranker_dir:
        raise click.UsageError("give --ranker or --reranker, not both")
    if phrases and input_path != "-":
        raise click.UsageError("give PHRASES or -i FILE, not both")
    output_format = output_format or ("tsv" if str(output_path).lower().endswith((".tsv", ".tsv.gz")) else "jsonl")
    from ontolink.linking.output_fields import FieldSelection, parse_field_list

    try:
        selection = FieldSelection(parse_field_list(fields_text, "--fields"),
                                   parse_field_list(candidate_fields_text, "--candidate-fields"), no_context)
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    if output_format == "tsv" and output_dir:
        raise click.UsageError("--to tsv writes one stream (-o): it does not combine with --output-dir")
    from ontolink.core.gc_pause import collection_paused

    # the ontology is checked by its content hash, never parsed; what is loaded lives until the end: out of
    # the collector's walks
    with collection_paused(freeze=True):
        loaded = load_index(index_dir, ontology=ontology, device=device)
    reranker = None
    if reranker_dir:
        from ontolink.reranking.base import load_reranker

        reranker = load_reranker(reranker_dir, device=device)
        reranker.check_index(loaded)
    ranker = None
    if ranker_dir:
        from ontolink.ranking.ranker import Ranker

        ranker = Ranker(ranker_dir)
    elif prior != "auto" or with_features:
        raise click.UsageError("--prior and --with-features apply with --ranker")
    from ontolink.linking.nil import mark_nil, resolve_nil_threshold

    try:
        nil = resolve_nil_threshold(nil_threshold, loaded, reranked=reranker is not None or ranker is not None)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--nil-threshold") from None
    if top_k is None:
        top_k = trained_top_k(ranker, reranker)
    shards = None if phrases else input_shards(input_path)
    if output_dir and not shards:
        raise click.UsageError("--output-dir needs -i DIRECTORY or a glob of shards")
    if output_dir and output_path != "-":
        raise click.UsageError("give -o (one stream) or --output-dir (one shard per input shard), not both")
    batch_size = batch_size or (RERANK_BATCH_SIZE if reranker else LINK_BATCH_SIZE)
    stats = ReadStats()
    started = time.perf_counter()

    targets = [output_shard(shard, output_dir) for shard in shards] if output_dir else None
    # the first batches are small, so that output and the progress bar move within a second or two
    read = RecordBatchReader(batch_size, validate=validate_mention, skip_invalid=skip_invalid,
                             check_duplicate_ids=True, first_size=min(batch_size, FIRST_BATCH_SIZE))
    if phrases:
        read = PhraseBatches(phrases, read)
    desc = "link + rerank" if reranker else "link + rank" if ranker else "link"
    with start_engine(device) as engine:
        # (position of the input in shards or [input_path], linked record)
        linked = link_inputs(shards or ([PHRASES] if phrases else [input_path]), read, loaded, top_k=top_k, reranker=reranker, engine=engine,
                             device=device, stats=stats, ranker=ranker, prior=prior, with_features=with_features,
                             annotate_ids=annotate_ids)
        if nil is not None:
            linked = ((position, next(mark_nil((record,), nil))) for position, record in linked)
        if output_format == "tsv":
            # the fields chosen are the columns
            written = write_tsv(counting((record for _, record in linked), desc, "mention"), output_path,
                                FIRST_BATCH_SIZE, selection)
        elif targets:
            written = write_shards(_selected(linked, selection), shards, targets, desc, batch_size)
        else:
            with RecordWriter(output_path) as writer:
                writer.write_all(counting((record for _, record in _selected(linked, selection)), desc, "mention"),
                                 flush_every=FIRST_BATCH_SIZE)
            written = writer.count
    empty = getattr(loaded.name_index, "empty_spans", 0)
    if empty:
        summary(f"{empty} mention{'s' if empty != 1 else ''} had no word piece in its span after tokenisation: "
                "ranked by the context vectors of its [Ms] [Me] markers")
    seconds = time.perf_counter() - started
    rate = f" ({rate_text(written / seconds)} mentions/s)" if written and seconds > 0 else ""
    shard_count = f" from {len(shards)} shards" if shards else ""
    read_from = "" if phrases else f"; read {stats.summary()}"
    summary(f"linked {plural(written, 'mention')}{shard_count} in {seconds:.1f} s{rate}{read_from}")


# Mentions in the first batch (each next one twice as many, up to --batch-size), and records between flushes
FIRST_BATCH_SIZE = 256
PHRASES = "<arguments>"  # the input name of PHRASES, in messages


def rate_text(per_second):
    """A rate for the summary line: whole numbers, or two significant digits below 10 (three phrases in two
    seconds are "1.5 mentions/s", not "2" or "0")."""
    return f"{per_second:.0f}" if per_second >= 10 else f"{per_second:.2g}"


class PhraseBatches:
    """``read(path, stats)`` for PHRASES: Mention records {"id": "1", "mention": PHRASE}, ..., in batches."""

    def __init__(self, phrases, read):
        self.phrases = list(phrases)
        self.read = read

    def __call__(self, path, stats):
        from ontolink.core.io import record_batches
        from ontolink.core.records import validate_mention

        records = []
        for number, phrase in enumerate(self.phrases, 1):
            record = {"id": str(number), "mention": phrase}
            try:
                validate_mention(record)
            except ValueError as error:
                raise click.BadParameter(f"phrase {number}: {error}", param_hint="PHRASES") from None
            records.append(record)
        stats.records += len(records)
        return record_batches(records, self.read.batch_size, self.read.first_size)


def _selected(linked, selection):
    """``(position, record)`` pairs with each record cut to the fields ``selection`` keeps."""
    if not selection:
        return linked
    return ((position, selection(record)) for position, record in linked)


def write_tsv(records, output_path, flush_every, selection):
    """Write linked ``records`` as the candidates TSV (ontolink.formats.linked_tsv), its columns the fields of
    ``selection`` (an output_fields.FieldSelection); return how many mentions."""
    from ontolink.formats.linked_tsv import CandidateTSVWriter
    from ontolink.core.io import open_output

    with open_output(output_path) as stream:
        writer = CandidateTSVWriter(stream, selection.fields, selection.candidate_fields)
        for record in records:
            writer.write(record)
            if writer.count % flush_every == 0:
                writer.flush()
        writer.flush()
    return writer.count


def write_shards(linked, shards, targets, desc, flush_every):
    """Write ``(position, record)`` pairs, in order, to ``targets[position]``, one file per input shard
    (an empty shard gets an empty file); return how many records were written."""
    from ontolink.core.io import RecordWriter
    from ontolink.core.progress import counting

    written, next_position = 0, 0
    for position, pairs in itertools.groupby(linked, key=lambda pair: pair[0]):
        for empty in targets[next_position:position]:
            RecordWriter(empty).close()
        with RecordWriter(targets[position]) as writer:
            writer.write_all(counting((record for _, record in pairs), f"{desc} {Path(shards[position]).name}",
                                      "mention"), flush_every=flush_every)
        written += writer.count
        next_position = position + 1
    for empty in targets[next_position:]:
        RecordWriter(empty).close()
    return written
