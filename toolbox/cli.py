"""The `ontolink` command: thin click wrappers around the step functions in toolbox.steps."""

import importlib
import os

import click

from toolbox import __version__
from toolbox.errors import OntolinkError


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


@click.group(cls=OntolinkGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="ontolink")
def cli():
    """Link scientific text to ontologies and knowledge graphs.

    Every command reads and writes JSON Lines on stdin/stdout (or -i/-o, .gz
    allowed), so commands chain with pipes. Logs and progress go to stderr.

    \b
    Quick start (embedded HPO and the packaged all-MiniLM-L6-v2):
      ontolink index --ontology hpo idx/hpo
      echo '{"id": "m1", "mention": "seizures"}' | ontolink link --index idx/hpo --top-k 3
      ontolink eval linked.jsonl --ontology hpo

    Exit status: 0 success, 2 bad input or usage (FILE:LINE: message), 1 other failures.
    Set ONTOLINK_TRACEBACK=1 to see tracebacks.
    """


# Commands in toolbox/commands/ (one module each, a click command named `command`), in the
# order of a pipeline. Add a line here to register one; a command that is not ready is not listed.
COMMAND_MODULES = [
    "convert",
    "annotate",
    "index",
    "link",
    "eval",
    "select_entities",
    "gen_aliases",
    "filter",
    "make_pairs",
    "train",
    "embed_kg",
    "align",
]
for _module in COMMAND_MODULES:
    cli.add_command(importlib.import_module(f"toolbox.commands.{_module}").command)


def main():
    cli(prog_name="ontolink")
