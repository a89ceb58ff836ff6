import click

from toolbox.options import config_option, device_option, input_options, ontology_option, open_ontology, seed_option


@click.group("train")
def command():
    """Fine-tune models on pseudo pairs (ontolink make-pairs output).

    \b
    Examples:
      ontolink train retriever --ontology hpo -i pairs.jsonl models/retriever
      ontolink index --ontology hpo --model models/retriever idx/tuned
    """


@command.command("retriever")
@click.argument("directory", type=click.Path(file_okay=False))
@ontology_option()
@input_options
@click.option("--model", "backbone", help="Backbone: a sentence-transformers / transformers hub name or local "
                                          "path.  [default: sentence-transformers/all-MiniLM-L6-v2 from PyPI]")
@click.option("--negatives", type=click.Choice(["base", "rm-pcs", "pc-pos"]), default="base", show_default=True,
              help="Ontology-aware negatives: base; rm-pcs removes parents, children and siblings from the "
                   "negatives; pc-pos makes in-batch parents and children positives.")
@click.option("--epochs", type=click.IntRange(1), default=1, show_default=True, help="Fixed epochs; the last is kept.")
@click.option("--lr", "learning_rate", type=float, default=2e-5, show_default=True, help="AdamW learning rate.")
@click.option("--batch-size", type=click.IntRange(2), help="Mentions per batch.  [default: 512, or 128 under "
                                                            "5,120 pairs]")
@click.option("--max-length", type=click.IntRange(16, 512), default=128, show_default=True,
              help="Word pieces per mention and per entity input.")
@seed_option
@device_option
@click.option("--resume", is_flag=True, help="Continue from DIRECTORY.checkpoint (written after every epoch).")
@config_option
def retriever_command(directory, ontology, ontology_format, synonym_scopes, input_path, skip_invalid, backbone,
                      negatives, epochs, learning_rate, batch_size, max_length, seed, device, resume):
    """Fine-tune a bi-encoder retriever into DIRECTORY.

    Reads Pair records (a mention with context and its pseudo "entity_id").
    Mentions are encoded as "left [Ms] mention [Me] right", entities as
    "name [ENT] definition"; each batch is scored against its golds plus
    random entities (METHODS.md §1.5), with the --negatives strategy. The
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
    from toolbox.steps.train_retriever import read_pairs, train_retriever

    loaded = open_ontology(ontology, ontology_format, synonym_scopes)
    pairs = read_pairs(input_path, loaded, skip_invalid=skip_invalid)
    manifest = train_retriever(pairs, loaded, directory, backbone=backbone, negatives=negatives, epochs=epochs,
                               learning_rate=learning_rate, batch_size=batch_size, max_length=max_length, seed=seed,
                               device=device, resume=resume)
    warn(f"trained retriever on {len(pairs)} pairs ({negatives}, {epochs} epochs, final loss "
         f"{manifest['losses'][-1]:.4f}) into {directory} in {manifest['seconds']:.0f} s")


@command.command("reranker")
@click.argument("directory", type=click.Path(file_okay=False))
@ontology_option()
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False),
              help="The retriever's index (ontolink index --model RETRIEVER): its top-K are the candidates.")
@input_options
@click.option("--model", "backbone", help="Cross-encoder backbone: a transformers hub name or local path.  "
                                          "[default: sentence-transformers/all-MiniLM-L6-v2 from PyPI]")
@click.option("--top-k", type=click.IntRange(2), default=64, show_default=True, help="Retrieved candidates per pair.")
@click.option("--negatives", type=click.IntRange(1), default=20, show_default=True,
              help="Negatives sampled from the top-K for each pair.")
@click.option("--epochs", type=click.IntRange(1), default=3, show_default=True, help="Fixed epochs; the last is kept.")
@click.option("--lr", "learning_rate", type=float, default=2e-5, show_default=True, help="AdamW learning rate.")
@click.option("--batch-size", type=click.IntRange(1), default=32, show_default=True, help="Pairs per batch.")
@click.option("--max-length", type=click.IntRange(16, 512), default=256, show_default=True,
              help="Word pieces per (mention, entity) input.")
@seed_option
@device_option
@click.option("--resume", is_flag=True, help="Continue from DIRECTORY.checkpoint (written after every epoch).")
@config_option
def reranker_command(directory, ontology, ontology_format, synonym_scopes, index_dir, input_path, skip_invalid,
                     backbone, top_k, negatives, epochs, learning_rate, batch_size, max_length, seed, device, resume):
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
    from toolbox.io import warn
    from toolbox.steps.index import load_index
    from toolbox.steps.reranker import train_reranker
    from toolbox.steps.train_retriever import read_pairs

    loaded = open_ontology(ontology, ontology_format, synonym_scopes)
    index = load_index(index_dir, ontology=loaded, device=device)
    pairs = read_pairs(input_path, loaded, skip_invalid=skip_invalid)
    manifest = train_reranker(pairs, loaded, index, directory, backbone=backbone, top_k=top_k, negatives=negatives,
                              epochs=epochs, learning_rate=learning_rate, batch_size=batch_size,
                              max_length=max_length, seed=seed, device=device, resume=resume)
    warn(f"trained reranker on {len(pairs)} pairs ({epochs} epochs, final loss {manifest['losses'][-1]:.4f}) "
         f"into {directory} in {manifest['seconds']:.0f} s")
