import time

import click

from ontolink.core.io import plural, warn as summary
from ontolink.core.progress import counting
from ontolink.cli.options import aliases_option, config_option, device_option, engine_options, input_options, \
    ontology_option, output_option
from ontolink.recognition.matcher import NESTING_RULES, SHARED_NAMES
from ontolink.core.registry import LazyChoice


def _readers():
    from ontolink.formats import reader_names

    return reader_names()


@click.command("annotate")
@input_options(help_text="Documents: PubTator, BioC XML or JSON, or plain text (--from, else the file name)"
                          " ('-' is stdin; .gz is read transparently).")
@output_option(help_text="Mention records found, JSONL ('-' is stdout; .gz is compressed).")
@click.option("--from", "source_format", type=LazyChoice(_readers),
              help="Document format.  [default: from the file name; stdin: text]")
@ontology_option(required=True, help_text="Ontology whose names are looked for: a file or 'hpo'.")
@click.option("--roots", help="Comma-separated ids: only these entities and their descendants are looked for "
                              "(e.g. HP:0000118, HPO's phenotypic abnormalities).")
@click.option("--min-chars", type=click.IntRange(1), default=3, show_default=True,
              help="Names shorter than this (after folding) are not looked for.")
@click.option("--nesting", type=click.Choice(NESTING_RULES), default="ancestor", show_default=True,
              help="Names inside a longer match that are kept too: none, all, or those whose entity is the outer "
                   "entity or one of its ancestors (\"colitis\" in \"ulcerative colitis\", as GSC+ annotates).")
@click.option("--nested", is_flag=True, help="Same as --nesting all.")
@click.option("--any-order/--in-order", default=True, show_default=True,
              help="Match a name's content words in any order (\"absence of speech\" for \"Absent speech\").")
@click.option("--word-forms/--no-word-forms", default=True, show_default=True,
              help="Join a word's inflections and derivations (Snowball stems, then ending alternations learned "
                   "from the ontology's synonyms: \"dysplastic\" for \"dysplasia\"); --no-word-forms: "
                   "stems only.")
@click.option("--max-gaps", type=click.IntRange(0), default=0, show_default=True,
              help="Other content words allowed between a name's words.")
@click.option("--optional-modifiers/--no-optional-modifiers", default=False, show_default=True,
              help="Also find a name without its modifiers (words that, added to a parent's name, make the "
                   "child's name in 25 entities or more: \"vertical talus\" for Congenital vertical talus), where "
                   "no other name has the words left.")
@click.option("--equivalent-words/--no-equivalent-words", default=True, show_default=True,
              help="Also find a name with one word replaced by one the ontology uses for it: two names of one "
                   "entity that differ in that one word, in 15 entities or more (\"anomaly\" for "
                   "\"abnormality\", \"renal\" for \"kidney\").")
@click.option("--wordnet", "wordnet_dir", type=click.Path(), envvar="ONTOLINK_WORDNET",
              help="A WordNet database, a directory or a zip holding data.adj and data.noun (/usr/share/wordnet "
                   "of Debian's wordnet-base; NLTK's corpora/wordnet.zip): its pertainyms are equivalent words "
                   "too (\"otic\" for \"ear\").  [env: ONTOLINK_WORDNET]")
@aliases_option
@click.option("--shared-names", type=click.Choice(SHARED_NAMES), default="general", show_default=True,
              help="A name (once keyed) of an entity and of one of its ancestors: 'general' finds the ancestor only "
                   "(\"ear anomalies\": Abnormality of the ear, not also Abnormality of the outer ear); 'all' "
                   "finds both.")
@click.option("--coordination/--no-coordination", default=True, show_default=True,
              help="Also the names a coordination abbreviates (\"palmar and plantar pits\": Palmar pits on the "
                   "whole phrase, \"expansion\": \"palmar pits\"), as GSC+ annotates them.")
@click.option("--abbreviations/--no-abbreviations", default=False, show_default=True,
              help="Also each occurrence of a short form defined in the document (\"brachydactyly type C (BDC)\") "
                   "whose long form is a name.")
@click.option("--text-field", default="text", show_default=True,
              help="With --from jsonl (JSON Lines documents, {\"id\", \"text\"}): the field holding the text.")
@click.option("--type", "entity_type", default="Entity", show_default=True, help="The \"type\" of every mention.")
@click.option("--index", "index_dir", type=click.Path(file_okay=False),
              help="Also ask this index about word n-grams the dictionary missed.")
@click.option("--dense-threshold", type=float, default=0.9, show_default=True,
              help="With --index: an n-gram is a mention when its best name scores at least this.")
@click.option("--span-scorer", "span_scorer_dir", type=click.Path(file_okay=False),
              help="With --index: a span scorer from `ontolink train span-scorer`; only the n-grams it passes are "
                   "asked about (a sixth of them on abstracts: the index encodes that much less).")
@click.option("--max-words", type=click.IntRange(1), default=4, show_default=True,
              help="With --index: longest n-gram asked about.")
@click.option("--context-chars", type=click.IntRange(0), default=0, show_default=True,
              help="Context kept on each side of a mention (0: the whole document text; 5,000 characters in "
                   "documents over 100,000).")
@click.option("--batch-size", type=click.IntRange(1), default=32, show_default=True,
              help="With --engine ray: documents per batch sent to a worker.")
@device_option
@engine_options
@config_option
def command(input_path, skip_invalid, output_path, source_format, ontology, roots, min_chars, nesting, nested,
            any_order, word_forms, max_gaps, optional_modifiers, equivalent_words, wordnet_dir, alias_files,
            shared_names, coordination, abbreviations, text_field, entity_type, index_dir, dense_threshold,
            span_scorer_dir, max_words, context_chars, batch_size, device, start_engine):
    """Find mentions of an ontology's names in documents: Mention JSONL for `link`.

    Reads plain text (one document per line, 'ID<TAB>text' or just text),
    JSON Lines documents (--from jsonl, {"id", "text"}; --text-field), PubTator
    or BioC documents (their annotations are ignored) and writes a
    Mention record per name found: {"id": "DOC:START-END", "doc_id",
    "start", "end", "mention", "context_left", "context_right", "type",
    "matched_by", "matched_ids"}, and for a name expanded from a
    coordination "expansion", the name written out ("palmar pits" for
    "palmar and plantar pits"), which `link` searches (for a short form,
    its long form). A name or synonym
    is found where its content words (function words such as "of" and
    "the" dropped) occur
    together inside one clause, in any order and in any word form
    ("malformations of the kidneys" for "Kidney malformation"); a one-word
    name only in its own plural or spelling variants; short all-capital
    abbreviations exactly. Overlapping matches keep the one covering more
    words, then the more specific name; --nesting says which names inside
    it are kept too. With --index, word
    n-grams the dictionary missed become mentions when their best name
    scores at least --dense-threshold; with --span-scorer, only the
    n-grams a scorer fitted by `ontolink train span-scorer` passes. Documents stream: output pipes into
    `ontolink link`.

    \b
    Examples:
      ontolink annotate --ontology hpo --roots HP:0000118 -i abstracts.txt | ontolink link --index idx/hpo
      ontolink annotate --ontology hpo -i corpus.pubtator --from pubtator -o mentions.jsonl
      ontolink annotate --ontology hpo --from jsonl --text-field abstract < docs.jsonl > mentions.jsonl
      ontolink annotate --ontology hpo -i abstracts.txt --engine ray --workers 4 -o mentions.jsonl
      ontolink annotate --ontology hpo --index idx/hpo --dense-threshold 0.92 -i abstracts.txt
      ontolink annotate --ontology hpo --aliases kept.jsonl -i abstracts.txt | ontolink link --index idx/hpo-aliases
    """
    from ontolink.formats import Counted, Problems, document_format, resolve_format
    from ontolink.core.gc_pause import collection_paused
    from ontolink.core.io import RecordWriter
    from ontolink.recognition.matcher import ConceptMatcher
    from ontolink.recognition.annotate import LONG_CONTEXT, LONG_DOCUMENT, AnnotateBatches, annotate_documents, \
        document_batches

    if source_format is None and input_path == "-":
        source_format = "text"
    with collection_paused(freeze=True):  # what is loaded lives until the end: out of the collector's walks
        loaded = ontology.load()
    root_ids = [part.strip() for part in roots.split(",") if part.strip()] if roots else None
    if root_ids:
        from ontolink.core.errors import InputError

        missing = [root for root in root_ids if root not in loaded]
        if missing:
            raise InputError(f"--roots: {', '.join(missing)} not in the ontology {loaded.label}")
    started = time.perf_counter()
    matcher_options = dict(roots=root_ids, min_characters=min_chars, max_gaps=max_gaps, word_forms=word_forms,
                           any_order=any_order, optional_modifiers=optional_modifiers,
                           shared_names=shared_names, equivalents=equivalent_words)
    if wordnet_dir:
        from ontolink.recognition.equivalents import read_pertainyms

        matcher_options["pertainyms"] = read_pertainyms(wordnet_dir)
    if alias_files:
        from ontolink.recognition.extra_names import read_extra_names

        matcher_options["extra_names"] = read_extra_names(alias_files, loaded)
    options = dict(entity_type=entity_type, nesting="all" if nested else nesting, coordination=coordination,
                   abbreviations=abbreviations, dense_threshold=dense_threshold, max_words=max_words,
                   context_characters=context_chars)
    if span_scorer_dir and not index_dir:
        raise click.UsageError("--span-scorer chooses the n-grams asked of an --index: give both")
    span_scorer = None
    if span_scorer_dir:
        from ontolink.recognition.span_scorer_artifact import load_span_scorer

        span_scorer = load_span_scorer(span_scorer_dir)
    with collection_paused(freeze=True):
        matcher = ConceptMatcher(loaded, **matcher_options)
        dense = None
        if index_dir:
            from ontolink.indexes.artifact import load_index

            dense = load_index(index_dir, ontology=loaded, device=device)
    problems = Problems(skip_invalid)
    reader = document_format(resolve_format(input_path, source_format))
    if hasattr(reader, "text_field"):  # JSON Lines documents
        reader.text_field = text_field
    stats = {}
    # a bar per document (on a terminal): with --index the dense spans take seconds a document
    documents = Counted(counting(reader.read(input_path, problems), "annotate", "document"))
    with RecordWriter(output_path) as writer:
        if start_engine.name == "local":
            writer.write_all(annotate_documents(documents, matcher, dense=dense, stats=stats, span_scorer=span_scorer,
                                                **options), flush_every=1)
        else:
            annotate = AnnotateBatches(ontology, matcher_options, options, index_dir, device, matcher, dense,
                                       span_scorer_dir, span_scorer)
            with start_engine(device) as engine:
                for records, counts in engine.map(annotate, document_batches(documents, batch_size)):
                    writer.write_all(records, flush_every=1)
                    for key, count in counts.items():
                        stats[key] = stats.get(key, 0) + count
    seconds = time.perf_counter() - started
    skipped = f"; {plural(problems.skipped, 'invalid line')} skipped" if problems.skipped else ""
    if stats.get("empty"):
        skipped += f"; {plural(stats['empty'], 'document')} without text"
    if stats.get("long"):
        skipped += (f"; {plural(stats['long'], 'document')} over {LONG_DOCUMENT:,} characters (context cut to "
                    f"{LONG_CONTEXT:,})")
    # the names counted as `index` counts them (every name and synonym of the entities looked for), then the
    # distinct forms they fold to, which is what the matcher holds
    looked_for = [entity for entity in loaded if matcher.allowed is None or entity.id in matcher.allowed]
    names = sum(len(loaded.named(entity)) for entity in looked_for)
    extra_names = matcher_options.get("extra_names", {})
    aliases = sum(len(extra_names.get(entity.id, ())) for entity in looked_for)
    with_aliases = f" and {plural(aliases, 'alias', 'aliases')}" if aliases else ""
    summary(f"found {plural(writer.count, 'mention')} in {plural(documents.count, 'document')} ({plural(names, 'name')} "
            f"of {plural(len(looked_for), 'entity', 'entities')}{with_aliases}, "
            f"{matcher.size} distinct once folded"
            f"{f', {matcher.variants} more with equivalent words' if matcher.variants else ''}) in {seconds:.1f} s"
            f"{skipped}")

