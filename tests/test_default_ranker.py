"""The ranker on the default path: the packaged ranker, the choice `index` makes and records, the tables it stores,
`link` ranked by default and `--no-ranker` as plain `link` was (ontolink.ranking.default, ranking/tables.py)."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import jsonl, parse_jsonl, run
from ontolink.indexes.artifact import load_index
from ontolink.ranking.default import PACKAGED, held_out_entity, index_ranker, packaged_ranker
from ontolink.ranking.tables import FILES, CharTrigrams, RankerTables, ranker_tables

# a short form defined in its document: the packaged ranker searches its long form too, plain link cannot
GTCS = {"id": "m1", "mention": "GTCS", "context_left": "Generalized tonic-clonic seizures (GTCS) were seen; ",
        "context_right": " began at two."}
MENTIONS = [GTCS, {"id": "m2", "mention": "fits", "context_left": "The child had ", "context_right": "."},
            {"id": "m3", "mention": "Seizures"}, {"id": "m4", "mention": "cloudy lens"}]


@pytest.fixture(scope="module")
def packaged_index(small_ontology_path, tmp_path_factory):
    """The HPO slice's dense index whose default ranker is the packaged one."""
    from ontolink.indexes.build import build_index
    from ontolink.ontology import load_ontology

    directory = tmp_path_factory.mktemp("idx") / "packaged"
    build_index(load_ontology(small_ontology_path), directory, device="cpu", ranker="packaged")
    return directory


def test_char_trigrams_are_scikit_learns_tfidf(hpo):
    """The lexical group's TF-IDF without scikit-learn gives scikit-learn's numbers (a ranker fitted with the
    vectorizer reads the same features from an index's tables)."""
    from ontolink.indexes.tfidf import char_trigram_vectorizer

    names = [hpo[entity_id].name for entity_id in sorted(hpo.children)[:3000]]
    vectorizer = char_trigram_vectorizer()
    expected = vectorizer.fit_transform(names)
    ours = CharTrigrams.fit(names)
    assert sorted(ours.vocabulary, key=ours.vocabulary.get) == sorted(vectorizer.vocabulary_,
                                                                      key=vectorizer.vocabulary_.get)
    assert np.allclose(ours.idf, vectorizer.idf_, atol=1e-6)
    assert abs(ours.transform(names) - expected).max() < 1e-6
    queries = ["Seizures  of the ÉYE", "x", "", "GTCS (generalized seizures)", "naïve T-cells"]
    assert np.allclose(ours.transform(queries).toarray(), vectorizer.transform(queries).toarray(), atol=1e-6)


def test_packaged_ranker_loads_with_no_network_and_no_training(packaged_index):
    """In a process whose sockets refuse to connect, with the hub offline, the packaged ranker loads from the
    package, binds to an index and ranks: nothing is downloaded and nothing is fitted."""
    assert sorted(path.name for path in PACKAGED.iterdir()) == ["manifest.json", "ranker.safetensors"]
    script = f"""
import socket
def refuse(*args, **kwargs):
    raise OSError("network used")
socket.socket.connect = refuse
socket.create_connection = refuse
import ontolink.ranking.fit, ontolink.ranking.train  # fitting code present, never called:
ontolink.ranking.fit.fit_conditional_logit = ontolink.ranking.train.train_ranker = refuse
from ontolink.indexes.artifact import load_index
from ontolink.ranking.default import index_ranker
loaded = load_index({str(packaged_index)!r}, device="cpu")
ranker, which = index_ranker(loaded)
ranker.bind(loaded, top_k=10)
ranked = list(ranker.rank([{json.dumps(GTCS)}]))
print(which, ranked[0]["candidates"][0]["matched_by"], ranked[0]["candidates"][0]["name"])
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    assert result.returncode == 0, result.stderr
    which, found_by, name = result.stdout.split(" ", 2)
    assert (which, found_by) == ("packaged", "abbreviation") and "tonic-clonic" in name  # by its long form
    ranker = packaged_ranker()
    assert ranker.manifest["training"]["top_k"] == 10 and ranker.gate is None  # link's depth; no encoder group


def test_link_is_ranked_by_default_and_no_ranker_is_plain_link(packaged_index):
    """`link` applies the index's ranker unasked, at plain link's depth; `--no-ranker` writes what the library's
    plain linker writes, byte for byte (the output `link` gave before it had a default ranker)."""
    from ontolink.core.io import RecordWriter
    from ontolink.linking.link import link_mentions

    ranked = run("link", "--index", packaged_index, input=jsonl(MENTIONS))
    plain = run("link", "--index", packaged_index, "--no-ranker", input=jsonl(MENTIONS))
    assert ranked.exit_code == 0 and plain.exit_code == 0, ranked.output + plain.output
    assert "ranked by the index's packaged ranker" in ranked.stderr and "ranked" not in plain.stderr
    by_ranker, by_index = parse_jsonl(ranked.stdout), parse_jsonl(plain.stdout)
    assert all(len(record["candidates"]) == 10 for record in by_ranker + by_index)
    # the short form: the ranker's best is found through its long form ("Generalized tonic-clonic seizures"), a
    # generalized-onset seizure; plain link's, by the letters GTCS, is another entity
    best = by_ranker[0]["candidates"][0]
    assert best["matched_by"] == "abbreviation" and "generalized" in best["name"].lower()
    assert by_index[0]["candidates"][0]["id"] != best["id"] and by_index[0]["candidates"][0]["matched_by"] == "dense"
    assert all("retriever_score" in candidate for record in by_ranker for candidate in record["candidates"])
    assert not any("retriever_score" in candidate for record in by_index for candidate in record["candidates"])
    # an exact name stays first under the default ranker, as without it
    assert by_ranker[2]["candidates"][0]["matched_by"] == "exact" == by_index[2]["candidates"][0]["matched_by"]
    # annotate's entities come right after exact names, as without a ranker, the rest in the ranker's order
    third = by_ranker[3]["candidates"][2]["id"]
    found = run("link", "--index", packaged_index, input=jsonl([{**MENTIONS[3], "matched_by": "dictionary",
                                                                 "matched_ids": [third]}]))
    candidates = parse_jsonl(found.stdout)[0]["candidates"]
    assert [candidate["id"] for candidate in candidates] == [third] + [
        candidate["id"] for candidate in by_ranker[3]["candidates"] if candidate["id"] != third]
    assert candidates[0]["matched_by"] == "annotate"
    loaded = load_index(packaged_index, device="cpu")
    path = packaged_index.parent / "expected.jsonl"
    with RecordWriter(str(path)) as writer:
        writer.write_all(link_mentions([dict(record) for record in MENTIONS], loaded, top_k=10))
    assert plain.stdout_bytes == path.read_bytes()


def test_index_chooses_its_ranker_on_held_out_synonyms_and_records_it(small_ontology_path, tmp_path):
    """`index` scores the packaged ranker, one fitted on the ontology's synonyms, and the retriever on synonym
    queries of entities held out of the fit, keeps the best, and says so in its manifest and summary line."""
    result = run("index", "--ontology", small_ontology_path, "--device", "cpu", tmp_path / "idx")
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    block = manifest["ranker"]
    assert set(FILES) <= set(manifest["files"]) and manifest["ranker_tables"]["prior"] == "none"
    scores = block["held_out_R@1"]
    assert set(scores) >= {"retriever", "packaged"} and block["held_out"] >= 50
    best = max(scores.values())
    expected = next(name for name in ("packaged", "fitted", "retriever") if scores.get(name) == best)
    assert block["choice"] == ("none" if expected == "retriever" else expected)
    assert (tmp_path / "idx" / "ranker").is_dir() == (block["choice"] == "fitted")
    assert f"ranker: {block['choice']} (held-out R@1: retriever {scores['retriever']:.3f}" in result.stderr
    loaded = load_index(tmp_path / "idx", device="cpu")
    assert index_ranker(loaded)[1] == block["choice"]
    # the held-out queries are whole entities, never shared with the fit
    assert held_out_entity("HP:0001250") == held_out_entity("HP:0001250")
    none = run("index", "--ontology", small_ontology_path, "--device", "cpu", "--ranker", "none", tmp_path / "none")
    assert none.exit_code == 0 and "ranker: none (index --ranker none)" in none.stderr
    assert index_ranker(load_index(tmp_path / "none", device="cpu")) == (None, "none")
    assert run("link", "--index", tmp_path / "none", input=jsonl(MENTIONS)).stdout == \
        run("link", "--index", tmp_path / "none", "--no-ranker", input=jsonl(MENTIONS)).stdout


def test_index_stores_the_tables_and_an_older_index_computes_them_with_a_note(packaged_index, tmp_path):
    """The tables are read back as `index` wrote them; an index from before them links the same, with a
    one-line note, its tables computed on the way."""
    loaded = load_index(packaged_index, device="cpu")
    stored = ranker_tables(loaded)
    computed = RankerTables.compute(loaded.names, loaded.entity_ids, "slice")
    assert stored.trigrams.vocabulary == computed.trigrams.vocabulary
    assert abs(stored.name_trigrams - computed.name_trigrams).max() == 0 and stored.prior is None
    old = tmp_path / "old"
    shutil.copytree(packaged_index, old)
    manifest = json.loads((old / "manifest.json").read_text())
    for key in ("ranker", "ranker_tables"):
        del manifest[key]
    manifest["files"] = [name for name in manifest["files"] if name not in FILES]
    (old / "manifest.json").write_text(json.dumps(manifest))
    for name in FILES:
        (old / name).unlink()
    new = run("link", "--index", packaged_index, input=jsonl(MENTIONS))
    older = run("link", "--index", old, input=jsonl(MENTIONS))
    assert older.exit_code == 0, older.output
    assert older.stdout == new.stdout
    notes = [line for line in older.stderr.splitlines() if "predates" in line]
    assert len(notes) == 1 and "rebuild it with `ontolink index`" in notes[0]


def test_a_ranker_nothing_could_measure_is_said_to_be_unmeasured(small_ontology_path, tmp_path):
    """A names-only ontology has no synonym to hold out: `index` keeps the packaged ranker without measuring it, and
    `index` and `link` say so and how to do without it (on names-only HPO it cost 0.009 R@1 on GSC+); a ranker the
    user chose, or one measured, is not flagged."""
    from ontolink.ontology import load_ontology

    names_only = tmp_path / "names.jsonl"
    names_only.write_text(jsonl([{"id": entity.id, "name": entity.name}
                                 for entity in load_ontology(str(small_ontology_path))]))
    built = run("index", "--ontology", names_only, tmp_path / "idx")
    assert built.exit_code == 0, built.output
    assert "ranker: packaged (" in built.stderr and "not measured on this ontology" in built.stderr
    linked = run("link", "--index", tmp_path / "idx", input=jsonl(MENTIONS))
    assert linked.exit_code == 0, linked.output
    assert "ranked by the index's packaged ranker (not measured on this ontology" in linked.stderr
    chosen = run("index", "--ontology", names_only, "--ranker", "packaged", tmp_path / "chosen")
    assert chosen.exit_code == 0 and "not measured" not in chosen.stderr, chosen.output
    assert "not measured" not in run("link", "--index", tmp_path / "chosen", input=jsonl(MENTIONS)).stderr


def test_a_ranked_links_first_candidates_do_not_depend_on_top_k(packaged_index, small_ontology_path):
    """The ranker ordered only the --top-k candidates it was given: at --top-k 1 it saw one, so its best was the
    retriever's, and on GSC+ 44 of 1,151 first candidates differed from the default depth's (R@1 0.746 against
    0.755). It orders at least the depth it was trained at; the first K are written."""
    from ontolink.ontology import load_ontology

    words = [entity.name.lower().split() for entity in load_ontology(small_ontology_path)][:120]
    # names cut to their first and last words, and mentions with context: the retriever's order is not the end
    mentions = [{"id": f"n{number}", "mention": f"{name[0]} {name[-1]}"} for number, name in enumerate(words)
                if len(name) > 2] + MENTIONS
    default = parse_jsonl(run("link", "--index", packaged_index, input=jsonl(mentions)).stdout)
    for top_k in (1, 3):
        result = run("link", "--index", packaged_index, "--top-k", top_k, input=jsonl(mentions))
        assert result.exit_code == 0, result.output
        assert [[candidate["id"] for candidate in record["candidates"]] for record in parse_jsonl(result.stdout)] \
            == [[candidate["id"] for candidate in record["candidates"][:top_k]] for record in default]
