"""Entity subsets (`annotate` and `link` --entities FILE / --where type=...) and the mention's type from the ontology:
an ontology without a hierarchy (the shared KG's table of 4,192 BC5CDR/BioRED entities, a type column, no parents)
cannot be cut by --roots, so raw abstracts were annotated with every type of entity, and every mention was typed
"Entity"."""

import json

import numpy as np
import pytest

from conftest import KG_ENTITY_FIELDS, annotation_lines, jsonl, parse_jsonl, run, shared_path

FIELDS = ",".join(f"{field}={column}" for field, column in KG_ENTITY_FIELDS.items())


@pytest.fixture
def cdr_documents(tmp_path):
    """The first 30 documents of BC5CDR's test set, PubTator: their text is what `annotate` reads."""
    text = shared_path("align", "raw", "bc5cdr", "CDR_TestSet.PubTator.txt").read_text(encoding="utf-8")
    path = tmp_path / "cdr30.pubtator"
    path.write_text("\n\n".join([block for block in text.split("\n\n") if block.strip()][:30]) + "\n\n",
                    encoding="utf-8")
    return path


def _annotate(documents, *options):
    result = run("annotate", "--ontology", shared_path("align", "entities.tsv"), "--field", FIELDS, "-i", documents,
                 "--from", "pubtator", *options)
    assert result.exit_code == 0, result.output
    return parse_jsonl(result.stdout), result.stderr


def _spans(records):
    return {(record["doc_id"], record["start"], record["end"]) for record in records}


def test_annotate_where_type_keeps_one_type_and_types_every_mention(cdr_documents, kg_entities_index, tmp_path):
    every, _ = _annotate(cdr_documents)
    diseases, stderr = _annotate(cdr_documents, "--where", "type=Disease")
    # each mention typed by its entity (the table's type column), not "Entity"
    assert {record["type"] for record in every} >= {"Disease", "Chemical"}
    assert {record["type"] for record in diseases} == {"Disease"}
    assert "(1112 names of 1112 entities" in stderr.replace(",", "")
    # the Disease mentions of the whole dictionary are all found again (nothing of another type hides them)
    assert _spans(record for record in every if record["type"] == "Disease") <= _spans(diseases)
    # scored against the corpus's own Disease spans: the subset is what a user wanted
    gold = {(columns[0], int(columns[1]), int(columns[2])) for columns in annotation_lines(cdr_documents.read_text())
            if columns[4] == "Disease"}
    precision_all = len(_spans(every) & gold) / len(every)
    precision_diseases = len(_spans(diseases) & gold) / len(diseases)
    print(f"precision on the corpus's Disease spans: {precision_all:.3f} all types, {precision_diseases:.3f} "
          f"--where type=Disease ({len(every)} and {len(diseases)} mentions)")
    assert precision_diseases > 1.5 * precision_all, (precision_diseases, precision_all)
    # the type goes on to PubTator (it wrote "Entity"), ids as the corpus writes them
    linked = run("link", "--index", kg_entities_index, "--top-k", 1, input=jsonl(diseases))
    linked_path = tmp_path / "linked.jsonl"
    linked_path.write_text(linked.stdout)
    written = run("convert", "-i", linked_path, "--to", "pubtator", "--documents", cdr_documents,
                  "--strip-prefix", "MESH:")
    assert written.exit_code == 0, written.stderr
    lines = annotation_lines(written.stdout)
    assert len(lines) == len(diseases) and {columns[4] for columns in lines} == {"Disease"}
    assert not any(columns[5].startswith("MESH:") for columns in lines)
    # --type still names every mention one way
    typed, _ = _annotate(cdr_documents, "--where", "type=Disease", "--type", "Phenotype")
    assert {record["type"] for record in typed} == {"Phenotype"} and _spans(typed) == _spans(diseases)


def test_annotate_entities_file_and_where_together(cdr_documents, tmp_path):
    every, _ = _annotate(cdr_documents)
    first_ids = {record["type"]: set() for record in every}
    for record in every:
        first_ids[record["type"]].add(record["matched_ids"][0])
    wanted = sorted(first_ids["Disease"])[:6] + sorted(first_ids["Chemical"])[:6]
    ids_file = tmp_path / "wanted.txt"
    ids_file.write_text("# the entities looked for\n" + "".join(f"{entity_id}\t3\n" for entity_id in wanted)
                        + "MESH:NOT-AN-ID\n")
    chosen, stderr = _annotate(cdr_documents, "--entities", ids_file)
    assert chosen and {entity for record in chosen for entity in record["matched_ids"]} <= set(wanted)
    assert "1 id not in the ontology entities.tsv" in stderr
    both, _ = _annotate(cdr_documents, "--entities", ids_file, "--where", "type=Chemical")
    assert both and all(record["type"] == "Chemical" for record in both)
    assert _spans(both) < _spans(chosen)
    # select-entities' JSONL serves as well
    records_file = tmp_path / "wanted.jsonl"
    records_file.write_text(jsonl([{"id": entity_id, "mention_count": 2} for entity_id in wanted]))
    assert _spans(_annotate(cdr_documents, "--entities", records_file)[0]) == _spans(chosen)


@pytest.mark.parametrize("options, message", [
    (("--where", "category=Disease"), "--where: 'category' is not a field it reads"),
    (("--where", "type"), "--where takes FIELD=VALUE"),
    (("--where", "type=Organism"), "--where type=Organism keeps no entity of the ontology entities.tsv (its types: "
                                   "Chemical, Disease, Gene, Variant)"),
    (("--entities", "absent.txt"), "absent.txt: no such file of entity ids"),
])
def test_a_subset_that_cannot_be_made_is_one_line_exit_2(cdr_documents, options, message):
    result = run("annotate", "--ontology", shared_path("align", "entities.tsv"), "--field", FIELDS,
                 "-i", cdr_documents, "--from", "pubtator", *options)
    assert result.exit_code == 2 and message in result.stderr, result.output
    assert "Traceback" not in result.output


def test_link_where_fills_top_k_from_the_subset(kg_entities_index, cdr):
    mentions = run("convert", "-i", cdr, "--types", "Disease").stdout
    result = run("link", "--index", kg_entities_index, "--top-k", 5, "--where", "type=Chemical", input=mentions)
    assert result.exit_code == 0, result.stderr
    assert "candidates among 990 of 4,192 entities" in result.stderr
    names = json.loads((kg_entities_index / "names.json").read_text())
    type_of = dict(zip(names["entity_ids"], names["entity_types"]))
    linked = parse_jsonl(result.stdout)
    assert linked and all(len(record["candidates"]) == 5 for record in linked)  # filled, from deeper in the index
    assert all(type_of[candidate["id"]] == ["Chemical"] for record in linked for candidate in record["candidates"])
    plain = parse_jsonl(run("link", "--index", kg_entities_index, "--top-k", 5, input=mentions).stdout)
    assert sum(record["candidates"][0]["id"].startswith("MESH:D") and type_of[record["candidates"][0]["id"]]
               == ["Disease"] for record in plain) > len(plain) / 2  # without it, mostly diseases


def test_link_entities_on_an_index_without_types(tfidf_index, small_ontology_path, tmp_path):
    ids = [json.loads(line)["id"] for line in small_ontology_path.read_text().splitlines()][::9]
    ids_file = tmp_path / "ids.txt"
    ids_file.write_text("\n".join(ids) + "\n")
    result = run("link", "--index", tfidf_index, "--top-k", 3, "--entities", ids_file, "seizure", "myopia")
    assert result.exit_code == 0, result.stderr
    linked = parse_jsonl(result.stdout)
    assert all(len(record["candidates"]) == 3 and {candidate["id"] for candidate in record["candidates"]} <= set(ids)
               for record in linked)
    refused = run("link", "--index", tfidf_index, "--where", "type=Disease", "seizure")
    assert refused.exit_code == 2 and "have no type" in refused.stderr and "--field type=NAME" in refused.stderr


def test_a_restricted_search_is_the_full_ranking_kept_to_the_subset(hashed_index):
    """However small the subset, the Linker searches deep enough: its candidates are the unrestricted ranking's
    entities of the subset, in the same order and with the same scores."""
    from ontolink.indexes.artifact import load_index
    from ontolink.linking.linker import Linker

    loaded = load_index(hashed_index, device="cpu")
    texts = ["seizures", "abnormality of the eye", "myopia", "febrile seizure", "nystagmus"]
    everything = Linker(loaded, top_k=len(loaded.entity_ids)).search_rows(texts)
    rng = np.random.default_rng(0)
    for size in (3, 11, 60):
        subset = set(rng.choice(loaded.entity_ids, size=size, replace=False).tolist())
        loaded.restrict(subset)
        top_k = 8
        restricted = Linker(loaded, top_k=top_k).search_rows(texts)
        loaded.restrict(None)
        for (entities, scores, _), (all_entities, all_scores, _) in zip(restricted, everything):
            keep = np.array([loaded.entity_ids[row] in subset for row in all_entities.tolist()], dtype=bool)
            expected = all_entities[keep][:top_k]
            assert len(entities) == min(top_k, len(expected))
            np.testing.assert_array_equal(entities, expected)
            np.testing.assert_allclose(scores, all_scores[keep][:top_k], atol=1e-6)


def test_python_api_subsets(kg_entities_index):
    """From Python: Index.link(where=..., entities=...) and annotate(where=..., entities=...); a subset holds for
    its call only, before and after calls without one."""
    import ontolink

    index = ontolink.load_index(kg_entities_index, device="cpu")
    names = json.loads((kg_entities_index / "names.json").read_text())
    type_of = dict(zip(names["entity_ids"], names["entity_types"]))
    plain = index.link(["breast cancer", "cisplatin"], top_k=4)
    assert plain[0]["candidates"][0]["id"] == "MESH:D001943" and plain[1]["candidates"][0]["id"] == "MESH:D002945"
    genes = index.link(["breast cancer", "cisplatin"], top_k=4, where=["type=Gene"])
    assert all(len(record["candidates"]) == 4 and all(type_of[candidate["id"]] == ["Gene"]
                                                      for candidate in record["candidates"]) for record in genes)
    assert index.link(["cisplatin"], top_k=1)[0]["candidates"][0]["id"] == "MESH:D002945"  # the next call: all
    chosen = ["MESH:D001943", "MESH:D002945"]
    assert [record["candidates"][0]["id"] for record in index.link(["cisplatin", "breast cancer"], top_k=2,
                                                                    entities=chosen)] == chosen[::-1]
    text = "Cisplatin-induced nephrotoxicity in patients with breast cancer."
    from ontolink.ontology import OntologySource

    table = OntologySource(str(shared_path("align", "entities.tsv")), fields=KG_ENTITY_FIELDS)
    every = ontolink.annotate([text], table)
    diseases = ontolink.annotate([text], table, where=["type=Disease"])
    assert {record["type"] for record in every} >= {"Chemical", "Disease"}
    assert diseases and {record["type"] for record in diseases} == {"Disease"}
    assert {record["mention"] for record in diseases} < {record["mention"] for record in every}
    only = ontolink.annotate([text], table, entities=["MESH:D002945"])
    assert [(record["mention"], record["type"]) for record in only] == [("Cisplatin", "Chemical")]
