"""The ontology layer: the same small ontology in every format, the Ontology model, the parse cache, bad inputs.
What belongs to one format alone is in components/test_ontology_format_NAME.py.

Fast except the ``slow`` HPO tests (the whole Human Phenotype Ontology, ~19k terms).
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ontolink.core.errors import InputError
from ontolink.ontology import (
    ALL_SYNONYM_SCOPES,
    DEFAULT_SYNONYM_SCOPES,
    Ontology,
    load_ontology,
)
from ontolink.ontology.loaders import detect_format

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data" / "ontology"
MINI_FILES = {"obo": "mini.obo", "owl": "mini.owl", "obographs": "mini.json", "jsonl": "mini.jsonl"}


def _shared_data():
    candidates = [REPO.parent / "shared" / "data", Path("/work/shared/data")]
    if os.environ.get("ONTOLINK_SHARED_DATA"):  # the override tests/conftest.py also honours
        candidates.insert(0, Path(os.environ["ONTOLINK_SHARED_DATA"]))
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    return None


SHARED = _shared_data()
needs_shared = pytest.mark.skipif(
    SHARED is None,
    reason=f"shared data absent (neither {REPO.parent / 'shared' / 'data'} nor /work/shared/data exists)",
)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    """Never touch the user's cache: every test gets its own."""
    monkeypatch.setenv("ONTOLINK_CACHE_DIR", str(tmp_path / "cache"))


def _load_mini(fmt, **kwargs):
    return load_ontology(DATA / MINI_FILES[fmt], use_cache=False, **kwargs)


@pytest.fixture(scope="module")
def minis():
    return {fmt: _load_mini(fmt) for fmt in MINI_FILES}


@pytest.fixture(scope="module")
def mini(minis):
    return minis["obo"]


# --- the same ontology in four formats ---------------------------------------------------------

EXPECTED = {
    "MINI:0000001": {"id": "MINI:0000001", "name": "entity", "definition": "The root of the mini ontology.",
                     "synonyms": [], "parents": [], "alt_ids": []},
    "MINI:0000002": {"id": "MINI:0000002", "name": "disease", "definition": "A disorder of structure or function.",
                     "synonyms": [], "parents": ["MINI:0000001"], "alt_ids": ["MINI:0000010"]},
    "MINI:0000003": {"id": "MINI:0000003", "name": "phenotype", "definition": "An observable characteristic.",
                     "synonyms": [], "parents": ["MINI:0000001"], "alt_ids": []},
    "MINI:0000004": {"id": "MINI:0000004", "name": "heart disease", "definition": "A disease of the heart.",
                     "synonyms": ["cardiac disease", "cardiopathy", "heart failure"],
                     "parents": ["MINI:0000002"], "alt_ids": []},
    "MINI:0000006": {"id": "MINI:0000006", "name": "lung disease", "definition": "",
                     "synonyms": [], "parents": ["MINI:0000002"], "alt_ids": []},
}


@pytest.mark.parametrize("fmt", sorted(MINI_FILES))
def test_mini_detected_format(fmt):
    assert detect_format(DATA / MINI_FILES[fmt]) == fmt


@pytest.mark.parametrize("fmt", sorted(MINI_FILES))
def test_mini_loads_expected_entities(minis, fmt):
    ontology = minis[fmt]
    assert isinstance(ontology, Ontology)
    assert {entity.id: entity.to_record() for entity in ontology} == EXPECTED
    assert ontology.label == MINI_FILES[fmt]


@pytest.mark.parametrize("fmt", ["owl", "obographs", "jsonl"])
def test_formats_agree_with_obo(minis, fmt):
    reference = {entity.id: entity for entity in minis["obo"]}
    other = {entity.id: entity for entity in minis[fmt]}
    assert list(other) == list(reference)
    for entity_id, entity in reference.items():
        assert other[entity_id].to_record() == entity.to_record(), entity_id
        assert other[entity_id].synonyms == entity.synonyms, entity_id
        assert minis[fmt].names(other[entity_id]) == minis["obo"].names(entity)
    assert minis[fmt].redirects == minis["obo"].redirects


@pytest.mark.parametrize("fmt", sorted(MINI_FILES))
def test_synonym_scopes_are_kept(minis, fmt):
    assert [tuple(pair) for pair in minis[fmt]["MINI:0000004"].synonyms] == [
        ("cardiac disease", "EXACT"),
        ("cardiopathy", "RELATED"),
        ("heart failure", "NARROW"),
    ]


@pytest.mark.parametrize("fmt", ["owl", "obographs"])
def test_pronto_loader_is_deterministic_across_hash_seeds(fmt):
    """pronto keeps synonyms in sets; their order must not depend on PYTHONHASHSEED."""
    script = (
        "import json, sys\n"
        "from ontolink.ontology.loaders import load_with_pronto\n"
        "print(json.dumps(load_with_pronto(sys.argv[1])))\n"
    )
    outputs = set()
    for seed in ("1", "2", "3"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        result = subprocess.run([sys.executable, "-c", script, str(DATA / MINI_FILES[fmt])],
                                capture_output=True, text=True, env=env, check=True)
        outputs.add(result.stdout)
    assert len(outputs) == 1


def test_mini_through_cache_equals_fresh_parse(tmp_path, monkeypatch):
    monkeypatch.setenv("ONTOLINK_CACHE_DIR", str(tmp_path / "c"))
    fresh = _load_mini("owl")
    first = load_ontology(DATA / "mini.owl")
    second = load_ontology(DATA / "mini.owl")  # from the JSON cache
    records = [[entity.to_record() for entity in ontology] for ontology in (fresh, first, second)]
    assert records[0] == records[1] == records[2]
    assert second.redirects == fresh.redirects
    assert len(list((tmp_path / "c" / "ontologies").glob("*.json"))) == 1


def test_format_override_for_unusual_extension(tmp_path):
    path = tmp_path / "mini.txt"
    path.write_bytes((DATA / "mini.obo").read_bytes())
    ontology = load_ontology(path, fmt="obo", use_cache=False)
    assert len(ontology) == 5


# --- synonym scopes ------------------------------------------------------------------------------


def test_default_scopes_are_exact_and_related(mini):
    assert DEFAULT_SYNONYM_SCOPES == ("EXACT", "RELATED")
    assert mini.synonym_scopes == DEFAULT_SYNONYM_SCOPES
    assert mini.names(mini["MINI:0000004"]) == ["heart disease", "cardiac disease", "cardiopathy"]


@pytest.mark.parametrize("fmt", sorted(MINI_FILES))
def test_exact_scope_narrows_names(fmt):
    ontology = _load_mini(fmt, synonym_scopes=("EXACT",))
    assert ontology.names(ontology["MINI:0000004"]) == ["heart disease", "cardiac disease"]
    assert ontology.names(ontology["MINI:0000002"]) == ["disease"]


def test_all_scopes_include_narrow():
    ontology = _load_mini("obo", synonym_scopes=ALL_SYNONYM_SCOPES)
    assert ontology.names(ontology["MINI:0000004"]) == [
        "heart disease", "cardiac disease", "cardiopathy", "heart failure"]


def test_to_record_filters_by_scope(mini):
    assert mini["MINI:0000004"].to_record(("EXACT",))["synonyms"] == ["cardiac disease"]


def test_names_drop_normalised_duplicates(tmp_path):
    path = tmp_path / "dup.jsonl"
    path.write_text(json.dumps({"id": "X:1", "name": "Heart  Disease",
                                "synonyms": ["heart disease", " HEART disease ", "cardiopathy"]}) + "\n")
    ontology = load_ontology(path, use_cache=False)
    assert ontology.names(ontology["X:1"]) == ["Heart  Disease", "cardiopathy"]


def test_unknown_synonym_scope_is_refused():
    with pytest.raises(InputError, match="unknown synonym scope") as caught:
        _load_mini("obo", synonym_scopes=("EXACT", "FUZZY"))
    assert caught.value.exit_code == 2


# --- obsolete terms, alt ids, resolve -----------------------------------------------------------


@pytest.mark.parametrize("fmt", sorted(MINI_FILES))
def test_obsolete_excluded_but_resolvable(minis, fmt):
    ontology = minis[fmt]
    assert len(ontology) == 5
    assert "MINI:0000005" not in ontology
    assert ontology.resolve("MINI:0000005") == ["MINI:0000004"]
    assert ontology.resolve("MINI:0000010") == ["MINI:0000002"]
    assert ontology.resolve("MINI:0000004") == ["MINI:0000004"]
    assert ontology.resolve("MINI:9999999") == []
    assert ontology.redirects == {"MINI:0000010": ["MINI:0000002"], "MINI:0000005": ["MINI:0000004"]}


def test_obsolete_without_live_replacement_resolves_to_nothing(tmp_path):
    path = tmp_path / "o.jsonl"
    path.write_text(
        json.dumps({"id": "O:1", "name": "live"}) + "\n"
        + json.dumps({"id": "O:2", "name": "gone", "obsolete": True}) + "\n"
        + json.dumps({"id": "O:3", "name": "gone too", "obsolete": True, "replaced_by": ["O:2"]}) + "\n"
    )
    ontology = load_ontology(path, use_cache=False)
    assert list(ontology.entities) == ["O:1"]
    assert ontology.resolve("O:2") == []
    assert ontology.resolve("O:3") == []


def test_only_obsolete_terms_is_an_error(tmp_path):
    path = tmp_path / "o.jsonl"
    path.write_text(json.dumps({"id": "O:1", "name": "gone", "obsolete": True}) + "\n")
    with pytest.raises(InputError, match="no \\(non-obsolete\\) terms") as caught:
        load_ontology(path, use_cache=False)
    assert caught.value.exit_code == 2
    assert "o.jsonl" in str(caught.value)


def test_parent_that_is_obsolete_is_dropped_with_warning(tmp_path, capsys):
    path = tmp_path / "p.jsonl"
    path.write_text(
        json.dumps({"id": "P:1", "name": "old", "obsolete": True}) + "\n"
        + json.dumps({"id": "P:2", "name": "child", "parents": ["P:1"]}) + "\n"
    )
    ontology = load_ontology(path, use_cache=False)
    assert ontology["P:2"].parents == []
    err = capsys.readouterr().err
    assert "P:1" in err and "obsolete" in err


# --- graph: children, siblings, neighbours ----------------------------------------------------


@pytest.mark.parametrize("fmt", sorted(MINI_FILES))
def test_children(minis, fmt):
    children = minis[fmt].children
    assert children["MINI:0000001"] == ["MINI:0000002", "MINI:0000003"]
    assert children["MINI:0000002"] == ["MINI:0000004", "MINI:0000006"]
    assert children["MINI:0000003"] == []
    assert children["MINI:0000004"] == []
    assert set(children) == set(minis[fmt].entities)


def test_siblings(mini):
    assert mini.siblings("MINI:0000004") == ["MINI:0000006"]
    assert mini.siblings("MINI:0000006") == ["MINI:0000004"]
    assert mini.siblings("MINI:0000002") == ["MINI:0000003"]
    assert mini.siblings("MINI:0000001") == []


def test_neighbours(mini):
    # N(e) = parents + children; N+(e) adds siblings.
    assert mini.neighbours("MINI:0000002", with_siblings=False) == [
        "MINI:0000001", "MINI:0000004", "MINI:0000006"]
    assert mini.neighbours("MINI:0000002") == [
        "MINI:0000001", "MINI:0000004", "MINI:0000006", "MINI:0000003"]
    assert mini.neighbours("MINI:0000004") == ["MINI:0000002", "MINI:0000006"]
    assert mini.neighbours("MINI:0000004", with_siblings=False) == ["MINI:0000002"]
    assert mini.neighbours("MINI:0000001") == ["MINI:0000002", "MINI:0000003"]


def test_describe(mini):
    described = mini.describe()
    assert described["label"] == "mini.obo"
    assert described["entities"] == 5
    assert len(described["sha256"]) == 64


# --- Sci-ZSEL KB ---------------------------------------------------------------------------------


# --- embedded HPO ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_hpo_loads_and_cache_is_fast_json(tmp_path, monkeypatch):
    cache = tmp_path / "hpo-cache"
    monkeypatch.setenv("ONTOLINK_CACHE_DIR", str(cache))
    first = load_ontology("hpo")
    assert first.label == "hpo"
    assert len(first) == 19034
    assert "HP:0000118" in first  # Phenotypic abnormality
    assert first.redirects, "HPO has alt_ids and obsolete terms with replaced_by"
    assert all(target in first for targets in first.redirects.values() for target in targets)

    started = time.perf_counter()
    second = load_ontology("hpo")
    elapsed = time.perf_counter() - started
    assert elapsed < 5, f"cached load took {elapsed:.1f} s"
    assert len(second) == 19034
    assert [e.to_record() for e in second] == [e.to_record() for e in first]
    assert second.redirects == first.redirects

    files = list((cache / "ontologies").iterdir())
    assert len(files) == 1
    assert files[0].name.endswith(".json")
    raw = files[0].read_bytes()
    assert not raw.startswith(b"\x80"), "the cache must not be pickle"
    parsed = json.loads(raw.decode("utf-8"))
    assert isinstance(parsed, list) and parsed[0]["id"].startswith("HP:")


@pytest.mark.slow
def test_hpo_without_cache_matches_and_damaged_cache_is_rebuilt(tmp_path, monkeypatch):
    cache = tmp_path / "hpo-cache"
    monkeypatch.setenv("ONTOLINK_CACHE_DIR", str(cache))
    load_ontology("hpo")
    (cached,) = list((cache / "ontologies").iterdir())
    cached.write_text("{not json")
    rebuilt = load_ontology("hpo")
    assert len(rebuilt) == 19034
    json.loads(cached.read_text(encoding="utf-8"))  # rewritten as valid JSON


# --- bad inputs ------------------------------------------------------------------------------------


@needs_shared
def test_cycle_is_refused_naming_the_ids():
    path = SHARED / "bad_inputs" / "cycle.obo"
    with pytest.raises(InputError) as caught:
        load_ontology(path, use_cache=False)
    message = str(caught.value)
    assert "cycle" in message
    for term_id in ("CYC:1", "CYC:2", "CYC:3"):
        assert term_id in message
    assert "cycle.obo" in message
    assert caught.value.exit_code == 2


@needs_shared
def test_dangling_parent_loads_with_warning(capsys):
    ontology = load_ontology(SHARED / "bad_inputs" / "dangling_parent.obo", use_cache=False)
    assert set(ontology.entities) == {"DANG:1", "DANG:2"}
    assert ontology["DANG:2"].parents == []
    err = capsys.readouterr().err
    assert "DANG:999" in err
    assert "dangling_parent.obo" in err


def test_unknown_extension_mentions_ontology_format(tmp_path):
    path = tmp_path / "mini.txt"
    path.write_bytes((DATA / "mini.obo").read_bytes())
    with pytest.raises(InputError, match="--ontology-format") as caught:
        load_ontology(path, use_cache=False)
    assert "mini.txt" in str(caught.value)
    assert caught.value.exit_code == 2


def test_unknown_format_name_is_refused():
    with pytest.raises(InputError, match="unknown ontology format") as caught:
        load_ontology(DATA / "mini.obo", fmt="turtle", use_cache=False)
    assert caught.value.exit_code == 2


def test_missing_file_and_directory_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="no such ontology file") as caught:
        load_ontology(tmp_path / "absent.obo", use_cache=False)
    assert caught.value.exit_code == 2
    with pytest.raises(InputError, match="is a directory") as caught:
        load_ontology(tmp_path, use_cache=False)
    assert caught.value.exit_code == 2


# --- detect_format ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, expected",
    [
        ("x.obo", "obo"),
        ("X.OBO", "obo"),
        ("x.owl", "owl"),
        ("x.rdf", "owl"),
        ("x.xml", "owl"),
        ("x.ofn", "owl"),
        ("x.owx", "owl"),
        ("x.jsonl", "jsonl"),
    ],
)
def test_detect_format_by_extension(name, expected):
    assert detect_format(Path("/nonexistent") / name) == expected  # no peeking needed


def test_detect_format_compressed(tmp_path):
    import gzip

    assert detect_format(tmp_path / "x.obo.gz") == "obo"
    assert detect_format(tmp_path / "x.jsonl.gz") == "jsonl"
    path = tmp_path / "g.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write('{"graphs": []}')
    assert detect_format(path) == "obographs"


def test_detect_format_peeks_into_json(tmp_path):
    graphs = tmp_path / "g.json"
    graphs.write_text('  {\n  "graphs" : [ ]\n}')
    kb = tmp_path / "kb.json"
    kb.write_text('{"K:1": {"name": "x"}}')
    assert detect_format(graphs) == "obographs"
    assert detect_format(kb) == "scizsel"
    assert detect_format(DATA / "mini.json") == "obographs"


@pytest.mark.parametrize("name", ["x.txt", "x.docx", "noext", "x.gz"])
def test_detect_format_unknown(name):
    with pytest.raises(InputError, match="--ontology-format") as caught:
        detect_format(Path(name))
    assert caught.value.exit_code == 2


def test_embedded_name_is_not_shadowed_by_a_directory(tmp_path, monkeypatch):
    """`ontolink index --ontology hpo hpo` makes a directory called hpo; the next `--ontology hpo` there
    must still mean the embedded HPO, not fail on the directory."""
    from ontolink.ontology import ontology_path

    monkeypatch.chdir(tmp_path)
    (tmp_path / "hpo").mkdir()
    path, label = ontology_path("hpo")
    assert label == "hpo" and path.name == "hp.obo"
