"""The backend registries: every registered backend has a test of its own, unknown names fail in one line,
entry points add backends."""

import sys

import pytest
from conftest import assert_has_own_test, own_test_file, run

from ontolink.encoders import ENCODERS
from ontolink.engines import ENGINES
from ontolink.indexes import NAME_INDEXES
from ontolink.kg.embedders import KG_EMBEDDERS
from ontolink.aliases.llm import LLM_BACKENDS
from ontolink.core.errors import InputError
from ontolink.core.registry import Registry

REGISTRIES = (ENCODERS, NAME_INDEXES, LLM_BACKENDS, KG_EMBEDDERS, ENGINES)


@pytest.mark.parametrize("registry", REGISTRIES, ids=lambda registry: registry.key)
def test_every_registered_backend_has_a_test(registry):
    """A backend NAME of a family (encoder, index, llm, kg, engine) is tested in backends/test_FAMILY_NAME.py, found
    by its name as the feature groups' tests are (PyKEEN's habit: a backend without a test fails the suite)."""
    for name in registry.names():
        assert_has_own_test("backends", registry.key, name, f"{registry.family} {name!r}")
        assert issubclass(registry.get(name), registry.base)


def test_every_file_of_backends_tests_a_registered_backend():
    """A file of backends/ named after no registered backend is a test left behind by a renamed or removed one."""
    expected = {own_test_file("backends", registry.key, name).name for registry in REGISTRIES for name in registry.names()}
    found = {path.name for path in own_test_file("backends", "*", "*").parent.glob("test_*.py")}
    assert found <= expected, f"backends/ tests of no registered backend: {', '.join(sorted(found - expected))}"


def test_unknown_name_is_one_line_listing_the_known_ones():
    with pytest.raises(InputError) as error:
        NAME_INDEXES.get("bm25")
    assert str(error.value) == "unknown index method 'bm25' (known: dense, multivector, tfidf)"


def test_cli_choices_come_from_the_registries(tfidf_index):
    result = run("index", "--help")
    assert "[dense|multivector|tfidf]" in result.stdout
    result = run("index", "--ontology", "hpo", "--method", "bm25", "x")
    assert result.exit_code == 2 and "'bm25' is not one of 'dense', 'multivector', 'tfidf'" in result.stderr
    assert "[openai|transformers|vllm]" in run("gen-aliases", "--help").stdout


def test_a_class_must_subclass_the_family_base():
    with pytest.raises(TypeError, match="must subclass Encoder"):
        ENCODERS.register("not-an-encoder")(object)


def test_entry_points_add_backends(tmp_path, monkeypatch):
    """Another distribution's ``ontolink.backends`` entry point ``engine.NAME`` registers a backend."""
    (tmp_path / "my_engines.py").write_text(
        "from ontolink.engines.local import LocalEngine\n\nclass MyEngine(LocalEngine):\n    pass\n")
    dist_info = tmp_path / "my_engines-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-engines\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text("[ontolink.backends]\nengine.mine = my_engines:MyEngine\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    engines = Registry("engine", "engine", "ontolink.engines", ENGINES.base)
    assert "mine" in engines.names() and "my_engines" not in sys.modules  # imported only when chosen
    assert engines.get("mine").__name__ == "MyEngine"


