"""annotate (dictionary concept recognition), eval --spans, and NIL marks (link --nil-threshold, eval)."""

import json
import re

import pytest

from conftest import jsonl, parse_jsonl, run, shared_path
from ontolink.recognition.matcher import ConceptMatcher
from ontolink.recognition.wordforms import fold

TEXT = ("The boy had seizures and Abnormalities of the eyes; his epileptic seizures began early. "
        "All of this was mild.")


def test_fold_cases_plurals_and_abbreviations():
    assert fold("Seizures") == "seizure" and fold("abnormalities") == "abnormality"
    assert fold("stenosis") == "stenosis" and fold("ASD") == "ASD" and fold("Tumours") == fold("tumor")
    assert fold("haemorrhage") == fold("hemorrhage")


def test_matcher_longest_match_on_word_boundaries(small_ontology_path):
    from ontolink.ontology import load_ontology

    ontology = load_ontology(small_ontology_path)
    matcher = ConceptMatcher(ontology)
    found = [(TEXT[start:end], ids) for start, end, ids in matcher.matches(TEXT)]
    assert ("seizures", ["HP:0001250"]) in found
    assert ("Abnormalities of the eyes", ["HP:0000478"]) in found  # plural, case, several words
    assert any(text == "epileptic seizures" for text, _ in found)  # longest match wins over "seizures"
    assert all(text != "seizure" for text, _ in found)
    assert not matcher.matches("Seizuresque fits")  # word boundaries: no match inside a word
    nested = [TEXT[start:end] for start, end, _ in matcher.matches(TEXT, nesting="all")]
    assert nested.count("seizures") == 2  # the one inside "epileptic seizures" too
    rooted = ConceptMatcher(ontology, roots=["HP:0000478"])
    assert [TEXT[s:e] for s, e, _ in rooted.matches(TEXT)] == ["Abnormalities of the eyes"]


def test_annotate_pipes_into_link_and_eval_spans(small_ontology_path, tfidf_index, tmp_path):
    docs = tmp_path / "docs.txt"
    docs.write_text(f"d1\t{TEXT}\n")
    result = run("annotate", "--ontology", small_ontology_path, "-i", docs)
    assert result.exit_code == 0, result.stderr
    mentions = parse_jsonl(result.stdout)
    assert all(TEXT[m["start"]:m["end"]] == m["mention"] and m["doc_id"] == "d1" for m in mentions)
    assert all(m["context_left"] + m["mention"] + m["context_right"] == TEXT for m in mentions)
    linked = run("link", "--index", tfidf_index, "--top-k", 3, input=result.stdout)
    start = TEXT.index("seizures")
    gold = tmp_path / "gold.jsonl"
    gold.write_text(jsonl([
        {"id": "g1", "doc_id": "d1", "start": start, "end": start + 8, "mention": "seizures", "gold": ["HP:0001250"]},
        {"id": "g2", "doc_id": "d1", "start": 0, "end": 3, "mention": "The", "gold": ["HP:0000478"]}]))
    scored = run("eval", "--spans", "--gold", gold, "--format", "json", input=linked.stdout)
    assert scored.exit_code == 0, scored.stderr
    metrics = json.loads(scored.stdout)["metrics"]
    strict = metrics["strict"]
    assert strict["gold"] == 2 and strict["predicted"] == len(mentions)
    assert strict["R"] == 0.5 and strict["P"] == pytest.approx(1 / len(mentions))
    assert run("eval", "--spans", input=linked.stdout).exit_code == 2  # needs --gold


@pytest.mark.slow
def test_annotate_gscplus_document_finds_gold_spans(tmp_path):
    records = [json.loads(line) for line in shared_path("gscplus", "mentions.jsonl").read_text().splitlines()]
    first = [record for record in records if record["doc_id"] == records[0]["doc_id"]]
    text = first[0]["context_left"] + first[0]["mention"] + first[0]["context_right"]
    docs = tmp_path / "doc.txt"
    docs.write_text(f"{first[0]['doc_id']}\t{text}\n")
    found = parse_jsonl(run("annotate", "--ontology", "hpo", "--roots", "HP:0000118", "-i", docs).stdout)
    spans = {(m["start"], m["end"]) for m in found}
    hits = sum((record["start"], record["end"]) in spans for record in first)
    assert hits >= len(first) // 3, (hits, len(first))  # a real abstract: a good share of gold spans found
    assert run("annotate", "--ontology", "hpo", "--roots", "HP:9999999", "-i", docs).exit_code == 2


def test_annotate_dense_ngrams_add_spans_the_dictionary_missed(small_ontology_path, tfidf_index, tmp_path):
    docs = tmp_path / "docs.txt"
    docs.write_text("d1\tThe girl had seizure episodes and abnormal eyes.\n")
    plain = parse_jsonl(run("annotate", "--ontology", small_ontology_path, "-i", docs).stdout)
    result = run("annotate", "--ontology", small_ontology_path, "-i", docs, "--index", tfidf_index,
                 "--dense-threshold", 0.5, "--max-words", 3)
    assert result.exit_code == 0, result.stderr
    widened = parse_jsonl(result.stdout)
    dense = [m for m in widened if m["matched_by"] == "dense"]
    assert dense and len(widened) == len(plain) + len(dense)
    taken = [(m["start"], m["end"]) for m in plain]
    for mention in dense:  # outside the dictionary's spans, at most 3 words, an id from the index
        assert all(mention["end"] <= start or mention["start"] >= end for start, end in taken)
        assert len(mention["mention"].split()) <= 3 and mention["matched_ids"][0].startswith("HP:")
    strict = parse_jsonl(run("annotate", "--ontology", small_ontology_path, "-i", docs, "--index", tfidf_index,
                             "--dense-threshold", 1.01).stdout)
    assert strict == plain


def test_link_nil_threshold_marks_and_eval_reports_nil(tfidf_index, tmp_path):
    mentions = [{"id": "m1", "mention": "seizures", "gold": ["HP:0001250"]},
                {"id": "m2", "mention": "milk yield of dairy cows", "gold": []},
                {"id": "m3", "mention": "Myopia", "gold": ["HP:0000545"]}]
    plain = parse_jsonl(run("link", "--index", tfidf_index, "--top-k", 3, input=jsonl(mentions)).stdout)
    cut = (plain[0]["candidates"][0]["score"] + plain[1]["candidates"][0]["score"]) / 2
    assert plain[1]["candidates"][0]["score"] < cut
    result = run("link", "--index", tfidf_index, "--top-k", 3, "--nil-threshold", cut, input=jsonl(mentions))
    marked = parse_jsonl(result.stdout)
    assert [m["nil"] for m in marked] == [False, True, False] and len(marked[1]["candidates"]) == 3
    scored = json.loads(run("eval", "--format", "json", input=result.stdout).stdout)
    assert scored["metrics"]["all"]["n"] == 2  # the NIL-gold mention is not ranked
    nil = scored["nil"]["NIL"]
    assert (nil["P"], nil["R"], nil["F1"]) == (1.0, 1.0, 1.0)
    assert nil["R@1_linkable"] == 1.0
    table = run("eval", "--format", "markdown", input=result.stdout).stdout
    assert "| all" in table and "nil_predicted" not in table  # one table per stream
    assert re.search(r"^\| NIL +\| 1 +\| n/a", table, re.M)  # the metrics table counts the NIL-gold mention
    assert "nil_predicted" in run("eval", "--format", "markdown", "--table", "nil", input=result.stdout).stdout
    unmarked = json.loads(run("eval", "--format", "json", input=jsonl(plain[:1])).stdout)
    assert "nil" not in unmarked  # no NIL in gold or predictions: no NIL table
    auto = run("link", "--index", tfidf_index, "--nil-threshold", "auto", input=jsonl(mentions))
    assert auto.exit_code == 0 and "NIL threshold" in auto.stderr
    assert all(isinstance(m["nil"], bool) for m in parse_jsonl(auto.stdout))
    assert run("link", "--index", tfidf_index, "--nil-threshold", "high", input=jsonl(mentions)).exit_code == 2


def test_calibration_is_deterministic(tfidf_index):
    from ontolink.indexes.artifact import load_index
    from ontolink.linking.nil import calibrate_nil_threshold

    loaded = load_index(tfidf_index)
    first, details = calibrate_nil_threshold(loaded, queries=100, seed=3)
    assert first == calibrate_nil_threshold(loaded, queries=100, seed=3)[0]
    assert details["linkable_median"] > details["unlinkable_median"]
    assert details["linkable_kept"] > details["unlinkable_kept"]


def test_eval_accepts_pubtator_gold(tfidf_index, tmp_path):
    pubtator = tmp_path / "gold.pubtator"
    pubtator.write_text("7|t|Seizures and myopia.\n7|a|No fever.\n7\t0\t8\tSeizures\tPhenotype\tHP:0001250\n"
                        "7\t13\t19\tmyopia\tPhenotype\tHP:0000545\n7\t24\t29\tfever\tPhenotype\t-1\n\n")
    mentions = run("convert", "-i", pubtator).stdout
    unlabeled = "".join(json.dumps({k: v for k, v in m.items() if k != "gold"}) + "\n" for m in parse_jsonl(mentions))
    linked = run("link", "--index", tfidf_index, "--top-k", 3, input=unlabeled).stdout
    scored = run("eval", "--gold", pubtator, "--format", "json", input=linked)
    assert scored.exit_code == 0, scored.stderr
    report = json.loads(scored.stdout)
    assert report["metrics"]["all"]["n"] == 2 and report["metrics"]["all"]["R@1"] == 1.0
    assert report["metrics"]["NIL"]["n"] == 1  # "-1" is an unlinkable mention, counted beside all
    assert "nil" not in report  # no prediction carries a NIL decision: nothing to score P / R / F1 of
    asked = run("eval", "--gold", pubtator, "--format", "json", "--nil-table", input=linked)
    assert json.loads(asked.stdout)["nil"]["NIL"]["nil_gold"] == 1


def test_link_keeps_the_entity_annotate_found_over_the_span(small_ontology_path, tfidf_index, tmp_path):
    """"Tonic clonic seizures" is a synonym of Bilateral tonic-clonic seizure; the TF-IDF search alone ranks
    Clonic seizure first. A Mention from annotate's dictionary keeps the entity it found (matched_by
    "annotate"); the same words given to link as a bare phrase keep the index's order; an exact name stays
    first."""
    docs = tmp_path / "docs.txt"
    docs.write_text("d1\tTonic clonic seizures, secondarily generalized, began at two.\n")
    mentions = parse_jsonl(run("annotate", "--ontology", small_ontology_path, "-i", docs).stdout)
    by_text = {mention["mention"]: mention for mention in mentions}
    assert by_text["Tonic clonic seizures"]["matched_ids"] == ["HP:0002069"]
    linked = parse_jsonl(run("link", "--index", tfidf_index, "--top-k", 10, input=jsonl(mentions)).stdout)
    best = {record["mention"]: record["candidates"][0] for record in linked}
    assert (best["Tonic clonic seizures"]["id"], best["Tonic clonic seizures"]["matched_by"]) == ("HP:0002069", "annotate")
    assert (best["seizures"]["id"], best["seizures"]["matched_by"]) == ("HP:0001250", "exact")
    plain = parse_jsonl(run("link", "--index", tfidf_index, "--top-k", 10, "--no-annotate-ids",
                            input=jsonl(mentions)).stdout)
    assert {record["mention"]: record["candidates"][0]["id"] for record in plain}["Tonic clonic seizures"] != "HP:0002069"
    bare = parse_jsonl(run("link", "--index", tfidf_index, "--top-k", 10, "Tonic clonic seizures").stdout)[0]
    assert bare["candidates"][0]["id"] != "HP:0002069"  # what link alone does: the case is a real one
    assert "HP:0002069" in [candidate["id"] for candidate in bare["candidates"]]
    # a dense n-gram's matched_ids are the index's own guess: not a dictionary match, no reordering
    dense = [{**by_text["Tonic clonic seizures"], "matched_by": "dense"}]
    again = parse_jsonl(run("link", "--index", tfidf_index, "--top-k", 10, input=jsonl(dense)).stdout)[0]
    assert again["candidates"][0]["id"] == bare["candidates"][0]["id"]


def test_no_annotate_ids_leaves_annotate_out_with_a_ranker_too(small_ontology_path, tfidf_index, tmp_path):
    """With --ranker, annotate's entities are only marked "matched_by": "annotate" (the ranker orders them):
    --no-annotate-ids leaves that mark out, as it does without a ranker and with a reranker."""
    from ontolink.indexes.artifact import load_index
    from ontolink.ranking.queries import synonym_queries
    from ontolink.ranking.train import train_ranker

    loaded = load_index(tfidf_index)
    train_ranker(loaded, tmp_path / "ranker", synonym_queries(loaded, 200, seed=0), groups=["dense", "lexical"],
                 top_k=10)
    docs = tmp_path / "docs.txt"
    docs.write_text("d1\tTonic clonic seizures, secondarily generalized, began at two.\n")
    mentions = jsonl(parse_jsonl(run("annotate", "--ontology", small_ontology_path, "-i", docs).stdout))

    def found_by_annotate(*options):
        linked = parse_jsonl(run("link", "--index", tfidf_index, "--ranker", tmp_path / "ranker", *options,
                                 input=mentions).stdout)
        return {candidate["id"] for record in linked for candidate in record["candidates"]
                if candidate["matched_by"] == "annotate"}

    assert "HP:0002069" in found_by_annotate()
    assert found_by_annotate("--no-annotate-ids") == set()


def test_annotate_files_takes_the_options_object(small_ontology_path, tmp_path):
    """annotate's library function, as a Python caller calls it: the GSC+ abstracts (one a line) against the
    400-entity HPO slice give the command's own bytes; every mention sits in its document's text."""
    from ontolink.core.errors import InputError
    from ontolink.ontology import OntologySource
    from ontolink.recognition.annotate import annotate_files
    from ontolink.recognition.options import AnnotateOptions

    texts = {}
    for line in shared_path("gscplus", "mentions.jsonl").read_text().splitlines():
        record = json.loads(line)
        texts.setdefault(record["doc_id"], record["context_left"] + record["mention"] + record["context_right"])
    docs = tmp_path / "abstracts.txt"
    docs.write_text("".join(f"{doc_id}\t{text}\n" for doc_id, text in texts.items()))
    options = AnnotateOptions(ontology=OntologySource(str(small_ontology_path)), input_path=str(docs),
                              output_path=str(tmp_path / "mentions.jsonl"))
    count = annotate_files(options)
    written = (tmp_path / "mentions.jsonl").read_text()
    found = parse_jsonl(written)
    assert count == len(found) > 10
    assert all(m["context_left"] + m["mention"] + m["context_right"] == texts[m["doc_id"]] for m in found)
    assert written == run("annotate", "--ontology", small_ontology_path, "-i", docs).stdout
    with pytest.raises(InputError, match="--roots: HP:9999999 not in the ontology"):
        annotate_files(AnnotateOptions(ontology=options.ontology, input_path=str(docs), roots="HP:9999999"))
