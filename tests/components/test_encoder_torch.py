"""The PyTorch encoder (`index --runtime torch`): an index built with it links with it."""

import pytest

from ontolink.indexes.artifact import load_index
from ontolink.ontology import load_ontology
from ontolink.indexes.build import build_index
from ontolink.linking.link import link_mentions


@pytest.mark.slow
def test_a_torch_index_still_links_with_torch(small_ontology_path, tmp_path):
    ontology = load_ontology(small_ontology_path)
    manifest = build_index(ontology, tmp_path / "torch", device="cpu", precision="fp32", runtime="torch")
    assert manifest["index"]["encoder"]["runtime"] == "torch"
    loaded = load_index(tmp_path / "torch", device="cpu")
    assert loaded.name_index.encoder.runtime == "torch"
    linked = list(link_mentions([{"id": "a", "mention": "seizures"}], loaded, top_k=3))
    assert linked[0]["candidates"][0]["id"] == "HP:0001250"
