"""The label-free span scorer: `train span-scorer` (ontology names against n-grams of unlabeled abstracts), its
artifact, and `annotate --index --span-scorer`, on a real HPO slice, real NCBI-disease abstracts and the LPT
livestock ontology."""

import json

import numpy as np
import pytest

from conftest import parse_jsonl, run, shared_path

ABSTRACTS = 25


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The first NCBI-disease abstracts as plain-text documents (ID<TAB>text), rebuilt from the mentions file."""
    texts = {}
    with open(shared_path("ncbi_disease", "unlabeled_mentions.jsonl"), encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            texts.setdefault(record["doc_id"], record["context_left"] + record["mention"] + record["context_right"])
            if len(texts) > ABSTRACTS:
                break
    path = tmp_path_factory.mktemp("corpus") / "abstracts.txt"
    path.write_text("".join(f"{doc}\t{' '.join(text.split())}\n" for doc, text in list(texts.items())[:ABSTRACTS]),
                    encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def scorer_dir(small_ontology_path, corpus, tmp_path_factory):
    directory = tmp_path_factory.mktemp("scorer") / "spans"
    result = run("train", "span-scorer", "--ontology", small_ontology_path, "-i", corpus, directory)
    assert result.exit_code == 0, result.stderr
    assert "fitted a span scorer on" in result.stderr and f"of {ABSTRACTS} documents" in result.stderr
    return directory


def test_same_seed_same_scorer_and_scores_do_not_depend_on_the_batch(scorer_dir, small_ontology_path, corpus,
                                                                     tmp_path):
    from ontolink.recognition.span_scorer_artifact import load_span_scorer
    from ontolink.recognition.ngrams import candidate_spans

    again = tmp_path / "again"
    assert run("train", "span-scorer", "--ontology", small_ontology_path, "-i", corpus, again).exit_code == 0
    assert (again / "span_scorer.safetensors").read_bytes() == (scorer_dir / "span_scorer.safetensors").read_bytes()
    first, second = (json.loads((path / "manifest.json").read_text()) for path in (scorer_dir, again))
    assert first["threshold"] == second["threshold"] and first["fit"] == second["fit"]
    other = tmp_path / "seed1"
    assert run("train", "span-scorer", "--ontology", small_ontology_path, "-i", corpus, "--seed", 1,
               other).exit_code == 0
    assert (other / "span_scorer.safetensors").read_bytes() != (scorer_dir / "span_scorer.safetensors").read_bytes()

    scorer = load_span_scorer(scorer_dir)
    text = corpus.read_text(encoding="utf-8").splitlines()[0].split("\t", 1)[1]
    spans = [text[start:end] for start, end in candidate_spans(text, [False] * len(text))]
    together = scorer.scores(spans)
    assert np.array_equal(together, np.concatenate([scorer.scores(spans[i:i + 7]) for i in range(0, len(spans), 7)]))
    # names of the slice (held out or not) read as names; running text does not
    names = scorer.scores(["generalized tonic-clonic seizures", "abnormality of the eye", "focal seizures"])
    assert (names >= scorer.threshold).all()
    assert (together >= scorer.threshold).mean() < 0.5


def test_annotate_asks_the_index_only_about_the_ngrams_the_scorer_passes(scorer_dir, small_ontology_path,
                                                                        hashed_index, tmp_path):
    from ontolink.recognition.span_scorer_artifact import load_span_scorer

    docs = tmp_path / "docs.txt"
    docs.write_text("d1\tThe girl had eye abnormalities and frequent seizure episodes; her brother had none.\n"
                    "d2\t\n")
    common = ["annotate", "--ontology", small_ontology_path, "-i", docs, "--index", hashed_index,
              "--dense-threshold", 0.3]
    plain, gated = run(*common), run(*common, "--span-scorer", scorer_dir)
    assert plain.exit_code == 0 and gated.exit_code == 0, gated.stderr
    assert "1 document without text" in gated.stderr
    dense = {(m["start"], m["end"]) for m in parse_jsonl(plain.stdout) if m["matched_by"] == "dense"}
    kept = [m for m in parse_jsonl(gated.stdout) if m["matched_by"] == "dense"]
    scorer = load_span_scorer(scorer_dir)
    assert kept and len(kept) < len(dense)
    assert all(scorer.scores([m["mention"]])[0] >= scorer.threshold for m in kept)
    # the dictionary's mentions do not change
    assert [m for m in parse_jsonl(plain.stdout) if m["matched_by"] != "dense"] == \
        [m for m in parse_jsonl(gated.stdout) if m["matched_by"] != "dense"]
    alone = run("annotate", "--ontology", small_ontology_path, "-i", docs, "--span-scorer", scorer_dir)
    assert alone.exit_code == 2 and "--span-scorer" in alone.stderr


def test_same_code_on_a_livestock_ontology(tmp_path):
    from ontolink.recognition.span_scorer_artifact import load_span_scorer

    corpus = tmp_path / "farm.txt"
    corpus.write_text("f1\tWe weighed the piglets at weaning and recorded the litter size of each sow.\n"
                      "f2\tThe cows were milked twice a day during the first month of lactation on three farms.\n"
                      "f3\tEgg production of the hens was counted every week by the farm staff.\n", encoding="utf-8")
    directory = tmp_path / "lpt-spans"
    result = run("train", "span-scorer", "--ontology", shared_path("sci-zsel", "lpt_kb.json"), "-i", corpus, directory)
    assert result.exit_code == 0, result.stderr
    scorer = load_span_scorer(directory)
    traits, words = scorer.scores(["milk potassium content", "egg weight", "loin weight"]), \
        scorer.scores(["were milked twice", "farm staff", "every week"])
    assert traits.min() > words.max()


def test_bad_corpora_and_damaged_scorers_are_one_line_errors(small_ontology_path, scorer_dir, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("d1\t\n\n")
    result = run("train", "span-scorer", "--ontology", small_ontology_path, "-i", empty, tmp_path / "out")
    assert result.exit_code == 2 and "empty.txt: holds no document with text" in result.stderr
    latin = tmp_path / "latin1.txt"
    latin.write_bytes(b"d1\tSeizures of the eye were seen.\nd2\tcaf\xe9 au lait\n")
    result = run("train", "span-scorer", "--ontology", small_ontology_path, "-i", latin, tmp_path / "out")
    assert result.exit_code == 2 and "latin1.txt:2: not valid UTF-8" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "out").exists()
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / "manifest.json").write_text((scorer_dir / "manifest.json").read_text())
    (damaged / "span_scorer.safetensors").write_bytes((scorer_dir / "span_scorer.safetensors").read_bytes()[:1000])
    result = run("annotate", "--ontology", small_ontology_path, "-i", latin, "--index", tmp_path, "--span-scorer",
                 damaged)
    assert result.exit_code == 2 and "span_scorer.safetensors" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow  # a 2 MB line is 1.5 million n-grams to fold
def test_a_document_of_one_2_mb_line_trains(small_ontology_path, tmp_path):
    huge = tmp_path / "huge.txt"
    huge.write_text("h1\t" + "The boy had seizures and a small head. " * 52_000 + "\n")  # one 2 MB line
    result = run("train", "span-scorer", "--ontology", small_ontology_path, "-i", huge, tmp_path / "out")
    assert result.exit_code == 0 and "of 1 document into" in result.stderr, result.stderr
