"""The layers import downward only: `cli` -> task folders (indexes, linking, ranking, ...) -> `core`. No
module outside `cli` imports the command line, `core` imports no task folder, no command imports another
command, no two modules import each other (even through other modules), and a model (what `link` loads)
imports no training code, so a model can be used without the code that trains it."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "toolbox" / "ontolink"
# (importer, imported) allowed for now, each with its reason; remove a line when its import goes
KNOWN = set()
# what only training runs: a model loads without any of it
TRAINING = ("ontolink.training", "ontolink.ranking.fit", "ontolink.ranking.queries", "ontolink.ranking.train",
            "ontolink.reranking.train_cross_encoder", "ontolink.reranking.train_read_and_select",
            "ontolink.recognition.train_span_scorer", "ontolink.kg.alignment.fit_heads",
            "ontolink.kg.alignment.workflows", "ontolink.indexes.build", "ontolink.kg.embed", "ontolink.cli")
# the models other commands load: written by one command, read back by another
MODELS = ("ontolink.indexes.artifact", "ontolink.kg.embeddings", "ontolink.ranking.ranker",
          "ontolink.reranking.cross_encoder", "ontolink.reranking.read_and_select",
          "ontolink.recognition.span_scorer_artifact", "ontolink.kg.alignment.model",
          "ontolink.kg.alignment.heads", "ontolink.kg.alignment.scorers")


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


def test_no_import_cycle():
    """No two modules import each other, even through other modules, and even inside a function: a cycle means
    two modules that cannot be used or understood apart."""
    modules = _modules()
    graph = {module: _imported_modules(path, modules) - {module} for module, path in modules.items()}
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(cycle) for cycle in cycles)


def test_the_cycle_check_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def _layer(module):
    return module.split(".")[1] if "." in module else ""


def test_models_never_import_training_code():
    modules = _modules()
    wrong = [f"{module} imports {imported}" for module, path in modules.items() if module.startswith(MODELS)
             for imported in sorted(_imported_modules(path, modules)) if imported.startswith(TRAINING)]
    assert not wrong, "\n".join(wrong)


def test_imports_go_down_the_layers():
    """Nothing below `cli` imports it, `core` imports only `core`, and no command imports another."""
    upward = []
    for module, path in _modules().items():
        layer = _layer(module)
        for imported in _imports(path):
            target = imported.split(".")
            if target[0] != "ontolink" or len(target) < 2 or (module, imported) in KNOWN:
                continue
            if target[1] == "cli" and layer not in ("cli", "__main__"):
                upward.append(f"{module} imports the command line, {imported}")
            elif layer == "core" and target[1] not in ("core", "version"):
                upward.append(f"{module} (core) imports a task folder, {imported}")
            elif module.startswith("ontolink.cli.commands.") and imported.startswith("ontolink.cli.commands.") \
                    and module != imported:
                upward.append(f"{module} imports another command, {imported}")
    assert not upward, "\n".join(upward)


def test_the_package_root_is_its_face_only():
    """The root holds the package's face (its API, version and `python -m`); everything else lives in a folder."""
    root = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(root) <= 4, root


def _late_own_imports(path):
    """(line, text) of each import of a package module inside a function of ``path``."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    for function in ast.walk(ast.parse(source)):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(function):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ontolink") or \
                        isinstance(node, ast.Import) and node.names[0].name.startswith("ontolink"):
                    yield node.lineno, lines[node.lineno - 2:node.lineno]


def test_a_late_import_of_the_package_says_why():
    """An import of the package's own modules sits at the top of the module, unless importing it there would
    load a heavy dependency (numpy, torch, ...) the module does not load already, or break a lazy design (the
    package's face); then it sits in the function and says so in a comment (``# late: ...``)."""
    silent = sorted({f"{path.relative_to(PACKAGE.parent)}:{line}: {text[-1].strip()}"
                     for path in PACKAGE.rglob("*.py") for line, text in _late_own_imports(path)
                     if not any("# late:" in row for row in text)})
    assert not silent, "late imports of the package without a '# late: why' comment:\n" + "\n".join(silent)
