"""CSV ontologies: a slice of the real HPO written as a spreadsheet loads to the same entities."""

import csv

from conftest import parse_jsonl, run
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


def test_field_maps_a_table_of_its_own_column_names(hpo, tmp_path):
    """A spreadsheet whose columns are not id,name (--field was refused for CSV: the user rewrote the file): the
    columns mapped with --field, its lists split at its own separator, its type column kept."""
    ids = hpo_slice(hpo)
    path = tmp_path / "phenotypes.csv"
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["HPO ID", "Preferred label", "Other labels", "Broader", "Category", "notes"])
        for entity_id in ids:
            entity = hpo[entity_id]
            writer.writerow([entity.id, entity.name,
                             "; ".join(text for text, scope in entity.synonyms if scope == "EXACT"),
                             "; ".join(parent for parent in entity.parents if parent in ids),
                             "Seizure" if entity_id != "HP:0001250" else "Root", "x"])
    fields = "id=HPO ID,name=Preferred label,synonyms=Other labels,parents=Broader,type=Category,separator=;"
    built = run("index", "--ontology", path, "--field", fields, "--method", "tfidf", tmp_path / "idx")
    assert built.exit_code == 0, built.output
    assert f"indexed" in built.stderr and f"of {len(ids)} entities" in built.stderr
    loaded = load_ontology(str(path), synonym_scopes=("EXACT",), use_cache=False,
                           fields={"id": "HPO ID", "name": "Preferred label", "synonyms": "Other labels",
                                   "parents": "Broader", "type": "Category", "separator": ";"})
    for entity_id in ids:
        assert [text for text, _ in loaded[entity_id].synonyms] == \
            [text for text, scope in hpo[entity_id].synonyms if scope == "EXACT"]
    assert all(loaded[child].parents == ["HP:0001250"] for child in ids[1:])
    assert loaded["HP:0001250"].type == "Root" and {loaded[child].type for child in ids[1:]} == {"Seizure"}
    linked = run("link", "--index", tmp_path / "idx", "seizure")
    assert linked.exit_code == 0 and '"HP:0001250"' in linked.stdout
    # a column the header lacks, and one shown under the Entity field's own name, are named
    result = run("index", "--ontology", path, "--field", "id=HPO ID,name=Label", tmp_path / "idx2")
    assert result.exit_code == 2 and "phenotypes.csv:1: --field name=Label: the header row has no column 'Label'" \
        in result.stderr
    result = run("index", "--ontology", path, tmp_path / "idx3")
    assert result.exit_code == 2 and "needs the column(s) id, name" in result.stderr
    assert "--field id=COLUMN,name=COLUMN" in result.stderr


def test_columns_by_number_read_a_tsv_without_a_header(tmp_path):
    """The shared KG's entity table is `id<TAB>name<TAB>type` with no header row (4,192 entities of BC5CDR and
    BioRED): numbered columns read it whole, the first row an entity too."""
    from conftest import shared_path

    path = shared_path("align", "entities.tsv")
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
    loaded = load_ontology(str(path), fields={"id": "1", "name": "2", "type": "3"}, use_cache=False)
    assert len(loaded) == len(rows) == 4192
    first = rows[0]
    assert loaded[first[0]].name == first[1] and loaded[first[0]].types == [first[2]]
    assert sum(entity.type == "Disease" for entity in loaded) == sum(row[2] == "Disease" for row in rows) == 1112
    built = run("index", "--ontology", path, "--field", "id=1,name=2,type=3", "--method", "tfidf", tmp_path / "idx0")
    assert built.exit_code == 0, built.output
    assert "; types (--where type=...): Gene 1,498, Disease 1,112, Chemical 990, Variant 592" in built.stderr
    result = run("index", "--ontology", path, "--field", "id=1,name=Term", "--method", "tfidf", tmp_path / "idx")
    assert result.exit_code == 2 and "all by header name or all by number" in result.stderr
    result = run("index", "--ontology", path, "--field", "id=1,name=7", "--method", "tfidf", tmp_path / "idx")
    assert result.exit_code == 2 and "entities.tsv:1: 3 fields where --field names column 7" in result.stderr


def test_separator_is_for_tables_only(small_ontology_path, tmp_path):
    result = run("index", "--ontology", small_ontology_path, "--field", "separator=;", tmp_path / "idx")
    assert result.exit_code == 2 and "splits the cells of a CSV/TSV file" in result.stderr


def test_two_mappings_of_one_file_are_two_dictionaries(hpo, tmp_path):
    """The same table read with another --field is other names: annotate's cached dictionary (keyed by the file's
    content) must not serve the first mapping's names to the second."""
    ids = [entity_id for entity_id in hpo_slice(hpo) if any(scope == "EXACT" for _, scope in hpo[entity_id].synonyms)]
    path = tmp_path / "two_names.csv"
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["code", "label", "other"])
        for entity_id in ids:
            entity = hpo[entity_id]
            writer.writerow([entity.id, entity.name, next(text for text, scope in entity.synonyms if scope == "EXACT")])
    first = hpo[ids[0]]
    other = next(text for text, scope in first.synonyms if scope == "EXACT")
    text = f"1\tA child with {first.name.lower()}.\n2\tAnother with {other.lower()}.\n"
    found = {}
    for column in ("label", "other"):
        result = run("annotate", "--ontology", path, "--field", f"id=code,name={column}", input=text)
        assert result.exit_code == 0, result.output
        found[column] = {record["doc_id"] for record in parse_jsonl(result.stdout)}
    assert "1" in found["label"] and "2" in found["other"]
    assert found["label"] != found["other"]
