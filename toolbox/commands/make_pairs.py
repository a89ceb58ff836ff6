import click

from toolbox.options import config_option, input_options, ontology_option, output_option


@click.command("make-pairs")
@ontology_option()
@click.option("--mentions", "mentions_path", required=True, type=click.Path(dir_okay=False, allow_dash=True),
              help="The unlabeled Mention JSONL to pair (the corpus given to select-entities).")
@input_options
@output_option
@click.option("--sources", default="name,alias", show_default=True,
              help="Pair sources: name (P1, m = an entity's name), alias (P2, m = a kept alias), synonym "
                   "(P_Syn, m = a curated synonym). name,alias is P_Gen; add synonym for P_Gen ∪ P_Syn.")
@click.option("--ambiguous", "ambiguous_path", type=click.Path(dir_okay=False),
              help="Write the dropped ambiguous mentions here (JSONL with the entities they matched).")
@config_option
def command(ontology, mentions_path, input_path, skip_invalid, output_path, sources,
            ambiguous_path):
    """Pair unlabeled mentions with entities by exact (normalised) match.

    Reads Filtered-aliases records (from filter; not needed with
    --sources name,synonym: pass -i /dev/null) and streams --mentions,
    writing a Pair record per matched mention: the Mention fields plus
    "entity_id", "source" (name, synonym or alias, in that precedence) and
    "alias" (the matched string). Matching lowercases, trims and collapses
    whitespace. A mention whose text matches several entities through the
    same source is ambiguous: it is counted, reported and dropped.

    \b
    Examples:
      ontolink make-pairs --ontology hpo --mentions mentions.jsonl -i filtered.jsonl > pairs.jsonl
      ontolink make-pairs --ontology hpo --mentions mentions.jsonl --sources name,alias,synonym < filtered.jsonl
      ontolink make-pairs --ontology hpo --mentions mentions.jsonl --sources synonym -i /dev/null
    """
    from toolbox.io import RecordWriter, display_name, read_records, warn
    from toolbox.records import validate_alias_record, validate_mention
    from toolbox.steps.make_pairs import PairStats, build_matcher, make_pairs

    loaded = ontology.load()
    chosen = tuple(part.strip() for part in sources.split(",") if part.strip())
    if input_path == "-" and mentions_path == "-":
        raise click.UsageError("stdin can feed either the aliases (-i) or --mentions, not both")
    alias_records = read_records(input_path, validate=validate_alias_record, skip_invalid=skip_invalid) \
        if "alias" in chosen else ()
    matcher = build_matcher(loaded, alias_records, chosen, source_name=display_name(input_path))
    stats = PairStats()
    ambiguous_writer = RecordWriter(ambiguous_path) if ambiguous_path else None
    shown = []

    def report(mention, source, entity_ids):
        if len(shown) < 3:
            shown.append(f"{mention['mention']!r} ({source}: {', '.join(entity_ids)})")
        if ambiguous_writer is not None:
            ambiguous_writer.write({**mention, "source": source, "entity_ids": entity_ids})

    mentions = read_records(mentions_path, validate=validate_mention, skip_invalid=skip_invalid,
                            check_duplicate_ids=True)
    try:
        with RecordWriter(output_path) as writer:
            writer.write_all(make_pairs(mentions, matcher, stats, on_ambiguous=report))
    finally:
        if ambiguous_writer is not None:
            ambiguous_writer.close()
    if shown:
        warn(f"ambiguous mentions dropped, e.g. {'; '.join(shown)}")
    warn(f"make-pairs: {stats.summary()}")
