"""A name imported only for the type checker (under ``if TYPE_CHECKING:``) is never used at run time.

mypy cannot see this: ``cast(KGEmbeddings, kg)`` type-checks, then raises NameError when it runs (it did, in
``load_alignment``). A run-time use is fine where the function imports the name itself (a late import)."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "toolbox" / "ontolink"


def _is_type_checking_block(node):
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imported(nodes):
    return {alias.asname or alias.name.split(".")[0] for node in nodes if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names}


def _annotation_nodes(tree):
    """ids of every node inside an annotation or a TYPE_CHECKING block (not evaluated at run time)."""
    skipped = set()
    for node in ast.walk(tree):
        annotations = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            annotations = [argument.annotation for argument in
                           arguments.posonlyargs + arguments.args + arguments.kwonlyargs + [arguments.vararg,
                                                                                            arguments.kwarg]
                           if argument is not None and argument.annotation is not None] + [node.returns]
        elif isinstance(node, ast.AnnAssign):
            annotations = [node.annotation]
        elif _is_type_checking_block(node):
            annotations = [node]
        skipped |= {id(inner) for annotation in annotations if annotation is not None
                    for inner in ast.walk(annotation)}
    return skipped


def _run_time_uses(tree, type_only):
    """(line, name) of each run-time use of a type-only name outside a function that imports it itself."""
    skipped = _annotation_nodes(tree)
    uses = []

    def visit(node, local):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            local = local | _imported(ast.walk(node))
        if isinstance(node, ast.Name) and node.id in type_only and node.id not in local and id(node) not in skipped:
            uses.append((node.lineno, node.id))
        for child in ast.iter_child_nodes(node):
            visit(child, local)

    visit(tree, frozenset())
    return uses


def test_no_type_only_import_is_used_at_run_time():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        type_only = _imported(statement for node in ast.walk(tree) if _is_type_checking_block(node)
                              for statement in node.body)
        # a name also imported at run time at module level is a run-time name
        type_only -= _imported(node for node in tree.body)
        found += [f"{path.relative_to(PACKAGE)}:{line}: {name}" for line, name in _run_time_uses(tree, type_only)]
    assert not found, "names imported only under TYPE_CHECKING, used at run time:\n" + "\n".join(found)


def test_the_check_finds_a_cast_of_a_type_only_name():
    tree = ast.parse("from typing import TYPE_CHECKING, cast\nif TYPE_CHECKING:\n    from x import K\n"
                     "def f(k: K) -> K:\n    return cast(K, k)\n"
                     "def g(k):\n    from x import K\n    return cast(K, k)\n")
    assert _run_time_uses(tree, {"K"}) == [(5, "K")]
