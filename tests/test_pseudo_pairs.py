"""select-entities, filter and make-pairs (the LLM step, gen-aliases, has its own tests)."""


import os

import pytest

from conftest import jsonl, parse_jsonl, run, shared_path
from ontolink.ontology import load_ontology
from ontolink.aliases.pairs import PairStats, build_matcher, make_pairs, ontology_pairs
from ontolink.aliases.select import select_entities

MENTIONS = [
    {"id": "m1", "mention": "Seizure"},          # exact name of HP:0001250
    {"id": "m2", "mention": "  seizure "},       # same after normalisation
    {"id": "m3", "mention": "Seizures"},         # a synonym, not the name
    {"id": "m4", "mention": "Myopia", "doc_id": "d9"},
    {"id": "m5", "mention": "nothing like a phenotype"},
]


@pytest.fixture(scope="module")
def slice_ontology(small_ontology_path):
    return load_ontology(small_ontology_path)


@pytest.mark.slow
def test_select_entities_exact_and_biencoder(slice_ontology, dense_index):
    """E_EM ∪ E_BT with the frozen dense index (all-MiniLM-L6-v2), as the zero-shot pipe selects."""
    from ontolink.indexes.artifact import load_index

    selection = select_entities(MENTIONS, slice_ontology, loaded_index=load_index(dense_index, device="cpu"))
    records = {record["id"]: record for record in selection.records()}
    assert records["HP:0001250"]["selected_by"] == ["biencoder", "exact"]
    assert records["HP:0001250"]["mention_count"] == 3  # m1, m2 by name; m3 (a synonym) by top-1
    assert records["HP:0000545"]["selected_by"] == ["biencoder", "exact"]
    # E_BT keeps every top-1, even of a phrase that names no phenotype (the most generic entity here)
    assert records["HP:0000118"]["selected_by"] == ["biencoder"] and records["HP:0000118"]["mention_count"] == 1
    assert list(records) == ["HP:0001250", "HP:0000118", "HP:0000545"]  # most mentioned first, then by id
    assert selection.count("exact") == 2 and selection.count("biencoder") == 3
    assert selection.distinct_mentions == 4
    exact_only = select_entities(MENTIONS, slice_ontology)
    assert exact_only.count("biencoder") == 0 and len(exact_only.reasons) == 2


def test_select_entities_skips_entities_without_definition(tmp_path):
    ontology_path = tmp_path / "o.jsonl"
    ontology_path.write_text(jsonl([{"id": "X:1", "name": "alpha", "definition": "The first."},
                                    {"id": "X:2", "name": "beta"}]))
    result = run("select-entities", "--ontology", ontology_path,
                 input=jsonl([{"id": "a", "mention": "alpha"}, {"id": "b", "mention": "Beta"}]))
    assert result.exit_code == 0, result.stderr
    assert [record["id"] for record in parse_jsonl(result.stdout)] == ["X:1"]
    assert "1 without a definition skipped" in result.stderr
    assert "|E_EM| = 2" in result.stderr


def test_make_pairs_sources_precedence_and_ambiguity(slice_ontology):
    aliases = [{"id": "HP:0000545", "aliases": ["short sightedness", "nearsightedness"]},
               {"id": "HP:0001250", "aliases": ["epileptic fit", "short sightedness"]}]
    mentions = MENTIONS + [{"id": "m6", "mention": "Nearsightedness"},
                           {"id": "m7", "mention": "short sightedness"}]
    stats = PairStats()
    ambiguous = []
    matcher = build_matcher(slice_ontology, aliases, ("name", "alias", "synonym"))
    pairs = list(make_pairs(mentions, matcher, stats, on_ambiguous=lambda *args: ambiguous.append(args)))
    by_id = {pair["id"]: pair for pair in pairs}
    assert by_id["m1"]["entity_id"] == "HP:0001250" and by_id["m1"]["source"] == "name"
    assert by_id["m3"]["source"] == "synonym" and by_id["m3"]["alias"] == "Seizures"
    assert by_id["m4"]["doc_id"] == "d9"
    assert by_id["m6"]["entity_id"] == "HP:0000545"
    assert by_id["m6"]["source"] in ("alias", "synonym")
    assert "m7" not in by_id and ambiguous[0][0]["id"] == "m7"
    assert stats.ambiguous == 1 and stats.unmatched == 1
    only_names = list(make_pairs(mentions, build_matcher(slice_ontology, [], ("name",))))
    assert {pair["id"] for pair in only_names} == {"m1", "m2", "m4"}


def test_make_pairs_cli_reports_and_refuses_unknown_entities(small_ontology_path, tmp_path):
    mentions = tmp_path / "mentions.jsonl"
    mentions.write_text(jsonl(MENTIONS))
    aliases = jsonl([{"id": "HP:0000545", "aliases": ["seizure"]}])
    ambiguous = tmp_path / "ambiguous.jsonl"
    result = run("make-pairs", "--ontology", small_ontology_path, "--mentions", mentions,
                 "--sources", "name,alias,synonym", "--ambiguous", ambiguous, input=aliases)
    assert result.exit_code == 0, result.stderr
    assert "pairs from 5 mentions" in result.stderr and "name 3" in result.stderr
    assert ambiguous.read_text() == ""  # the name wins over the alias: no ambiguity
    result = run("make-pairs", "--ontology", small_ontology_path, "--mentions", mentions,
                 input=jsonl([{"id": "HP:9999999", "aliases": ["x"]}]))
    assert result.exit_code == 2 and "HP:9999999" in result.stderr
    result = run("make-pairs", "--ontology", small_ontology_path, "--mentions", mentions, "--sources", "names",
                 input="")
    assert result.exit_code == 2 and "unknown pair source" in result.stderr


def test_ontology_pairs_are_its_synonyms_less_the_ambiguous(tmp_path):
    """--sources ontology: each synonym a mention of its entity; one that is the entity's name or an earlier
    synonym once normalised is skipped, one that another entity also bears is dropped as ambiguous."""
    ontology_path = tmp_path / "o.jsonl"
    ontology_path.write_text(jsonl([
        {"id": "X:1", "name": "Seizure", "synonyms": [{"text": "Epileptic seizure", "scope": "EXACT"}, {"text": "SEIZURE ", "scope": "EXACT"},
                                                      {"text": "epileptic  seizure", "scope": "RELATED"}, {"text": "fits", "scope": "BROAD"},
                                                      {"text": "attack", "scope": "RELATED"}]},
        {"id": "X:2", "name": "Attack", "synonyms": [{"text": "Spell", "scope": "EXACT"}]},
        {"id": "X:3", "name": "Myopia"}]))
    stats = PairStats()
    ambiguous = []
    pairs = list(ontology_pairs(load_ontology(ontology_path), stats,
                                on_ambiguous=lambda *args: ambiguous.append(args)))
    # BROAD is outside the default scopes; "attack" is X:2's name
    assert [(pair["id"], pair["mention"], pair["entity_id"], pair["source"]) for pair in pairs] == [
        ("X:1#synonym0", "Epileptic seizure", "X:1", "ontology"), ("X:2#synonym0", "Spell", "X:2", "ontology")]
    assert [(mention["mention"], entities) for mention, _, entities in ambiguous] == [("attack", ["X:1", "X:2"])]
    assert stats.by_source["ontology"] == 2 and stats.ambiguous == 1 and stats.mentions == 3


def test_make_pairs_cli_ontology_source_needs_no_corpus(small_ontology_path, tmp_path):
    result = run("make-pairs", "--ontology", small_ontology_path, "--sources", "ontology", "-i", os.devnull)
    assert result.exit_code == 0, result.stderr
    pairs = parse_jsonl(result.stdout)
    ontology = load_ontology(small_ontology_path)
    assert pairs and all(pair["source"] == "ontology" and pair["mention"] == pair["alias"] for pair in pairs)
    assert all(pair["mention"] in [text for text, _ in ontology[pair["entity_id"]].synonyms] for pair in pairs)
    assert len({pair["id"] for pair in pairs}) == len(pairs)
    assert f"ontology {len(pairs)}" in result.stderr
    # with a corpus: its pairs first, then the ontology's
    mentions = tmp_path / "mentions.jsonl"
    mentions.write_text(jsonl(MENTIONS))
    result = run("make-pairs", "--ontology", small_ontology_path, "--mentions", mentions, "--sources",
                 "name,ontology", "-i", os.devnull)
    assert result.exit_code == 0, result.stderr
    assert [pair["source"] for pair in parse_jsonl(result.stdout)] == ["name"] * 3 + ["ontology"] * len(pairs)
    result = run("make-pairs", "--ontology", small_ontology_path, "--sources", "name", "-i", os.devnull)
    assert result.exit_code == 2 and "give --mentions" in result.stderr


# a corpus labeled in another vocabulary: D1's name-matching mentions agree on Seizure (3 of them, one a
# synonym), D2 has one name-matching mention only, D3's split 2:1 between Seizure and Myopia
CONCEPT_MENTIONS = [
    {"id": "c1", "mention": "seizures", "gold": ["MESH:D1"]},
    {"id": "c2", "mention": "Seizure", "gold": ["MESH:D1"]},
    {"id": "c3", "mention": "seizure", "gold": ["MESH:D1"]},
    {"id": "c4", "mention": "fits of shaking", "gold": ["MESH:D1"], "context_left": "Then "},
    {"id": "c5", "mention": "fits of shaking", "gold": ["MESH:D1"], "context_left": "Again "},
    {"id": "c6", "mention": "Myopia", "gold": ["MESH:D2"]},
    {"id": "c7", "mention": "blurred far sight", "gold": ["MESH:D2"]},
    {"id": "c8", "mention": "Seizure", "gold": ["MESH:D3"]},
    {"id": "c9", "mention": "seizures", "gold": ["MESH:D3"]},
    {"id": "c10", "mention": "Myopia", "gold": ["MESH:D3"]},
    {"id": "c11", "mention": "an odd turn", "gold": ["MESH:D3"]},
    {"id": "c12", "mention": "fits of shaking", "gold": ["MESH:D1", "MESH:D2"]},  # two concepts: not bridged
    {"id": "c13", "mention": "fits of shaking"},  # unlabeled
]


def test_concept_pairs_bridge_a_foreign_vocabulary_by_agreeing_names(slice_ontology):
    from ontolink.aliases.pairs import concept_bridge, distinct_pairs

    assert concept_bridge(CONCEPT_MENTIONS, slice_ontology) == {"MESH:D1": ("HP:0001250", "Seizure")}
    assert concept_bridge(CONCEPT_MENTIONS, slice_ontology, min_votes=1)["MESH:D2"] == ("HP:0000545", "Myopia")
    assert "MESH:D3" not in concept_bridge(CONCEPT_MENTIONS, slice_ontology, min_votes=1)  # 2:1 is no agreement
    concepts = concept_bridge(CONCEPT_MENTIONS, slice_ontology)
    stats = PairStats()
    alone = list(make_pairs(CONCEPT_MENTIONS, build_matcher(slice_ontology, [], ("concept",)), stats,
                            concepts=concepts))
    assert [pair["id"] for pair in alone] == ["c1", "c2", "c3", "c4", "c5"]
    assert {(pair["entity_id"], pair["source"], pair["alias"]) for pair in alone} == {
        ("HP:0001250", "concept", "Seizure")}
    assert stats.by_source["concept"] == 5 and stats.unmatched == 8
    # with the string sources, a name match stays a name pair: the concept pairs what they do not
    mixed = {pair["id"]: pair["source"] for pair in make_pairs(
        CONCEPT_MENTIONS, build_matcher(slice_ontology, [], ("name", "synonym", "concept")), concepts=concepts)}
    assert mixed["c1"] == "synonym" and mixed["c2"] == "name" and mixed["c4"] == mixed["c5"] == "concept"
    assert "c7" not in mixed and "c11" not in mixed and "c12" not in mixed and "c13" not in mixed
    assert [pair["id"] for pair in distinct_pairs(alone)] == ["c1", "c2", "c4"]


def test_make_pairs_cli_concept_source(small_ontology_path, tmp_path):
    mentions = tmp_path / "labeled.jsonl"
    mentions.write_text(jsonl(CONCEPT_MENTIONS))
    result = run("make-pairs", "--ontology", small_ontology_path, "--mentions", mentions, "--sources", "concept",
                 "--distinct", input="")
    assert result.exit_code == 0, result.stderr
    assert [pair["id"] for pair in parse_jsonl(result.stdout)] == ["c1", "c2", "c4"]
    assert "1 of 3 concepts bridged" in result.stderr and "concept 5" in result.stderr
    assert "concept 5), 3 written (2 repeats left out)" in result.stderr  # the count said was of the pairs made
    result = run("make-pairs", "--ontology", small_ontology_path, "--mentions", mentions, "--sources", "concept",
                 "--concept-min-votes", "1", input="")
    assert {pair["entity_id"] for pair in parse_jsonl(result.stdout)} == {"HP:0001250", "HP:0000545"}


@pytest.mark.slow
def test_filter_keeps_anchored_aliases_and_drops_drift(small_ontology_path, slice_ontology):
    from ontolink.encoders.sentence import SentenceEncoder

    entity = slice_ontology["HP:0001250"]
    aliases = ["Seizures", "seizure", "Abnormality of the eye"]
    record = {**entity.to_record(), "aliases": [*aliases, ""], "llm": {"model": "test"}}

    def kept(*options):
        result = run("filter", "--ontology", small_ontology_path, "--device", "cpu", *options, input=jsonl([record]))
        assert result.exit_code == 0, result.stderr
        (out,) = parse_jsonl(result.stdout)
        return out

    out = kept()
    assert out["llm"] == {"model": "test"}
    decisions = {decision["alias"]: decision for decision in out["decisions"]}
    assert list(decisions) == aliases  # the empty alias is no decision

    # s_anchor and s_drift as docs/methods.md defines them, from the same encoder (fp32, the filter's default)
    neighbours = slice_ontology.neighbours("HP:0001250")
    names = [entity.name] + [slice_ontology[n].name for n in neighbours]
    vectors = SentenceEncoder(device="cpu", precision="fp32").encode(names + aliases)
    similarity = vectors[len(names):] @ vectors[:len(names)].T
    for alias, row in zip(aliases, similarity):
        assert decisions[alias]["s_anchor"] == pytest.approx(row[0], abs=1e-4)
        assert decisions[alias]["s_drift"] == pytest.approx(row[1:].max(), abs=1e-4)
        assert decisions[alias]["drift_to"] == neighbours[int(row[1:].argmax())]

    # the name's own spelling and its plural pass tau = 0.9; an unrelated phenotype drifts to a neighbour
    assert out["aliases"] == ["Seizures", "seizure"]
    drifted = decisions["Abnormality of the eye"]
    assert not drifted["kept"] and drifted["s_drift"] > drifted["s_anchor"]
    # tau alone: 0.95 drops the plural (s_anchor about 0.92) though nothing nearer claims it; -1 keeps it,
    # but never an alias nearer a neighbour than its own entity
    assert 0.9 < decisions["Seizures"]["s_anchor"] < 0.95
    assert kept("--tau", 0.95)["aliases"] == ["seizure"]
    assert kept("--tau", -1)["aliases"] == ["Seizures", "seizure"]
    result = run("filter", "--ontology", small_ontology_path, input=jsonl([{"id": "HP:9999999", "aliases": ["x"]}]))
    assert result.exit_code == 2 and "HP:9999999" in result.stderr


def test_select_entities_on_lpt_by_name():
    lpt = shared_path("sci-zsel", "lpt_kb.json")
    ontology = load_ontology(lpt)
    names = [entity.name for entity in list(ontology)[1:6]]
    selection = select_entities([{"id": str(n), "mention": name.upper()} for n, name in enumerate(names)], ontology)
    assert selection.count("exact") == 5


def test_make_pairs_files_takes_the_options_object(hpo, tmp_path):
    """make-pairs' library function, as a Python caller calls it: GSC+ mentions paired with HPO entities by
    name and synonym; each pair's mention is, once normalised, a name of its entity."""
    from ontolink.aliases.options import MakePairsOptions
    from ontolink.aliases.pairs import make_pairs_files
    from ontolink.core.io import read_records
    from ontolink.ontology import OntologySource, normalize

    mentions = tmp_path / "mentions.jsonl"
    mentions.write_text(jsonl(record for _, record in zip(range(200), read_records(str(shared_path(
        "gscplus", "mentions.jsonl"))))))
    options = MakePairsOptions(ontology=OntologySource("hpo"), mentions_path=str(mentions), input_path=os.devnull,
                               sources="name,synonym", output_path=str(tmp_path / "pairs.jsonl"), distinct=True)
    stats = make_pairs_files(options)
    pairs = parse_jsonl((tmp_path / "pairs.jsonl").read_text())
    assert 20 < len(pairs) < 200 and stats.mentions == 200
    for pair in pairs:
        assert normalize(pair["mention"]) in {normalize(name) for name, _ in hpo.named(hpo[pair["entity_id"]])}
    assert len({(normalize(pair["mention"]), pair["entity_id"]) for pair in pairs}) == len(pairs)  # --distinct
