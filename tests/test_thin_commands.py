"""Commands are thin (issue 42): a command function turns its options into one options object and calls one
library function, so its code (the docstring is help, not code) is at most 40 lines. Counted with ast: the
lines of the body's statements after the docstring, blank and comment-only lines left out."""

import ast
import io
import tokenize
from pathlib import Path

import pytest

COMMANDS = Path(__file__).resolve().parent.parent / "toolbox" / "ontolink" / "cli" / "commands"
MOST = 40


def _code_lines(source, function):
    """Lines of ``function``'s code: its body without the docstring, blank and comment-only lines left out."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if not body:
        return 0
    lines = source.splitlines()[body[0].lineno - 1:body[-1].end_lineno]
    tokens = tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline)
    code_rows = {token.start[0] for token in tokens
                 if token.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                                       tokenize.DEDENT, tokenize.ENDMARKER)}
    return len(code_rows)


def command_functions(path):
    """(name, code lines) of each click command function of a commands module: a function decorated with
    ``click.command`` / ``click.group`` or a group's ``.command(...)``."""
    source = path.read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and any(_is_command_decorator(decorator)
                                                     for decorator in node.decorator_list):
            yield node.name, _code_lines(source, node)


def _is_command_decorator(decorator):
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Attribute) and target.attr in ("command", "group")


def _modules():
    return sorted(path for path in COMMANDS.glob("*.py") if path.name != "__init__.py")


def test_code_lines_count_code_only():
    source = 'def f(a):\n    """Help.\n\n    More help."""\n    # why\n    x = (a,\n         2)\n\n    return x\n'
    function = ast.parse(source).body[0]
    assert _code_lines(source, function) == 3


def test_every_commands_module_has_a_command():
    for path in _modules():
        assert list(command_functions(path)), f"{path.name}: no click command function found"


@pytest.mark.parametrize("path", _modules(), ids=lambda path: path.stem)
def test_command_functions_are_thin(path):
    long = {name: lines for name, lines in command_functions(path) if lines > MOST}
    assert not long, f"{path.name}: command functions over {MOST} lines of code: {long}"
