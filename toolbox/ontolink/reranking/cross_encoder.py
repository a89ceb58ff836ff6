"""The cross-encoder model both reranker architectures read with: a transformers sequence-classification model
over "[CLS] left [Ms] m [Me] right [SEP] name [ENT] definition [SEP]", loaded (a folder ontolink wrote is checked
first and read from safetensors only) and run to one logit per (mention, candidate)."""

from __future__ import annotations

from pathlib import Path

from ontolink.core.artifact_files import REBUILD, module_shapes, read_json, regular_files, check_weights
from ontolink.core.errors import InputError, OntolinkError
from ontolink.core.encoder_inputs import SPECIAL_TOKENS

MODEL_WEIGHTS = "model.safetensors"  # what save_pretrained writes; a pickled pytorch_model.bin is never read


def check_cross_encoder_files(directory, num_labels=1):
    """A trained cross-encoder's folder, checked before transformers reads it: regular files only (a config.json
    linked to /dev/zero would be read forever), config.json an object transformers can build a model from, and
    model.safetensors holding every weight of that model in the shape the config declares (transformers would
    leave a missing one random, and allocate whatever sizes the config declares)."""
    from transformers import AutoConfig, AutoModelForSequenceClassification
    from transformers.utils import logging as transformers_logging

    transformers_logging.set_verbosity_error()
    directory = Path(directory)
    regular_files(directory)
    config_path = directory / "config.json"
    if not isinstance(read_json(config_path), dict):
        raise InputError("is not a JSON object" + REBUILD, config_path)
    try:
        config = AutoConfig.from_pretrained(str(directory), num_labels=num_labels)
        model = None

        def build():
            nonlocal model
            model = AutoModelForSequenceClassification.from_config(config)
            return model

        shapes = module_shapes(build)
    except Exception as error:  # noqa: BLE001  transformers' errors for a config it cannot build have no one type
        raise InputError(f"does not describe a model this version can build ({type(error).__name__}: "
                         f"{str(error).splitlines()[0][:200] if str(error) else ''})" + REBUILD, config_path) from None
    parameters = {name for name, _ in model.named_parameters()}
    # buffers and tied copies of a parameter may be left out of the file; every parameter must be there
    check_weights(directory / MODEL_WEIGHTS, shapes, optional=set(shapes) - parameters, extra=None)


def load_cross_encoder(path, device, num_labels=1, artifact=False):
    """A tokenizer and a sequence-classification model from ``path``; ``artifact``: a folder ontolink wrote,
    read from safetensors only, after ``check_cross_encoder_files``."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as transformers_logging

    from ontolink.encoders.model_files import resolve_model_path  # late: loads numpy

    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()
    if artifact:
        check_cross_encoder_files(path, num_labels)
    else:
        path = resolve_model_path(path)
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = AutoModelForSequenceClassification.from_pretrained(
            path, num_labels=num_labels, **({"use_safetensors": True} if artifact else {}))
    except Exception as error:
        raise OntolinkError(f"cannot load {path!r} as a cross-encoder: {type(error).__name__}: {error}") from None
    if tokenizer.add_special_tokens({"additional_special_tokens": SPECIAL_TOKENS}):
        model.resize_token_embeddings(len(tokenizer), mean_resizing=False)
    return tokenizer, model.to(device)


def cross_encoder_logits(model, tokenizer, mentions, entities, max_length, device):
    features = tokenizer(mentions, entities, truncation="longest_first", max_length=max_length, padding=True,
                         return_tensors="pt").to(device)
    return model(**features).logits[:, 0]
