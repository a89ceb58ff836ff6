"""CSV ontologies: a slice of the real HPO written as a spreadsheet loads to the same entities."""

import csv

from conftest import run
from ontolink.ontology import load_ontology
from ontolink.ontology.loaders import detect_format


def write_csv(path, hpo, ids, delimiter=","):
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter=delimiter)
        writer.writerow(["id", "name", "synonyms", "parents", "definition", "comment"])
        for entity_id in ids:
            entity = hpo[entity_id]
            writer.writerow([entity.id, entity.name, "|".join(text for text, scope in entity.synonyms if scope == "EXACT"),
                             "|".join(parent for parent in entity.parents if parent in ids), entity.definition, "x"])


def hpo_slice(hpo):
    ids = ["HP:0001250"] + sorted(hpo.children["HP:0001250"])[:20]
    return ids


def test_csv_slice_of_hpo_loads_the_same_entities(hpo, tmp_path):
    ids = hpo_slice(hpo)
    for name, delimiter in (("seizures.csv", ","), ("seizures.tsv", "\t")):
        write_csv(tmp_path / name, hpo, ids, delimiter)
        assert detect_format(tmp_path / name) == "csv"
        loaded = load_ontology(str(tmp_path / name), synonym_scopes=("EXACT",), use_cache=False)
        assert sorted(entity.id for entity in loaded) == sorted(ids)
        for entity_id in ids:
            assert loaded[entity_id].name == hpo[entity_id].name
            assert loaded[entity_id].definition == hpo[entity_id].definition
            assert [text for text, _ in loaded[entity_id].synonyms] == \
                [text for text, scope in hpo[entity_id].synonyms if scope == "EXACT"]
        assert all(loaded[child].parents == ["HP:0001250"] for child in ids[1:])


def test_csv_index_and_link(hpo, tmp_path):
    path = tmp_path / "seizures.csv"
    write_csv(path, hpo, hpo_slice(hpo))
    built = run("index", "--ontology", path, "--method", "tfidf", tmp_path / "idx")
    assert built.exit_code == 0, built.output
    linked = run("link", "--index", tmp_path / "idx", input='{"id": "m1", "mention": "seizure"}\n')
    assert linked.exit_code == 0 and '"HP:0001250"' in linked.stdout


def test_csv_bad_rows_name_file_and_line(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("id,name\nX:1,first\nX:2,second,extra\n", encoding="utf-8")
    result = run("index", "--ontology", path, "--method", "tfidf", tmp_path / "idx")
    assert result.exit_code == 2 and "bad.csv:3" in result.output
    path.write_text("identifier,label\nX:1,first\n", encoding="utf-8")
    result = run("index", "--ontology", path, "--method", "tfidf", tmp_path / "idx")
    assert result.exit_code == 2 and "bad.csv:1" in result.output and "id, name" in result.output
