"""The layers import downward only: library modules (artifacts, backends, ontology, formats, io, ...) never
import a step or a command, and no command imports another command, so an artifact or a backend can be
used without the steps that build it."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "toolbox" / "ontolink"
UPPER = ("steps", "commands", "cli")  # ontolink.<layer> that only commands, steps and the CLI may import
# (importer, imported) allowed for now, each with its reason; remove a line when its import goes
KNOWN = set()


def _imports(path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def test_library_modules_never_import_steps_or_commands():
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        layer = module.split(".")[1] if "." in module else ""
        for imported in _imports(path):
            target = imported.split(".")
            if target[0] != "ontolink" or len(target) < 2 or (module, imported) in KNOWN:
                continue
            if target[1] in UPPER and layer not in UPPER + ("manpages", "__main__"):
                upward.append(f"{module} imports {imported}")
            elif layer == target[1] == "commands" and module != imported:
                upward.append(f"{module} imports another command, {imported}")
    assert not upward, "\n".join(upward)
