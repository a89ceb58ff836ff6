"""The registries: every registered component of every family has a test of its own in tests/components/, unknown
names fail in one line, entry points add backends."""

import sys

import pytest
from conftest import COMPONENT_TESTS, assert_has_own_test, own_test_file, run

from ontolink.aliases.llm import LLM_BACKENDS
from ontolink.core.errors import InputError
from ontolink.core.registry import Registry
from ontolink.encoders import ENCODERS
from ontolink.engines import ENGINES
from ontolink.formats import DOCUMENT_FORMATS
from ontolink.formats.triples import TRIPLE_FORMATS
from ontolink.indexes import NAME_INDEXES
from ontolink.kg.embedders import KG_EMBEDDERS
from ontolink.ontology.loaders import ONTOLOGY_FORMATS
from ontolink.ranking.groups import FEATURE_GROUPS
from ontolink.reranking.base import RERANKERS

# Every registry family: a new family is added here, and its components' tests go in tests/components/.
REGISTRIES = (ENCODERS, NAME_INDEXES, LLM_BACKENDS, KG_EMBEDDERS, ENGINES, FEATURE_GROUPS, RERANKERS,
              DOCUMENT_FORMATS, ONTOLOGY_FORMATS, TRIPLE_FORMATS)
COMPONENTS = [(registry, name) for registry in REGISTRIES for name in registry.names()]


@pytest.mark.parametrize("registry, name", COMPONENTS, ids=[f"{registry.key}:{name}" for registry, name in COMPONENTS])
def test_every_registered_component_has_a_test(registry, name):
    """A component NAME of the family KEY is tested in components/test_KEY_NAME.py, found by its name (PyKEEN's
    habit: a component without a test fails the suite)."""
    assert_has_own_test(registry.key, name, f"{registry.family} {name!r}")
    assert issubclass(registry.get(name), registry.base)


def test_every_file_of_components_tests_a_registered_component():
    """A file of components/ named after no registered component is a test left behind by a renamed or removed
    one (or one whose name misspells its component, which the test above then misses too)."""
    expected = {own_test_file(registry.key, name).name for registry, name in COMPONENTS}
    found = {path.name for path in COMPONENT_TESTS.glob("test_*.py")}
    assert found <= expected, f"components/ tests of no registered component: {', '.join(sorted(found - expected))}"


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
    assert "[blink|res]" in run("train", "reranker", "--help").stdout


def test_every_reranker_architecture_has_its_trainer():
    from ontolink.reranking.train import TRAINERS

    assert sorted(TRAINERS) == RERANKERS.names()


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


