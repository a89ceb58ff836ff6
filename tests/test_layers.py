"""The layers import downward only: library modules (artifacts, backends, ontology, formats, io, ...) never
import a step or a command, and no command imports another command, so an artifact or a backend can be
used without the steps that build it. No two folders import each other, even through other modules, and an
artifact (what `link` loads) imports no training code."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "toolbox" / "ontolink"
UPPER = ("steps", "commands", "cli")  # ontolink.<layer> that only commands, steps and the CLI may import
# (importer, imported) allowed for now, each with its reason; remove a line when its import goes
KNOWN = set()
# what only training runs: an artifact loads without any of it
TRAINING = ("ontolink.steps", "ontolink.commands", "ontolink.ranking.fit", "ontolink.ranking.queries",
            "ontolink.fine_tuning")


def _imports(path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def _modules():
    """ontolink module name -> its file, for every module of the package."""
    return {".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__"): path
            for path in sorted(PACKAGE.rglob("*.py"))}


def _imported_modules(path, modules):
    """The package's modules that ``path`` imports (``from a.b import c`` counts a.b.c when it is a module)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found.update(name for name in names if name in modules)
    return found


def _cycles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, components, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = counter[0]
                    counter[0] += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return components


def test_no_import_cycle_spans_two_folders():
    """Modules of one folder may import each other both ways (a package and its modules); across folders
    an import cycle means two layers that cannot be used apart."""
    modules = _modules()
    graph = {module: _imported_modules(path, modules) - {module} for module, path in modules.items()}
    crossing = [cycle for cycle in _cycles(graph) if len({modules[module].parent for module in cycle}) > 1]
    assert not crossing, "import cycles across folders:\n" + "\n".join(" <-> ".join(cycle) for cycle in crossing)


def test_the_cycle_check_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_ranking_and_artifacts_never_import_steps_and_artifacts_no_training_code():
    modules = _modules()
    wrong = []
    for module, path in modules.items():
        if module.startswith(("ontolink.ranking", "ontolink.artifacts")):
            forbidden = TRAINING if module.startswith("ontolink.artifacts") else ("ontolink.steps", "ontolink.commands")
            wrong += [f"{module} imports {imported}" for imported in sorted(_imported_modules(path, modules))
                      if imported.startswith(forbidden)]
    assert not wrong, "\n".join(wrong)


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
