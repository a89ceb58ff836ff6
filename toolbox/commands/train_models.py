import click

from toolbox.options import config_option, device_option, input_options, ontology_option, seed_option


def fit_options(epochs, learning_rate, batch_size=None, batch_help="Pairs per batch.", max_length=128):
    """The options every trainer shares (its own defaults): epochs, lr, batch size, length, seed, device, resume."""
    batch_default = {"default": batch_size, "show_default": True} if batch_size else {}
    decorators = [
        click.option("--epochs", type=click.IntRange(1), default=epochs, show_default=True,
                     help="Fixed epochs; the last is kept."),
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


def training_inputs(function):
    """DIRECTORY (the model written), --ontology and the pairs read: what every trainer takes."""
    return click.argument("directory", type=click.Path(file_okay=False))(ontology_option()(input_options(function)))


def _read_pairs(path, ontology, skip_invalid=False, accept_gold=False):
    from toolbox.io import read_records
    from toolbox.steps.fine_tune_retriever import pair_validator

    return list(read_records(path, validate=pair_validator(ontology, accept_gold), skip_invalid=skip_invalid))


@click.group("train")
def command():
    """Fine-tune models on pseudo pairs (ontolink make-pairs output).

    retriever: a single-vector bi-encoder; reranker: a cross-encoder over a
    retriever's top-K; multivector: a late-interaction (token-level) linker.

    \b
    Examples:
      ontolink train retriever --ontology hpo -i pairs.jsonl models/retriever
      ontolink index --ontology hpo --model models/retriever idx/tuned
      ontolink train multivector --ontology hpo -i pairs.jsonl models/xtr
      ontolink index --ontology hpo --method multivector --model models/xtr idx/xtr
    """


@command.command("retriever")
@training_inputs
@click.option("--model", "backbone", help="Backbone: a sentence-transformers / transformers hub name or local "
                                          "path.  [default: sentence-transformers/all-MiniLM-L6-v2 from PyPI]")
@click.option("--negatives", type=click.Choice(["base", "rm-pcs", "pc-pos"]), default="base", show_default=True,
              help="Ontology-aware negatives: base; rm-pcs removes parents, children and siblings from the "
                   "negatives; pc-pos makes in-batch parents and children positives.")
@click.option("--pooling", type=click.Choice(["span", "mean"]), default="span", show_default=True,
              help="span: mean over the mention's own tokens and the entity's name tokens (context and "
                   "definition inform them through attention), a good start before any training; mean: over "
                   "the whole input.")
@fit_options(epochs=1, learning_rate=2e-5, batch_help="Mentions per batch.  [default: 512, or 128 under 5,120 pairs]")
@config_option
def retriever_command(directory, ontology, input_path, skip_invalid, backbone,
                      negatives, pooling, epochs, learning_rate, batch_size, max_length, seed, device, resume):
    """Fine-tune a bi-encoder retriever into DIRECTORY.

    Reads Pair records (a mention with context and its pseudo "entity_id").
    Mentions are encoded as "left [Ms] mention [Me] right", entities as
    "name [ENT] definition"; each batch is scored against its golds plus
    random entities, with the --negatives strategy. The
    directory (manifest.json + safetensors) is what `ontolink index --model`
    takes; a checkpoint is kept after every epoch for --resume.

    \b
    Examples:
      ontolink train retriever --ontology hpo -i pairs.jsonl --negatives pc-pos models/pc-pos
      ontolink train retriever --ontology hpo -i pairs.jsonl --epochs 4 --resume models/r4
      ontolink train retriever --ontology hpo -i pairs.jsonl --model cambridgeltl/SapBERT-from-PubMedBERT-fulltext \\
        --device cuda --batch-size 512 models/sapbert
    """
    from toolbox.io import warn
    from toolbox.steps.fine_tune_retriever import train_retriever

    loaded = ontology.load()
    pairs = _read_pairs(input_path, loaded, skip_invalid=skip_invalid)
    manifest = train_retriever(pairs, loaded, directory, backbone=backbone, negatives=negatives, epochs=epochs,
                               learning_rate=learning_rate, batch_size=batch_size, max_length=max_length, seed=seed,
                               device=device, resume=resume, pooling=pooling)
    warn(f"trained retriever on {len(pairs)} pairs ({negatives}, {epochs} epochs, final loss "
         f"{manifest['losses'][-1]:.4f}) into {directory} in {manifest['seconds']:.0f} s")


@command.command("reranker")
@training_inputs
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False),
              help="The retriever's index (ontolink index --model RETRIEVER): its top-K are the candidates.")
@click.option("--model", "backbone", help="Cross-encoder backbone: a transformers hub name or local path.  "
                                          "[default: sentence-transformers/all-MiniLM-L6-v2 from PyPI]")
@click.option("--top-k", type=click.IntRange(2), default=64, show_default=True, help="Retrieved candidates per pair.")
@click.option("--negatives", type=click.IntRange(1), default=20, show_default=True,
              help="Negatives sampled from the top-K for each pair.")
@click.option("--head-lr", "head_learning_rate", type=float,
              help="Learning rate of the new scoring head (w of w·[CLS]).  [default: --lr]")
@fit_options(epochs=3, learning_rate=2e-5, batch_size=32, max_length=256)
@config_option
def reranker_command(directory, ontology, index_dir, input_path, skip_invalid,
                     backbone, top_k, negatives, head_learning_rate, epochs, learning_rate, batch_size, max_length,
                     seed, device, resume):
    """Fine-tune a cross-encoder reranker into DIRECTORY.

    Reads Pair records; for each, the --index retrieves the top-K candidates
    (the pseudo gold replaces the last one when missing) and the model
    learns to score "left [Ms] mention [Me] right [SEP] name [ENT]
    definition" for the gold above --negatives sampled candidates
    (cross-entropy). `ontolink link --reranker DIRECTORY` then rescores.

    \b
    Examples:
      ontolink train reranker --ontology hpo --index idx/tuned -i pairs.jsonl models/reranker
      ontolink link --index idx/tuned --reranker models/reranker -i mentions.jsonl -o linked.jsonl
    """
    from toolbox.artifacts.index import load_index
    from toolbox.io import warn
    from toolbox.steps.reranker import train_reranker

    loaded = ontology.load()
    index = load_index(index_dir, ontology=loaded, device=device)
    pairs = _read_pairs(input_path, loaded, skip_invalid=skip_invalid)
    manifest = train_reranker(pairs, loaded, index, directory, backbone=backbone, top_k=top_k, negatives=negatives,
                              epochs=epochs, learning_rate=learning_rate, head_learning_rate=head_learning_rate,
                              batch_size=batch_size, max_length=max_length, seed=seed, device=device, resume=resume)
    warn(f"trained reranker on {len(pairs)} pairs ({epochs} epochs, final loss {manifest['losses'][-1]:.4f}) "
         f"into {directory} in {manifest['seconds']:.0f} s")


@command.command("multivector")
@training_inputs
@click.option("--model", "backbone", help="Backbone: a transformers hub name or local path.  "
                                          "[default: sentence-transformers/all-MiniLM-L6-v2 from PyPI]")
@click.option("--dimension", type=click.IntRange(8), default=128, show_default=True,
              help="Token vector size after the linear projection.")
@click.option("--kb", type=click.Choice(["name", "entity"]), default="name", show_default=True,
              help="name: every name its own candidate, loss = marginal likelihood of the gold's names; "
                   "entity: one document per entity (its names joined), plain cross-entropy.")
@click.option("--top-k", type=click.IntRange(1), default=2048, show_default=True,
              help="XTR: a mention token counts a candidate token only among its top-k in the batch.")
@click.option("--no-temperature", is_flag=True, help="Fix τ = 1 instead of learning it (CLIP-style).")
@click.option("--hard-negatives", type=click.IntRange(0), default=32, show_default=True,
              help="Names of other entities per mention, mined with the current model every epoch (0: in-batch only).")
@click.option("--query-expansion", is_flag=True,
              help="Append [MASK] tokens to the mention, trained to match gold-name tokens it lacks (λ = 0.3).")
@click.option("--head-lr", "head_learning_rate", type=float, default=1e-3, show_default=True,
              help="AdamW learning rate of the new projection and the temperature.")
@fit_options(epochs=5, learning_rate=3e-6, batch_size=4, batch_help="Mentions per batch.")
@config_option
def multivector_command(directory, ontology, input_path, skip_invalid, backbone,
                        dimension, kb, top_k, no_temperature, hard_negatives, query_expansion, head_learning_rate,
                        epochs, learning_rate, batch_size, max_length, seed, device, resume):
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
    from toolbox.io import warn
    from toolbox.steps.fine_tune_multivector import train_multivector

    loaded = ontology.load()
    pairs = _read_pairs(input_path, loaded, skip_invalid=skip_invalid, accept_gold=True)
    manifest, skipped = train_multivector(
        pairs, loaded, directory, backbone=backbone, kb=kb, dimension=dimension, temperature=not no_temperature,
        top_k=top_k, hard_negatives=hard_negatives, query_expansion=query_expansion, epochs=epochs,
        learning_rate=learning_rate, head_learning_rate=head_learning_rate, batch_size=batch_size,
        max_length=max_length, seed=seed, device=device, resume=resume)
    warn(f"trained multi-vector model on {len(pairs) - skipped} pairs ({kb}-based KB, {epochs} epochs, final loss "
         f"{manifest['losses'][-1]:.4f}, τ {manifest['temperature']}) into {directory} in {manifest['seconds']:.0f} s")
