"""Option bundles shared by commands, so the same flag reads the same everywhere."""

import click

from toolbox.errors import InputError


def _load_config(ctx, param, path):
    """--config FILE: YAML whose keys become option defaults (the command line still wins).

    Top-level keys apply to every command that has such an option; a mapping
    under a command's name (``link: {top-k: 10}``) applies to that command only.
    """
    if path is None:
        return
    import yaml

    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle) or {}
    except OSError as error:
        raise click.BadParameter(str(error), ctx=ctx, param=param) from None
    except yaml.YAMLError as error:
        raise click.BadParameter(f"{path}: not valid YAML ({str(error).splitlines()[0]})", ctx=ctx,
                                 param=param) from None
    if not isinstance(data, dict):
        raise click.BadParameter(f"{path}: expected a mapping of option names to values", ctx=ctx, param=param)
    # Keys are long option names ("top-k", "index") or parameter names ("top_k", "index_dir").
    own = {}
    for parameter in ctx.command.params:
        for flag in getattr(parameter, "opts", []):
            if flag.startswith("--"):
                own[flag[2:]] = parameter.name
                own[flag[2:].replace("-", "_")] = parameter.name
        if parameter.name:
            own[parameter.name] = parameter.name
    command_names = set(getattr(ctx.parent.command, "commands", {})) if ctx.parent else set()
    defaults = {}
    for key, value in data.items():
        key = str(key)
        if key in command_names and isinstance(value, dict):
            if key == ctx.info_name:
                for sub_key, sub_value in value.items():
                    if str(sub_key) not in own:
                        raise click.BadParameter(f"{path}: {ctx.info_name} has no option {sub_key!r}", ctx=ctx,
                                                 param=param)
                    defaults[own[str(sub_key)]] = sub_value
            continue
        if key in own:
            defaults.setdefault(own[key], value)
    ctx.default_map = {**(ctx.default_map or {}), **defaults}


def config_option(function):
    return click.option("--config", type=click.Path(dir_okay=False), is_eager=True, expose_value=False,
                        callback=_load_config,
                        help="YAML file of option defaults; options on the command line win.")(function)


def input_options(function):
    function = click.option("--skip-invalid", is_flag=True,
                            help="Count, report and skip bad input lines instead of stopping at the first.")(function)
    return click.option("-i", "--input", "input_path", default="-", show_default=True, metavar="FILE",
                        help="JSONL input ('-' is stdin; .gz is read transparently).")(function)


def output_option(function):
    return click.option("-o", "--output", "output_path", default="-", show_default=True, metavar="FILE",
                        help="JSONL output ('-' is stdout; .gz is compressed).")(function)


def ontology_option(required=True, help_text="Ontology: a file (.obo, .owl, .json, .jsonl) or the embedded 'hpo'."):
    def decorator(function):
        function = click.option("--synonym-scopes", default="EXACT,RELATED", show_default=True,
                                help="Synonym scopes counted as names (EXACT, RELATED, NARROW, BROAD).")(function)
        function = click.option("--ontology-format", type=click.Choice(["obo", "owl", "obographs", "scizsel",
                                                                         "jsonl"]),
                                help="Force the ontology format instead of guessing it from the file.")(function)
        return click.option("--ontology", required=required, metavar="PATH|hpo", help=help_text)(function)
    return decorator


def device_option(function):
    return click.option("--device", default="auto", show_default=True,
                        help="auto (CUDA when torch sees it), cpu, cuda or cuda:N.")(function)


def seed_option(function):
    return click.option("--seed", type=int, default=0, show_default=True,
                        help="Seed for every random choice (same seed, same input: same output).")(function)


def parse_scopes(text):
    scopes = tuple(part.strip().upper() for part in text.split(",") if part.strip())
    if not scopes:
        raise InputError("--synonym-scopes needs at least one scope")
    return scopes


def open_ontology(ontology, ontology_format, synonym_scopes):
    from toolbox.ontology import load_ontology

    return load_ontology(ontology, fmt=ontology_format, synonym_scopes=parse_scopes(synonym_scopes))
