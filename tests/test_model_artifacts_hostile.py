"""Rerankers and alignment models someone handed you, damaged or crafted: each is refused on load with exit 2
naming the file (the manifest's missing or mistyped key, the weights file that does not match it), before anything
of a declared size is made and before a pickle could be read; never a KeyError, a model left partly random or a
shape error at the first batch.

The artifacts are made here as the training commands write them, with small real modules (a 2-layer BERT, the ReS
selector, the alignment heads), so each case starts from one that loads.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import artifact_copy, edit_json, rewrite_tensors, run

TESTS = Path(__file__).resolve().parent
PACKAGE_DIR = TESTS.parent / "toolbox"
MENTION = '{"id": "m1", "mention": "seizures", "context_left": "The patient had "}\n'
WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + list("abcdefghijklmnopqrstuvwxyz") + [
    "seizure", "##s", "the", "patient", "had", "eye", "abnormal", "##ity", "of"]


class _Result:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def _link(index, reranker, child=False):
    """`link --reranker`, in this process or (``child``: a read that never ends must not take the tests with it) in
    a child process."""
    arguments = ["link", "--index", str(index), "--reranker", str(reranker), "--top-k", "3", "--device", "cpu"]
    if child:
        return subprocess.run([sys.executable, "-m", "ontolink", *arguments], input=MENTION, capture_output=True,
                              text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(PACKAGE_DIR)})
    result = run(*arguments, input=MENTION)
    return _Result(result.exit_code, result.stdout, result.stderr)


# --- a BLINK reranker (a cross-encoder folder) ---------------------------------------------------------------

@pytest.fixture(scope="module")
def blink_reranker(tfidf_index, tmp_path_factory):
    """A reranker folder as `train reranker` writes it (manifest, config, model.safetensors, tokenizer), with a
    2-layer BERT of width 32 made here."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    directory = tmp_path_factory.mktemp("blink") / "reranker"
    directory.mkdir()
    (directory / "vocab.txt").write_text("\n".join(WORDS) + "\n")
    tokenizer = BertTokenizer(str(directory / "vocab.txt"))
    torch.manual_seed(0)
    model = BertForSequenceClassification(BertConfig(vocab_size=len(WORDS), hidden_size=32, num_hidden_layers=2,
                                                     num_attention_heads=2, intermediate_size=37, num_labels=1))
    model.save_pretrained(str(directory), safe_serialization=True)
    tokenizer.save_pretrained(str(directory))
    ontology = json.loads((tfidf_index / "manifest.json").read_text())["ontology"]
    (directory / "manifest.json").write_text(json.dumps({"artifact": "reranker", "architecture": "blink",
                                                         "options": {"max_length": 32}, "ontology": ontology}))
    return directory


blink_copy = artifact_copy("blink_reranker", "reranker")


def test_the_crafted_blink_reranker_links(blink_copy, tfidf_index):
    result = _link(tfidf_index, blink_copy)
    assert result.returncode == 0, result.stderr
    assert '"retriever_score"' in result.stdout


def _no_max_length(manifest):
    del manifest["options"]["max_length"]


def _no_ontology_hash(manifest):
    del manifest["ontology"]["sha256"]


@pytest.mark.parametrize("damage, words", [
    (_no_max_length, "has no 'options.max_length'"),  # a KeyError
    (_no_ontology_hash, "has no 'ontology.sha256'"),  # a KeyError, once the index was loaded
])
def test_a_blink_manifest_missing_a_key_is_refused(blink_copy, tfidf_index, damage, words):
    edit_json(blink_copy / "manifest.json", damage)
    result = _link(tfidf_index, blink_copy)
    assert result.returncode == 2, result.stderr
    assert f"{blink_copy / 'manifest.json'}: {words}" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("top_k", ["ten", 0, 2.5])
def test_a_blink_manifest_top_k_that_is_no_depth_is_refused(blink_copy, tfidf_index, top_k):
    """'options.top_k', link's default --top-k with a reranker: "ten" was a TypeError deep in the linker (a
    traceback), 0 or 2.5 were searched for."""
    edit_json(blink_copy / "manifest.json", lambda manifest: manifest["options"].update(top_k=top_k))
    result = run("link", "--index", tfidf_index, "--reranker", blink_copy, "--device", "cpu", input=MENTION)
    assert result.exit_code == 2, (result.stderr, result.exception)
    assert f"{blink_copy / 'manifest.json'}: 'options.top_k' must be an integer of at least 1" in result.stderr


def test_a_blink_config_pointing_at_dev_zero_is_refused_at_once(blink_copy, tfidf_index):
    (blink_copy / "config.json").unlink()
    (blink_copy / "config.json").symlink_to("/dev/zero")
    result = _link(tfidf_index, blink_copy, child=True)  # transformers read /dev/zero until memory ran out
    assert result.returncode == 2 and "config.json: is not a regular file" in result.stderr, result.stderr


def test_pickled_blink_weights_are_never_read(blink_copy, tfidf_index):
    """Weights as pytorch_model.bin (a pickle) instead of model.safetensors: transformers unpickled them."""
    import torch
    from safetensors.torch import load_file

    torch.save(load_file(str(blink_copy / "model.safetensors")), str(blink_copy / "pytorch_model.bin"))
    (blink_copy / "model.safetensors").unlink()
    result = _link(tfidf_index, blink_copy)
    assert result.returncode == 2 and "model.safetensors is missing" in result.stderr, result.stderr


def _no_classifier(arrays):
    del arrays["classifier.weight"]


def _integer_classifier(arrays):
    arrays["classifier.weight"] = arrays["classifier.weight"].astype(np.int64)


@pytest.mark.parametrize("damage, words", [
    (_no_classifier, "holds no tensor 'classifier.weight'"),  # was left random: exit 0, random order
    (_integer_classifier, "tensor 'classifier.weight' is I64, expected floating point"),  # was cast silently
])
def test_blink_weights_that_do_not_match_the_model_are_refused(blink_copy, tfidf_index, damage, words):
    rewrite_tensors(blink_copy / "model.safetensors", damage)
    result = _link(tfidf_index, blink_copy)
    assert result.returncode == 2, result.stderr
    assert f"{blink_copy / 'model.safetensors'}: {words}" in result.stderr


def test_a_blink_config_declaring_other_sizes_than_its_weights_is_refused(blink_copy, tfidf_index):
    """config.json declares a feed-forward layer of 100,000 where the weights hold 37: transformers made the
    declared model (200 MB here; any size a file declares) and then failed with exit 1."""
    edit_json(blink_copy / "config.json", lambda config: config.update(intermediate_size=100_000))
    result = _link(tfidf_index, blink_copy)
    assert result.returncode == 2, result.stderr
    assert f"{blink_copy / 'model.safetensors'}: tensor " in result.stderr and "[37, 32]" in result.stderr


# --- a ReS reranker (frozen reading) --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def res_reranker(tfidf_index, default_encoder, tmp_path_factory):
    """A frozen-reading ReS reranker folder as `train reranker --architecture res` writes it, its selector made
    here (width 32, 2 heads, 1 layer) over the default encoder's readings."""
    import torch

    from ontolink.reranking.read_and_select import VERSION, new_selector, save_selector

    directory = tmp_path_factory.mktemp("res") / "res"
    directory.mkdir()
    shape = {"input": 3 * default_encoder.dimension + 2, "width": 32, "layers": 1, "heads": 2, "dropout": 0.1,
             "ranks": 8}
    torch.manual_seed(0)
    save_selector(new_selector(shape), directory)
    ontology = json.loads((tfidf_index / "manifest.json").read_text())["ontology"]
    encoder = {"runtime": default_encoder.runtime} | default_encoder.describe()
    (directory / "manifest.json").write_text(json.dumps({
        "artifact": "reranker", "architecture": "res", "version": VERSION, "ontology": ontology,
        "reading": {"kind": "frozen", "encoder": encoder}, "selecting": shape, "files": ["selector.safetensors"]}))
    return directory


res_copy = artifact_copy("res_reranker", "res")


def _load_res(directory):
    from ontolink.reranking.base import load_reranker

    return load_reranker(directory, device="cpu")


def test_the_crafted_res_reranker_loads_and_scores(res_copy, tfidf_index):
    from ontolink.indexes.artifact import load_index

    reranker = _load_res(res_copy)
    index = load_index(tfidf_index)
    records = [{"id": "m1", "mention": "seizures", "candidates": [
        {"id": index.entity_ids[row], "name": index.entity_names[row], "score": 0.5} for row in range(3)]}]
    assert len(list(reranker.rerank(records, lambda entity_id: ""))[0]["candidates"]) == 3


def test_a_res_manifest_without_its_selecting_block_is_refused(res_copy):
    from ontolink.core.errors import InputError

    edit_json(res_copy / "manifest.json", lambda manifest: manifest.pop("selecting"))
    with pytest.raises(InputError, match="manifest.json: has no 'selecting'"):  # a KeyError
        _load_res(res_copy)


def test_a_res_selector_of_a_declared_size_past_its_file_is_never_made(res_copy):
    """'selecting.width' 131,072 with a file of width 32: the selector of the declared size (hundreds of GB) was
    made before the file was read, and failed with a RuntimeError (or took the memory)."""
    from ontolink.core.errors import InputError

    edit_json(res_copy / "manifest.json", lambda manifest: manifest["selecting"].update(width=131_072, heads=1))
    with pytest.raises(InputError, match=r"selector.safetensors: tensor '[a-z.0-9_]+' has the shape \[") as caught:
        _load_res(res_copy)
    assert str(caught.value).startswith(str(res_copy / "selector.safetensors"))


def test_a_res_selector_that_does_not_read_its_reading_is_refused(res_copy):
    """A selector (and manifest) made for 10 numbers a candidate where the frozen reading gives 3 x 384 + 2: it
    loaded, and failed with a shape error in the first batch."""
    import torch

    from ontolink.reranking.read_and_select import new_selector, save_selector
    from ontolink.core.errors import InputError

    manifest = json.loads((res_copy / "manifest.json").read_text())
    manifest["selecting"]["input"] = 10
    (res_copy / "manifest.json").write_text(json.dumps(manifest))
    torch.manual_seed(0)
    save_selector(new_selector(manifest["selecting"]), res_copy)
    with pytest.raises(InputError, match="'selecting.input' is 10, but the frozen reading gives 1154"):
        _load_res(res_copy)


@pytest.mark.parametrize("dropout", [1.5, float("nan")])
def test_a_res_dropout_outside_0_to_1_is_refused(res_copy, dropout):
    """'selecting.dropout' 1.5: torch's Dropout raised a ValueError while the selector was being made (a
    traceback, exit 1)."""
    from ontolink.core.errors import InputError

    edit_json(res_copy / "manifest.json", lambda manifest: manifest["selecting"].update(dropout=dropout))
    with pytest.raises(InputError, match="'selecting.dropout' must be a number from 0 to 1"):
        _load_res(res_copy)


def test_integer_res_selector_weights_are_refused(res_copy):
    from ontolink.core.errors import InputError

    rewrite_tensors(res_copy / "selector.safetensors", lambda arrays: arrays.__setitem__(
        "score.weight", arrays["score.weight"].astype(np.int32)))
    with pytest.raises(InputError, match="tensor 'score.weight' is I32, expected floating point"):  # was cast
        _load_res(res_copy)


# --- an alignment model (verbalised triples: no KG embeddings needed) ------------------------------------------

@pytest.fixture(scope="module")
def alignment(tmp_path_factory):
    """An alignment model folder as `align train --triple-encoding verbalized` writes it, its linear text2kg head
    made here (384 -> 384, residual over the verbalised block)."""
    import torch
    from safetensors.torch import save_file

    from ontolink.kg.alignment import ARTIFACT, HEADS_FILE
    from ontolink.kg.alignment.model import alignment_model
    from ontolink.encoders.model_files import DEFAULT_ENCODER

    directory = tmp_path_factory.mktemp("align") / "model"
    directory.mkdir()
    torch.manual_seed(0)
    model = alignment_model("text2kg", "linear", 384, 384, hidden=256, dropout=0.273, text_block=384)
    save_file({key: value.contiguous() for key, value in model.state_dict().items()}, str(directory / HEADS_FILE))
    (directory / "manifest.json").write_text(json.dumps({
        "artifact": ARTIFACT, "direction": "text2kg", "head": "linear", "triple_encoding": "verbalized",
        "combine": None, "text_block": 384, "composition": None, "text_dim": 384, "triple_dim": 384,
        "encoder": {"model": DEFAULT_ENCODER, "precision": "fp32", "max_length": 256, "dimension": 384},
        "kg": None, "training": {"options": {"hidden": 256, "dropout": 0.273}}, "files": [HEADS_FILE]}))
    return directory


alignment_copy = artifact_copy("alignment", "model")


def _load_alignment(directory):
    from ontolink.kg.alignment import load_alignment

    return load_alignment(directory, device="cpu")


def test_the_crafted_alignment_model_loads(alignment_copy):
    loaded = _load_alignment(alignment_copy)
    assert loaded.encoding.kind == "verbalized" and list(loaded.model.heads) == ["text2kg"]


def _no_encoder(manifest):
    del manifest["encoder"]


def _negative_hidden(manifest):
    manifest["head"] = "mlp"
    manifest["training"]["options"]["hidden"] = -1


def _dropout_past_1(manifest):
    manifest["head"] = "mlp"
    manifest["training"]["options"]["dropout"] = 2.0


def _huge_dimensions(manifest):
    manifest.update(text_dim=1 << 20, triple_dim=1 << 20, text_block=1 << 20)


@pytest.mark.parametrize("damage, words", [
    (_no_encoder, "manifest.json: has no 'encoder'"),  # a KeyError
    (_negative_hidden, "manifest.json: 'training.options.hidden' must be an integer of at least 1"),  # a RuntimeError
    (_dropout_past_1, "manifest.json: 'training.options.dropout' must be a number from 0 to 1"),  # a ValueError
    # a 2^20 x 2^20 head (4 TB) was made before the file was read: a RuntimeError, or the memory taken
    # refused by the manifest's widths against the text encoder's where that encoder's width is known without loading
    # it, else by the weights file's shapes: either way before anything of the declared size is made
    (_huge_dimensions, ("manifest.json: 'text_dim' is 1048576, but its text encoder gives 384 numbers",
                        "heads.safetensors: tensor 'heads.text2kg.linear.weight' has the shape [384, 384]")),
])
def test_an_alignment_manifest_that_lies_is_refused(alignment_copy, damage, words):
    from ontolink.core.errors import InputError

    edit_json(alignment_copy / "manifest.json", damage)
    with pytest.raises(InputError) as caught:
        _load_alignment(alignment_copy)
    expected = (words,) if isinstance(words, str) else words
    assert any(text in str(caught.value) for text in expected) and caught.value.exit_code == 2, caught.value


def test_integer_alignment_heads_are_refused(alignment_copy):
    from ontolink.core.errors import InputError

    rewrite_tensors(alignment_copy / "heads.safetensors", lambda arrays: arrays.__setitem__(
        "heads.text2kg.linear.weight", arrays["heads.text2kg.linear.weight"].astype(np.int64)))
    with pytest.raises(InputError, match="tensor 'heads.text2kg.linear.weight' is I64"):  # was cast silently
        _load_alignment(alignment_copy)


def test_an_alignment_model_whose_triples_are_not_its_encodings_is_refused(alignment_copy):
    """Heads (and manifest) for 500-wide triples where a verbalised triple is the text's 384: it loaded, and failed
    with a shape error at the first retrieval."""
    import torch
    from safetensors.torch import save_file

    from ontolink.kg.alignment.model import alignment_model
    from ontolink.core.errors import InputError

    edit_json(alignment_copy / "manifest.json", lambda manifest: manifest.update(triple_dim=500))
    model = alignment_model("text2kg", "linear", 384, 500, text_block=384)
    save_file({key: value.contiguous() for key, value in model.state_dict().items()},
              str(alignment_copy / "heads.safetensors"))
    with pytest.raises(InputError, match="declares triples 500 wide with a text block of 384, but its verbalized "
                                         "encoding gives 384"):
        _load_alignment(alignment_copy)
