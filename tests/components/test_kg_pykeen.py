"""PyKEEN's models (`embed-kg --method NAME`): RotatE, TuckER and TransE write safetensors only; the
published defaults are the presets."""

import json

import numpy as np
import pytest

from ontolink.core.errors import InputError
from ontolink.kg.embed import embed_kg
from ontolink.formats.triples import read_triples


@pytest.mark.parametrize("model, options, entity_dim, relation_dim, complex_valued", [
    ("RotatE", dict(dim=4, negatives=2), 8, 8, True),
    ("TuckER", dict(dim=6, relation_dim=3), 6, 3, False),
    ("TransE", dict(dim=5), 5, 5, False),
])
def test_pykeen_models_write_safetensors_only(kg_slice, tmp_path, model, options, entity_dim, relation_dim,
                                              complex_valued):
    from ontolink.kg.embeddings import load_kg_embeddings

    manifest = embed_kg(list(read_triples(kg_slice)), tmp_path / "emb", method=model, epochs=2,
                             eval_every=1, device="cpu", **options)
    loaded = load_kg_embeddings(tmp_path / "emb")
    assert loaded.entity.shape == (manifest["entities"], entity_dim)
    assert loaded.relation.shape == (manifest["relations"], relation_dim)
    assert manifest["complex"] is complex_valued and manifest["embedding"]["model"] == model
    if complex_valued:
        assert manifest["embedding"]["complex_dimension"] == {"entity": 4, "relation": 4}
        # RotatE relations are unit-modulus rotations: |r_k| = 1 for every complex coordinate
        real, imaginary = np.split(loaded.relation, 2, axis=1)
        assert np.allclose(real ** 2 + imaginary ** 2, 1.0, atol=1e-4)
    curve = [json.loads(line) for line in (tmp_path / "emb" / "training_curve.jsonl").read_text().splitlines()]
    assert len(curve) == 2 and all("val_mrr" in entry for entry in curve)
    assert manifest["embedding"]["best_epoch"] in (1, 2)
    assert not list(tmp_path.rglob("*.pt")) and not list(tmp_path.rglob("*.pkl"))


def test_published_defaults_are_the_presets():
    from ontolink.kg.embedders.pykeen_kg import PyKEENEmbedder

    rotate = PyKEENEmbedder("rotate")
    assert rotate.model_kwargs == {"embedding_dim": 500} and rotate.options["negatives"] == 467
    assert rotate.loss_kwargs == {"margin": 9.0, "adversarial_temperature": 0.91}
    tucker = PyKEENEmbedder("TuckER")
    assert tucker.model_kwargs == {"embedding_dim": 200, "relation_dim": 65}
    assert tucker.training_loop == "lcwa" and tucker.options["label_smoothing"] == 0.1
    with pytest.raises(InputError, match="RotatE has no relation-dim"):
        PyKEENEmbedder("RotatE", relation_dim=3)
