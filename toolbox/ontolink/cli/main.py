"""The `ontolink` command: the click group, its error handling and the lazily imported commands of ontolink.cli.commands."""

import functools
import importlib
import inspect
import os
import sys

import click

from ontolink.version import __version__
from ontolink.core.errors import OntolinkError, UsageError
from ontolink.core.extras import missing_extra
from ontolink.core.gc_pause import one_command_process
from ontolink.core.io import forget_reads
from ontolink.core.progress import set_quiet

INTERRUPTED = 130
PIPE_CLOSED = 141


def _show_tracebacks():
    return os.environ.get("ONTOLINK_TRACEBACK", "").strip().lower() not in ("", "0", "false", "no", "off")


def _silence_stdout():
    """Point stdout at /dev/null, so that flushing it at exit raises no second error (a closed pipe, a full
    device)."""
    if sys.stdout is None:  # started with stdout closed: nothing to flush
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout (a test runner's buffer)
        pass


def _whole_short_help(command):
    """The first paragraph of a command's help as its short help, so listings and man NAME lines show
    it whole instead of cutting it at 45 characters."""
    if not command.short_help and command.help:
        command.short_help = " ".join(inspect.cleandoc(command.help).split("\n\n")[0].split())
    if isinstance(command, OntolinkGroup):
        return  # its commands are made whole as each is imported
    for sub_command in getattr(command, "commands", {}).values():
        _whole_short_help(sub_command)


def _usage_errors_as_click_shows_them(command):
    """A library's UsageError (options found wrong where they are used) is shown as click shows its own: the
    command's usage line and the message, naming the option when the error does; exit status 2."""
    callback = command.callback
    if callback is not None and not getattr(callback, "shows_usage_errors", False):
        @functools.wraps(callback)
        def shown(*args, **kwargs):
            try:
                return callback(*args, **kwargs)
            except UsageError as error:
                context = click.get_current_context()
                if error.option:
                    raise click.BadParameter(str(error), ctx=context, param_hint=error.option) from None
                raise click.UsageError(str(error), ctx=context) from None

        shown.shows_usage_errors = True
        command.callback = shown
    for sub_command in getattr(command, "commands", {}).values():
        _usage_errors_as_click_shows_them(sub_command)


class OntolinkGroup(click.Group):
    """Turns library errors into one line on stderr and the documented exit status.

    Its commands are imported when first needed: running one imports that command's module only (a
    command's module imports what its options list, a ranker's feature groups or numpy: a fifth of a
    second `annotate` has no use for), while listing them (``commands``, help, man pages) imports all.
    """

    def __init__(self, *args, **kwargs):
        self._lazy = {}  # command name -> module in ontolink.cli.commands, not imported yet
        self._order = []  # the names in the order they were registered (listings follow it)
        super().__init__(*args, **kwargs)

    def add_lazy_command(self, name, module):
        self._lazy[name] = module
        self._order.append(name)

    def _import(self, name):
        command = importlib.import_module(f"ontolink.cli.commands.{self._lazy.pop(name)}").command
        if command.name != name:
            raise RuntimeError(f"ontolink.cli.commands module registered as {name!r} holds the command {command.name!r}")
        _whole_short_help(command)
        _usage_errors_as_click_shows_them(command)
        self._commands[name] = command

    @property
    def commands(self):
        for name in list(self._lazy):
            self._import(name)
        if list(self._commands)[:len(self._order)] != self._order:  # in registration order, whichever ran first
            self._commands = {**{name: self._commands[name] for name in self._order}, **self._commands}
        return self._commands

    @commands.setter
    def commands(self, value):
        self._commands = value

    def get_command(self, ctx, cmd_name):
        if cmd_name in self._lazy:
            self._import(cmd_name)
        return self._commands.get(cmd_name)

    def invoke(self, ctx):
        forget_reads()  # the files this command reads are the only ones its outputs may not replace
        set_quiet(False)  # a command without --quiet shows its progress, whatever ran before it in this process
        try:
            return super().invoke(ctx)
        except OntolinkError as error:
            if _show_tracebacks():
                raise
            click.echo(f"ontolink: error: {error}", err=True)
            if getattr(error, "path", None) == "<stdout>":
                # stdout itself failed (a full device): what its buffer still holds would fail again as Python
                # exits, which then reports it and ends with status 120 instead of this error's
                _silence_stdout()
            ctx.exit(error.exit_code)
        except KeyboardInterrupt:
            # Ctrl-C: the shell's convention (128 + SIGINT), without a traceback or click's "Aborted!"
            if _show_tracebacks():
                raise
            ctx.exit(INTERRUPTED)
        except BrokenPipeError:
            # the reader went away (`| head`): 128 + SIGPIPE, as a process killed by the signal reports
            _silence_stdout()
            ctx.exit(PIPE_CLOSED)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as error:
            missing = missing_extra(error) if isinstance(error, ModuleNotFoundError) else None
            if missing is not None and not _show_tracebacks():  # an optional extra is not installed
                click.echo(f"ontolink: error: {missing}", err=True)
                ctx.exit(missing.exit_code)
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

    Exit status: 0 success, 2 bad input or usage (FILE:LINE: message), 1 other
    failures, 130 interrupted (Ctrl-C), 141 output pipe closed (`| head`), 143
    terminated (SIGTERM).
    Set ONTOLINK_TRACEBACK=1 to see tracebacks.
    """


# Commands in toolbox/ontolink/cli/commands/ (one module each, a click command named `command`), in the
# order of a pipeline: command name -> module. Add a line here to register one; a command that is not
# ready is not listed.
COMMANDS = {
    "convert": "convert",
    "annotate": "annotate",
    "index": "index",
    "link": "link",
    "eval": "eval",
    "select-entities": "select_entities",
    "gen-aliases": "gen_aliases",
    "filter": "filter",
    "make-pairs": "make_pairs",
    "train": "train_models",
    "embed-kg": "embed_kg",
    "align": "align",
    "cache": "cache",
}
for _name, _module in COMMANDS.items():
    cli.add_lazy_command(_name, _module)  # its short help made whole when it is imported
_whole_short_help(cli)


def main():
    one_command_process()  # what the command loads may be frozen (ontolink.core.gc_pause)
    cli(prog_name="ontolink")
