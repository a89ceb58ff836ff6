"""`ontolink link` as one library function: ``link_files(LinkOptions(...))`` reads Mention records (a file, a
folder or glob of shards, or phrases), links them with the index (and a ranker or reranker), marks NIL, and writes
JSONL, a TSV or one shard per input shard, with the progress and the summary line the command prints."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

from ontolink.core.errors import UsageError
from ontolink.core.io import (plural, warn as summary, ReadStats, RecordBatchReader, input_shards, output_shard,
    RecordWriter, record_batches, open_output)
from ontolink.linking.options import LinkOptions, ranker_depth, trained_top_k
from ontolink.core.gc_pause import collection_paused
from ontolink.core.manifest import learned_or_none
from ontolink.core.progress import process_seconds, counting
from ontolink.core.records import validate_mention
from ontolink.engines import open_engine
from ontolink.formats.linked_tsv import CandidateTSVWriter
from ontolink.linking.output_fields import FieldSelection, parse_field_list
from ontolink.ontology.subsets import EntitySubset
from ontolink.reranking.base import load_reranker


def link_files(options: LinkOptions) -> int:
    """Link what ``options`` names and write it where they say, with progress and the summary line on stderr;
    returns how many mentions were written."""
    from ontolink.linking.link import LINK_BATCH_SIZE, RERANK_BATCH_SIZE, link_inputs  # late: loads numpy
    from ontolink.linking.nil import mark_nil  # late: loads numpy
    from ontolink.ranking.default import unmeasured  # late: loads numpy

    output_format, selection = _checked(options)
    loaded, reranker, ranker, by_default, nil = _load(options)
    top_k = options.top_k if options.top_k is not None else trained_top_k(ranker, reranker)
    if ranker is not None:
        # the ranker's tables are the index's, read from its artifact: loading, counted in start-up and not in the
        # rate of link's own work (LinkBatches finds it bound; a Ray worker binds its own copy)
        ranker.bind(loaded, prior=options.prior, top_k=ranker_depth(ranker, top_k))
    # likewise what this process's first search would make (a large flat index's int8 scan), when this process
    # searches (not a Ray run, whose workers load their own)
    if getattr(options.start_engine, "name", "local") == "local" and hasattr(loaded.name_index, "prepare_search"):
        loaded.name_index.prepare_search()
    shards = None if options.phrases else input_shards(options.input_path)
    if options.output_dir and not shards:
        raise UsageError("--output-dir needs -i DIRECTORY or a glob of shards")
    if options.output_dir and options.output_path != "-":
        raise UsageError("give -o (one stream) or --output-dir (one shard per input shard), not both")
    batch_size = options.batch_size or (RERANK_BATCH_SIZE if reranker else LINK_BATCH_SIZE)
    stats = ReadStats()
    started = time.perf_counter()
    startup = process_seconds()  # imports and loading: reported apart from the rate, which is link's own work
    # the first batches are small, so that output and the progress bar move within a second or two
    read: RecordBatchReader | PhraseBatches = RecordBatchReader(
        batch_size, validate=validate_mention, skip_invalid=options.skip_invalid, check_duplicate_ids=True,
        first_size=min(batch_size, FIRST_BATCH_SIZE))
    if options.phrases:
        read = PhraseBatches(options.phrases, read)
    with _engine(options) as engine:
        # (position of the input in shards or [input_path], linked record)
        linked = link_inputs(shards or ([PHRASES] if options.phrases else [options.input_path]), read, loaded,
                             top_k=top_k, reranker=reranker, engine=engine, device=options.device, stats=stats,
                             ranker=ranker, prior=options.prior, with_features=options.with_features,
                             annotate_ids=options.annotate_ids, exact_first=by_default is not None)
        if nil is not None:
            linked = ((position, next(mark_nil((record,), nil, retriever=by_default is not None)))
                      for position, record in linked)
        desc = "link + rerank" if reranker else "link + rank" if ranker else "link"
        targets = [output_shard(shard, options.output_dir) for shard in shards or ()] if options.output_dir else None
        written = _write(linked, output_format, selection, options.output_path, shards, targets, desc, batch_size)
    empty = getattr(loaded.name_index, "empty_spans", 0)
    if empty:
        summary(f"{empty} mention{'s' if empty != 1 else ''} had no word piece in its span after tokenisation: "
                "ranked by the context vectors of its [Ms] [Me] markers")
    seconds = time.perf_counter() - started
    rate = f" ({rate_text(written / seconds)} mentions/s)" if written and seconds > 0 else ""
    shard_count = f" from {len(shards)} shards" if shards else ""
    read_from = "" if options.phrases else f"; read {stats.summary()}"
    ranked = f"; ranked by the index's {by_default} ranker" if by_default is not None else ""
    if by_default == "packaged" and unmeasured(loaded.manifest):
        ranked += " (not measured on this ontology: --no-ranker writes the retriever's order)"
    if loaded.allowed_entities is not None:
        ranked += f"; candidates among {int(loaded.allowed_entities.sum()):,} of {len(loaded.entity_ids):,} entities"
    started_in = f"; start-up {startup:.1f} s" if startup is not None else ""
    summary(f"linked {plural(written, 'mention')}{shard_count} in {seconds:.1f} s{rate}{ranked}{started_in}"
            f"{read_from}")
    return written


def _checked(options: LinkOptions) -> tuple[str, Any]:
    """The output format and the fields kept, after refusing options that do not go together."""
    if options.ranker_dir and options.reranker_dir:
        raise UsageError("give --ranker or --reranker, not both")
    if options.ranker_dir and options.no_ranker:
        raise UsageError("give --ranker or --no-ranker, not both")
    if options.phrases and options.input_path != "-":
        raise UsageError("give PHRASES or -i FILE, not both")
    output_format = options.output_format or (
        "tsv" if str(options.output_path).lower().endswith((".tsv", ".tsv.gz")) else "jsonl")
    try:
        selection = FieldSelection(parse_field_list(options.fields_text, "--fields"),
                                   parse_field_list(options.candidate_fields_text, "--candidate-fields"),
                                   options.no_context)
    except ValueError as error:
        raise UsageError(str(error)) from None
    if output_format == "tsv" and options.output_dir:
        raise UsageError("--to tsv writes one stream (-o): it does not combine with --output-dir")
    return output_format, selection


def _load(options: LinkOptions) -> tuple[Any, Any, Any, str | None, float | None]:
    """(the index, the reranker or None, the ranker or None, which default ranker it is ("packaged", "fitted") or
    None, the NIL threshold or None) that ``options`` name."""
    from ontolink.indexes.artifact import load_index  # late: loads numpy
    from ontolink.linking.nil import resolve_nil_threshold  # late: loads numpy

    # the ontology is checked by its content hash, never parsed; what is loaded lives until the end: out of
    # the collector's walks
    with collection_paused(freeze=True):
        loaded = load_index(options.index_dir, ontology=options.ontology, device=options.device)
    # --entities / --where: chosen from the index's own ids and types, candidates only among them
    loaded.restrict(EntitySubset(options.entities_path, options.where).choose(
        loaded.entity_ids, loaded.entity_types, f"the index {options.index_dir}"))

    reranker = None
    if options.reranker_dir:
        reranker = load_reranker(options.reranker_dir, device=options.device)
        reranker.check_index(loaded)
        reranker = learned_or_none(reranker, "reranker", options.reranker_dir)
    ranker, by_default = None, None
    if options.ranker_dir:
        from ontolink.ranking.ranker import Ranker  # late: loads numpy

        ranker = learned_or_none(Ranker(options.ranker_dir), "ranker", options.ranker_dir)
    if ranker is None and reranker is None and not options.no_ranker:
        # none asked for, or one not applied (its trainer kept its start): link as without it
        from ontolink.ranking.default import index_ranker  # late: loads numpy

        ranker, which = index_ranker(loaded)
        by_default = which if ranker is not None else None
    if ranker is None and not options.ranker_dir and (options.prior != "auto" or options.with_features):
        raise UsageError("--prior and --with-features apply with a ranker")
    try:
        # the default ranker's scores are probabilities: NIL reads the retriever's best score, as without one
        nil = resolve_nil_threshold(options.nil_threshold, loaded,
                                    reranked=reranker is not None or (ranker is not None and by_default is None))
    except ValueError as error:
        raise UsageError(str(error), option="--nil-threshold") from None
    return loaded, reranker, ranker, by_default, nil


def _engine(options: LinkOptions) -> Any:
    """The engine ``options.start_engine`` opens (cli.options.engine_options), or this process."""
    if options.start_engine is not None:
        return options.start_engine(options.device)

    return open_engine(device=options.device)


def _write(linked, output_format, selection, output_path, shards, targets, desc, batch_size) -> int:
    """Write ``(position, record)`` pairs as a TSV, one shard per input shard or one JSONL stream."""
    if output_format == "tsv":  # the fields chosen are the columns
        return write_tsv(counting((record for _, record in linked), desc, "mention"), output_path,
                         FIRST_BATCH_SIZE, selection)
    if targets:
        return write_shards(_selected(linked, selection), shards, targets, desc, batch_size)
    with RecordWriter(output_path) as writer:
        writer.write_all(counting((record for _, record in _selected(linked, selection)), desc, "mention"),
                         flush_every=FIRST_BATCH_SIZE)
    return writer.count


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
        records = []
        for number, phrase in enumerate(self.phrases, 1):
            record = {"id": str(number), "mention": phrase}
            try:
                validate_mention(record)
            except ValueError as error:
                raise UsageError(f"phrase {number}: {error}", option="PHRASES") from None
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
