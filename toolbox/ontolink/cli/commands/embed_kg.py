"""`ontolink embed-kg`: train KG embeddings (RDF2Vec or a PyKEEN model) into a directory."""

import json

import click

from ontolink.cli.options import quiet_option
from ontolink.cli.options import config_option, device_option, force_option, ontology_option, seed_option
from ontolink.core.registry import LazyChoice
from ontolink.kg.options import EmbedKgOptions


def _triple_formats():
    from ontolink.formats.triples import format_names  # late: loads numpy

    return format_names()


def _json_object(ctx, param, value):
    if value is None:
        return None
    try:
        parsed = json.loads(value)
    except ValueError as error:
        raise click.BadParameter(f"not JSON ({error})", ctx=ctx, param=param) from None
    if not isinstance(parsed, dict):
        raise click.BadParameter("expected a JSON object, e.g. '{\"dropout_0\": 0.2}'", ctx=ctx, param=param)
    return parsed


@click.command("embed-kg")
@force_option("kg-embeddings")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("-i", "--input", "input_path", default=EmbedKgOptions.input_path, show_default=True, metavar="FILE",
              type=click.Path(allow_dash=True),
              help="Triples: headerless head<TAB>relation<TAB>tail TSV, or Triple / Text–triple pair JSONL "
                   "('-' is stdin; .gz is read transparently).")
@click.option("--format", "fmt", type=LazyChoice(_triple_formats),
              help="Force the triple format.  [default: from the file name; stdin is sniffed]")
@click.option("--skip-invalid", is_flag=True, help="Count, report and skip bad lines instead of stopping.")
@ontology_option(required=False, help_text="Instead of -i: the triples of this ontology's own graph (child is_a "
                                           "parent), a file or 'hpo'; the manifest records its content hash, and "
                                           "`align --ontology` refuses the embeddings for another version.")
@click.option("--method", default=EmbedKgOptions.method, show_default=True, metavar="rdf2vec|MODEL",
              help="rdf2vec, or any PyKEEN model by name: RotatE, TuckER, TransE, DistMult, ComplEx, ...")
@click.option("--dim", type=click.IntRange(1), help="Embedding dimension.  [default: rdf2vec 200, RotatE 500 "
                                                      "(complex: stored as 1000 reals), TuckER 200, "
                                                      "other PyKEEN models their own default]")
@click.option("--relation-dim", type=click.IntRange(1), help="Relation dimension (TuckER).  [default: 65]")
@click.option("--epochs", type=click.IntRange(1),
              help="rdf2vec: Word2Vec epochs [25]; PyKEEN: at most this many epochs, with early stopping [300].")
# RDF2Vec
@click.option("--depth", type=click.IntRange(1), help="rdf2vec: hops per walk.  [default: 4]")
@click.option("--walks", type=click.IntRange(1), help="rdf2vec: walks per entity (duplicates dropped).  "
                                                      "[default: 200]")
@click.option("--window", type=click.IntRange(1), help="rdf2vec: Word2Vec window.  [default: 5]")
@click.option("--reverse/--no-reverse", default=None,
              help="rdf2vec: walks may go against an edge (token r⁻¹), so tail-only entities get walks.  "
                   "[default: reverse]")
@click.option("--workers", type=click.IntRange(1),
              help="rdf2vec: Word2Vec threads; 1 is bit-reproducible, more is faster.  [default: 1]")
# PyKEEN
@click.option("--batch-size", type=click.IntRange(1), help="PyKEEN: training batch.  [default: 256]")
@click.option("--lr", type=click.FloatRange(0, min_open=True), help="PyKEEN: Adam learning rate.  "
                                                                     "[default: 0.001]")
@click.option("--negatives", type=click.IntRange(1), help="PyKEEN sLCWA: negatives per positive.  "
                                                          "[default: RotatE 467, others 1]")
@click.option("--margin", type=float, help="PyKEEN: loss margin.  [default: RotatE 9]")
@click.option("--adversarial-temperature", type=float,
              help="PyKEEN: self-adversarial sampling temperature (NSSA loss).  [default: RotatE 0.91]")
@click.option("--label-smoothing", type=click.FloatRange(0, 1), help="PyKEEN LCWA: label smoothing.  "
                                                                     "[default: TuckER 0.1]")
@click.option("--validation-fraction", type=click.FloatRange(0, 1, max_open=True),
              help="PyKEEN: share of triples held out for early stopping on validation MRR.  [default: 0.1]")
@click.option("--eval-every", type=click.IntRange(1), help="PyKEEN: epochs between validation MRR checks.  "
                                                           "[default: 10]")
@click.option("--patience", type=click.IntRange(1), help="PyKEEN: checks without improvement before stopping.  "
                                                         "[default: 3]")
@click.option("--model-kwargs", callback=_json_object, metavar="JSON",
              help="PyKEEN: further model keywords, e.g. '{\"dropout_0\": 0.2}'.")
@device_option
@seed_option
@quiet_option
@config_option
def command(**options):
    """Train KG embeddings on triples and write them to DIRECTORY.

    DIRECTORY gets manifest.json, embeddings.safetensors (entity and relation
    vectors), ids.json (their row order) and training_curve.jsonl. It is
    written under a temporary name and renamed when complete.

    RDF2Vec: random walks (--depth hops, --walks per entity) and gensim
    Word2Vec skip-gram; entity and relation vectors come from the same walks.
    PyKEEN models train with their published settings (RotatE:
    dim 500, NSSA margin 9, temperature 0.91, 467 negatives; TuckER: 200/65,
    LCWA, label smoothing 0.1), 10% of triples held out, early stopping on
    filtered validation MRR. Complex vectors (RotatE) are stored as real
    vectors of twice the dimension: [real | imaginary].

    \b
    Examples:
      ontolink embed-kg -i kg.tsv emb/rdf2vec
      ontolink embed-kg -i kg.tsv --method RotatE emb/rotate
      ontolink embed-kg -i kg.tsv --method TuckER --epochs 100 emb/tucker
      ontolink embed-kg -i pairs.jsonl --method TransE --dim 64 --epochs 20 emb/transe
      ontolink embed-kg --ontology hpo --method TransE --epochs 20 emb/hpo-transe
    """
    from ontolink.kg.embed import embed_kg_files  # late: loads numpy

    embed_kg_files(EmbedKgOptions(**options))
