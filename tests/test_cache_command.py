"""`ontolink cache info|clear` on a real cache: what a parse and an index leave there, and clearing it."""

import os

from conftest import run


def test_cache_info_lists_kinds_and_clear_frees_them(small_ontology_path, tmp_path, monkeypatch):
    monkeypatch.setenv("ONTOLINK_CACHE_DIR", str(tmp_path / "cache"))
    assert run("index", "--ontology", small_ontology_path, "--method", "tfidf", tmp_path / "idx").exit_code == 0
    (tmp_path / "cache" / "stray.bin").write_bytes(b"x" * 2000)
    result = run("cache", "info")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"cache: {tmp_path / 'cache'}"
    ontologies = next(line for line in lines if line.startswith("ontologies "))
    assert "1 file" in ontologies and "if cleared: the next load of each ontology parses it again" in ontologies
    assert any(line.startswith("other ") and "stray.bin" in line and "2.0 KB" in line for line in lines)
    assert lines[-1].startswith("total ")

    assert run("cache", "clear").exit_code == 2  # KINDs or --all
    assert run("cache", "clear", "nonsense").exit_code == 2
    result = run("cache", "clear", "ontologies")
    assert result.exit_code == 0 and "cleared ontologies (" in result.stderr
    assert not (tmp_path / "cache" / "ontologies").exists() and (tmp_path / "cache" / "stray.bin").exists()
    result = run("cache", "clear", "--all")
    # stray.bin is not ontolink's: left, and said (it deleted every file under the directory)
    assert result.exit_code == 0 and "cleared other (0 B freed)" in result.stderr
    assert "left stray.bin: not made by ontolink" in result.stderr
    assert os.listdir(tmp_path / "cache") == ["stray.bin"]
    (tmp_path / "cache" / "stray.bin").unlink()
    assert run("cache", "info").stdout.splitlines()[1] == "empty"
    # a cleared cache costs time only: the index builds again
    assert run("index", "--ontology", small_ontology_path, "--method", "tfidf", tmp_path / "idx").exit_code == 0


def test_cache_library_functions_take_the_options_object(small_ontology_path, tmp_path, monkeypatch):
    """cache info's and cache clear's library functions, as a Python caller calls them."""
    import pytest

    from ontolink.core.cache import cache_info_lines, clear_cache_kinds
    from ontolink.core.errors import UsageError
    from ontolink.core.options import CacheClearOptions
    from ontolink.ontology import load_ontology

    monkeypatch.setenv("ONTOLINK_CACHE_DIR", str(tmp_path / "cache"))
    load_ontology(str(small_ontology_path))  # a parse leaves its cache entry
    lines = cache_info_lines()
    assert lines[0] == f"cache: {tmp_path / 'cache'}" and any(line.startswith("ontologies ") for line in lines)
    with pytest.raises(UsageError, match="name the KINDs to clear, or give --all"):
        clear_cache_kinds(CacheClearOptions())
    freed = clear_cache_kinds(CacheClearOptions(kinds=("ontologies", "ontologies")))
    assert [kind for kind, _ in freed] == ["ontologies"] and freed[0][1] > 0
    assert clear_cache_kinds(CacheClearOptions(everything=True)) == []  # nothing left to clear
    assert cache_info_lines()[1] == "empty"


def test_cache_clear_deletes_only_what_ontolink_made(small_ontology_path, tmp_path, monkeypatch):
    """ONTOLINK_CACHE_DIR naming a shared folder: a folder of the user's named like a kind ("models"), a file of
    theirs and one inside ontolink's own folder survive `cache clear --all`; ontolink's entries go."""
    shared = tmp_path / "shared"
    (shared / "models").mkdir(parents=True)
    (shared / "models" / "thesis.tex").write_text("years of work")
    (shared / "notes.txt").write_text("mine")
    monkeypatch.setenv("ONTOLINK_CACHE_DIR", str(shared))
    assert run("index", "--ontology", small_ontology_path, "--method", "tfidf", tmp_path / "idx").exit_code == 0
    assert (shared / "ontologies").is_dir()
    info = run("cache", "info")
    assert "notes.txt: not made by ontolink, never deleted" in info.stdout
    result = run("cache", "clear", "--all")
    assert result.exit_code == 0, result.output
    assert "left models, notes.txt: not made by ontolink" in result.stderr
    assert sorted(os.listdir(shared)) == ["models", "notes.txt"]
    assert (shared / "models" / "thesis.tex").read_text() == "years of work"


def test_every_cache_kind_is_named_in_the_help_and_the_docs():
    """A kind added to CACHE_KINDS is clearable at once: `cache clear --help`, its man page and docs/cache.md
    must name it too, or users never learn it exists (`matchers` was missing from all three)."""
    from conftest import REPO

    from ontolink.core.cache import CACHE_KINDS

    kinds = [*CACHE_KINDS, "other"]
    help_text = " ".join(run("cache", "clear", "--help").stdout.split())
    listed = help_text.split("Kinds: ", 1)[1].split(".", 1)[0]
    assert [kind.strip() for kind in listed.split(",")] == kinds
    man_page = " ".join((REPO / "man" / "ontolink-cache-clear.1").read_text(encoding="utf-8").split())
    assert f"Kinds: {listed}." in man_page
    table = (REPO / "docs" / "cache.md").read_text(encoding="utf-8")
    assert not [kind for kind in kinds if f"`{kind}`" not in table]
