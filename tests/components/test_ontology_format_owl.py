"""The OWL format (RDF/XML through pronto): the mini ontology's OWL file is recognised by its ending and read, a file
that is no OWL is bad input naming the file (exit 2). The same small ontology in every format, OWL included, is
in test_ontology.py."""

import pytest

from conftest import DATA
from ontolink.core.errors import InputError
from ontolink.ontology import load_ontology
from ontolink.ontology.loaders import detect_format


def test_owl_reads_classes_labels_and_subclasses():
    path = DATA / "ontology" / "mini.owl"
    assert detect_format(path) == "owl"
    ontology = load_ontology(path, use_cache=False)
    text = path.read_text(encoding="utf-8")
    assert sorted(entity.id for entity in ontology) == ["MINI:0000001", "MINI:0000002", "MINI:0000003",
                                                        "MINI:0000004", "MINI:0000006"]
    for entity in ontology:  # each name is the rdfs:label of its class in the file
        assert f">{entity.name}</rdfs:label>" in text
    assert ontology["MINI:0000004"].parents == ["MINI:0000002"]
    assert ontology.resolve("MINI:0000005") == ["MINI:0000004"]  # obsolete, replaced by heart disease


def test_unparseable_owl_is_an_input_error(tmp_path):
    path = tmp_path / "broken.owl"
    path.write_text("<?xml version='1.0'?>\n<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>\n")
    with pytest.raises(InputError) as caught:
        load_ontology(path, use_cache=False)
    assert "broken.owl" in str(caught.value)
    assert caught.value.exit_code == 2
