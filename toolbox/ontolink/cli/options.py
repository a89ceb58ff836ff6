"""Option bundles shared by commands, so the same flag reads the same everywhere."""

import functools
import reprlib

import click

from ontolink.core.errors import InputError
from ontolink.core.io import open_input, refuse_output_over_inputs, refuse_shared_outputs
from ontolink.core.options import AUTO_DEVICE, DEFAULT_SEED, STDIO
from ontolink.core.registry import LazyChoice
from ontolink.core.manifest import check_replaceable
from ontolink.core.progress import progress_interval, set_quiet
from ontolink.engines import ENGINES, open_engine
from ontolink.ontology import OntologySource
from ontolink.ontology.loaders import format_names, ONTOLOGY_FORMATS, parse_fields


def _load_config(ctx, param, path):
    """--config FILE: YAML whose keys become option defaults (the command line still wins).

    Top-level keys apply to every command that has such an option; a mapping
    under a command's name (``link: {top-k: 10}``) applies to that command only.
    """
    if path is None:
        return
    import yaml

    try:
        with open_input(path) as handle:  # line limit, UTF-8 and .gz checks named with the file and line
            data = yaml.load(handle, Loader=_config_loader()) or {}
    except InputError as error:
        raise click.BadParameter(str(error), ctx=ctx, param=param) from None
    except OSError as error:
        raise click.BadParameter(f"{path}: {error.strerror or error}", ctx=ctx, param=param) from None
    except yaml.YAMLError as error:
        raise click.BadParameter(f"{path}: not valid YAML ({str(error).splitlines()[0]})", ctx=ctx,
                                 param=param) from None
    except RecursionError:
        raise click.BadParameter(f"{path}: not a config file (YAML nested too deep)", ctx=ctx, param=param) from None
    if not isinstance(data, dict):
        raise click.BadParameter(f"{path}: expected a mapping of option names to values", ctx=ctx, param=param)
    own = _option_keys(ctx.command)
    command_names = set(getattr(ctx.parent.command, "commands", {})) if ctx.parent else set()
    # a top-level key may belong to another command (one file for a whole pipeline), but it must be
    # some command's option: a misspelt key is refused, not silently ignored
    anyone = set()
    for command in _all_commands(ctx.find_root().command):
        anyone.update(_option_keys(command))
    defaults = {}
    for key, value in data.items():
        key = str(key)
        if key in command_names and isinstance(value, dict):
            if key == ctx.info_name:
                for sub_key, sub_value in value.items():
                    if str(sub_key) not in own:
                        raise click.BadParameter(f"{path}: {ctx.info_name} has no option {sub_key!r}", ctx=ctx,
                                                 param=param)
                    defaults[own[str(sub_key)]] = _config_value(ctx, param, path, sub_key, sub_value)
            continue
        if key in own:
            defaults.setdefault(own[key], _config_value(ctx, param, path, key, value))
        elif key not in anyone and key not in command_names:
            raise click.BadParameter(f"{path}: no command has an option {key!r}", ctx=ctx, param=param)
    ctx.default_map = {**(ctx.default_map or {}), **defaults}


def _config_loader():
    """PyYAML's safe loader refusing a key given twice in one mapping (it keeps the last one silently: a
    config's typo or leftover would change a run without a word)."""
    import yaml

    class ConfigLoader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                # the mapping's own plain keys: a merge (`<<: *defaults`) may be overridden by a key after it
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"the key {key!r} is given twice (line {key_node.start_mark.line + 1})",
                        key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return ConfigLoader


# a refused value is shown this short: YAML's aliases can make a small file a value of billions of items
_SHOWN = reprlib.Repr()  # (keyword arguments only from Python 3.12)
_SHOWN.maxlevel, _SHOWN.maxlist, _SHOWN.maxdict, _SHOWN.maxstring, _SHOWN.maxother = 2, 4, 4, 40, 40


def _config_value(ctx, param, path, key, value):
    """A config value of the shape its option takes: one value (not a list or a mapping) for a plain
    option, a list (or one value) for a repeatable one; click converts and range-checks it later."""
    name = _option_keys(ctx.command)[str(key)]
    option = next(parameter for parameter in ctx.command.params if parameter.name == name)
    takes_many = getattr(option, "multiple", False) or option.nargs != 1
    if isinstance(value, dict) or (isinstance(value, list) and not takes_many):
        kind = "mapping" if isinstance(value, dict) else "list"
        raise click.BadParameter(f"{path}: {key!r} takes one value, got a {kind} ({_SHOWN.repr(value)})", ctx=ctx,
                                 param=param)
    if isinstance(value, list) and any(isinstance(item, (list, dict)) for item in value):
        raise click.BadParameter(f"{path}: {key!r} takes a list of values, got nested lists", ctx=ctx, param=param)
    if getattr(option, "multiple", False) and not isinstance(value, list):
        value = [value]  # click iterates a repeatable option's value: a lone string would be its characters
    if value is None:
        return None  # null: the option's own default
    # YAML reads `true` and `2.7` as a bool and a float, which click would turn into 1 and 2 for an integer
    # option: a value is given as the text it would be on the command line, and gets exactly its checks
    value = [_as_typed(item) for item in value] if isinstance(value, list) else _as_typed(value)
    try:
        option.type_cast_value(ctx, value)
    except click.BadParameter as error:
        raise click.BadParameter(f"{path}: {key!r}: {error.message}", ctx=ctx, param=param) from None
    return value


def _as_typed(value):
    """A YAML scalar as it would be typed on the command line."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    return str(value)  # a date or bytes: click decides whether the text fits


def _option_keys(command):
    """Config keys of a command's options: long names ("top-k") or parameter names ("top_k", "index_dir")."""
    keys = {}
    for parameter in command.params:
        for flag in getattr(parameter, "opts", []):
            if flag.startswith("--"):
                keys[flag[2:]] = parameter.name
                keys[flag[2:].replace("-", "_")] = parameter.name
        if parameter.name:
            keys[parameter.name] = parameter.name
    return keys


def _all_commands(command):
    yield command
    for sub_command in getattr(command, "commands", {}).values():
        yield from _all_commands(sub_command)


def config_option(function):
    return click.option("--config", type=click.Path(dir_okay=False), is_eager=True, expose_value=False,
                        callback=_load_config,
                        help="YAML file of option defaults; options on the command line win.")(function)


def _set_quiet(ctx, param, quiet):
    set_quiet(quiet)  # every run sets it, so one command's --quiet does not carry to the next in the same process
    if not quiet:
        progress_interval()  # a bad ONTOLINK_PROGRESS_INTERVAL is refused before the work starts, not after


def quiet_option(function):
    """--quiet: no progress on stderr (neither the bar on a terminal nor the plain lines a log gets every
    $ONTOLINK_PROGRESS_INTERVAL seconds); warnings, errors and the closing summary line stay."""
    return click.option("--quiet", "-q", is_flag=True, expose_value=False, callback=_set_quiet,
                        help="No progress on stderr (a bar on a terminal; elsewhere a line every "
                             "$ONTOLINK_PROGRESS_INTERVAL seconds, default 10, 0 for none); warnings and the "
                             "summary line stay.")(function)


def input_options(function=None, *, help_text="JSONL input ('-' is stdin; .gz is read transparently)."):
    """-i/--input and --skip-invalid; ``help_text``: what the command reads (``@input_options(help_text=...)``)."""
    if function is None:
        return functools.partial(input_options, help_text=help_text)
    function = refusing_output_over_inputs(function)
    function = click.option("--skip-invalid", is_flag=True,
                            help="Count, report and skip bad input lines instead of stopping at the first.")(function)
    return click.option("-i", "--input", "input_path", default=STDIO, show_default=True, metavar="FILE",
                        type=click.Path(allow_dash=True), help=help_text)(function)


# a command's output files besides -o, by parameter name, with the option that names each
OUTPUT_FILE_OPTIONS = {"output_path": "-o", "ambiguous_path": "--ambiguous", "errors_path": "--errors",
                       "plot_path": "--plot"}


def refusing_output_over_inputs(function):
    """Wrap a command so that each of its output files (-o FILE, and ``OUTPUT_FILE_OPTIONS``' others) is refused
    before the command starts when it names one of the command's input files (-i, --mentions, --ontology, a
    FILE argument; a symbolic link to one too) or the file on stdin: opening it for writing would empty it
    before it is read; and so is one file given to two outputs, which would hold only the last written. Both
    -i and -o bring it."""
    if getattr(function, "refuses_output_over_inputs", False):
        return function

    @functools.wraps(function)
    def refusing(*args, **kwargs):
        outputs = {name: kwargs[name] for name in OUTPUT_FILE_OPTIONS if kwargs.get(name) is not None}
        inputs = [value for name, value in kwargs.items() if name not in OUTPUT_FILE_OPTIONS
                  for value in (value if isinstance(value, (list, tuple)) else [value])
                  if isinstance(value, str)]
        inputs += [kwargs["ontology"].path] if getattr(kwargs.get("ontology"), "path", None) else []
        for output in outputs.values():
            refuse_output_over_inputs(output, inputs)
        refuse_shared_outputs({OUTPUT_FILE_OPTIONS[name]: output for name, output in outputs.items()})
        return function(*args, **kwargs)

    refusing.refuses_output_over_inputs = True
    return refusing


def output_option(function=None, *, help_text="JSONL output ('-' is stdout; .gz is compressed)."):
    """-o/--output (``refusing_output_over_inputs``); ``help_text``: what the command writes there
    (``@output_option(help_text=...)``)."""
    if function is None:
        return functools.partial(output_option, help_text=help_text)
    return click.option("-o", "--output", "output_path", default=STDIO, show_default=True, metavar="FILE",
                        type=click.Path(dir_okay=False, allow_dash=True),
                        help=f"{help_text} Refused when it is one of the input files.")(
        refusing_output_over_inputs(function))


def _ontology_formats():
    return format_names()


def _ontology_format_list():
    """The ontology format registry, as help reads it: "obo (.obo), owl (.owl, .rdf, ...), ..."."""
    return ", ".join(f"{name} ({', '.join(ONTOLOGY_FORMATS.get(name).suffixes)})" for name in format_names())


class _FormatsListedOption(click.Option):
    """An option whose help ends with the ontology formats registered when the help is shown (a format added by
    a module or a plugin is listed without a word changed here)."""

    @property  # click keeps an attribute: this one is computed when read
    def help(self):
        return f"{self._own_help}  Formats: {_ontology_format_list()}."

    @help.setter
    def help(self, value):
        self._own_help = value


def ontology_option(required=True, help_text="Ontology: a file or the embedded 'hpo'."):
    """--ontology, --ontology-format, --synonym-scopes and --field, given to the command as one ``ontology``
    argument: an ``OntologySource`` (parsed only when the command calls ``load()``), or None. The help of
    --ontology lists the registered formats."""
    def decorator(function):
        @functools.wraps(function)
        def with_source(*args, ontology, ontology_format, synonym_scopes, fields, **kwargs):
            source = None
            if ontology is not None:
                source = OntologySource(ontology, ontology_format, parse_scopes(synonym_scopes), parse_fields(fields))
            elif fields:
                raise click.UsageError("--field applies with --ontology")
            return function(*args, ontology=source, **kwargs)

        with_source = click.option("--field", "fields", metavar="FIELD=NAME,...",
                                   help="Entity JSONL, scispaCy or CSV/TSV ontologies that name the Entity fields "
                                        "otherwise: which record field or column holds each, e.g. 'id=concept_id,"
                                        "name=canonical_name,synonyms=aliases' (fields: id, name, definition, "
                                        "synonyms, parents, alt_ids, obsolete, replaced_by, type). CSV/TSV: "
                                        "'separator=;' splits list cells (default '|'), and columns given by "
                                        "number (id=1,name=2) read a file without a header row.")(with_source)
        with_source = click.option("--synonym-scopes", default="EXACT,RELATED", show_default=True,
                                   help="Synonym scopes counted as names (EXACT, RELATED, NARROW, BROAD).")(with_source)
        with_source = click.option("--ontology-format", type=LazyChoice(_ontology_formats),
                                   help="Force the ontology format instead of guessing it from the file.")(with_source)
        return click.option("--ontology", cls=_FormatsListedOption, required=required, metavar="PATH|hpo",
                            help=help_text, type=click.Path())(with_source)
    return decorator


def subset_options(function):
    """--entities FILE and --where FIELD=VALUE,... (repeatable), given to the command as ``entities_path`` and
    ``where``: the entities `annotate` looks for and `link` returns (``ontolink.ontology.subsets``)."""
    function = click.option("--where", "where", multiple=True, metavar="FIELD=VALUE,...",
                            help="Only the entities whose FIELD holds one of the VALUEs (repeatable: each must "
                                 "hold); FIELD: type, the ontology's type field or column (--field type=NAME), "
                                 "e.g. --where type=Disease.")(function)
    return click.option("--entities", "entities_path", type=click.Path(dir_okay=False), metavar="FILE",
                        help="Only these entities: a file of ids, one a line (an id/count TSV serves), or JSONL "
                             "records with \"id\" (select-entities output).")(function)


def aliases_option(function):
    """--aliases FILE (repeatable), given to the command as ``alias_files``: names from outside the ontology
    (``ontolink.recognition.extra_names``), for `annotate` and `index` alike."""
    return click.option("--aliases", "alias_files", multiple=True, type=click.Path(dir_okay=False),
                        help="Aliases JSONL ({\"id\", \"aliases\": [...]} a line: `gen-aliases` or `filter` output, "
                             "or a lexicon of your own; repeatable): each alias is a name of its entity too.")(function)


def device_option(function):
    return click.option("--device", default=AUTO_DEVICE, show_default=True,
                        help="auto (CUDA when torch sees it), cpu, cuda or cuda:N.")(function)


def seed_option(function):
    return click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True,
                        help="Seed for every random choice (same seed, same input: same output).")(function)


def parse_scopes(text):
    scopes = tuple(part.strip().upper() for part in text.split(",") if part.strip())
    if not scopes:
        raise InputError("--synonym-scopes needs at least one scope")
    return scopes



def _engine_names():
    return ENGINES.names()


def engine_options(function):
    """--engine, --workers and --ray-address, given to the command as one ``start_engine`` argument:
    ``start_engine(device)`` opens the chosen engine (a context manager; Ray starts or joins its cluster),
    ``start_engine.name`` is its registered name."""
    @functools.wraps(function)
    def with_engine(*args, engine, workers, ray_address, **kwargs):
        if engine == "local" and (workers != 1 or ray_address):
            raise click.UsageError("--workers and --ray-address need --engine ray")

        def start_engine(device="auto"):
            return open_engine(engine, workers=workers, address=ray_address, device=device)

        start_engine.name = engine
        return function(*args, start_engine=start_engine, **kwargs)

    with_engine = click.option("--ray-address", metavar="ADDRESS",
                               help="Ray cluster to join ('auto': the one `ray start` runs here; default: "
                                    "$RAY_ADDRESS, else a local cluster with --workers CPUs, shut down at the "
                                    "end).")(with_engine)
    with_engine = click.option("--workers", type=click.IntRange(1), default=1, show_default=True,
                               help="Ray actors, each loading the index or model once (one CPU, or one GPU "
                                    "where the cluster has them).")(with_engine)
    return click.option("--engine", type=LazyChoice(_engine_names), default="local", show_default=True,
                        help="Where batches run: local (this process) or ray (Ray Data map_batches over an actor "
                             "pool; output in input order, the same bytes as local).")(with_engine)


# what --force also does for a trainer (ontolink.training.loop.Holdout), said in its help
TRAINER_FORCE = (" The trainer also refuses data it cannot learn from (too few pairs or queries for one real step, "
                 "none left to hold out, a loss that never leaves chance: exit 2); --force writes the model anyway "
                 "wherever there is something to fit, marked not improved.")


def force_option(kind, trainer=False):
    """--force, given to the command as ``force``: replace DIRECTORY even when it holds other files than an
    ontolink ``kind``. Without it the command refuses such a directory before any work starts (exit 2).
    ``trainer``: the help also says what --force does to a trainer's refusals (``TRAINER_FORCE``)."""
    def decorator(function):
        @functools.wraps(function)
        def with_force(*args, force, **kwargs):
            check_replaceable(kwargs["directory"], kind, force)
            return function(*args, force=force, **kwargs)

        return click.option("--force", is_flag=True,
                            help=f"Replace DIRECTORY whatever it holds (its files are deleted). Without it, only "
                                 f"an absent or empty directory or an earlier ontolink {kind} is replaced; "
                                 "anything else is refused." + (TRAINER_FORCE if trainer else ""))(with_force)
    return decorator
