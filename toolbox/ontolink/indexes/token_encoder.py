"""The multi-vector index's token encoder (late interaction, docs/multivector.md): one L2-normalised vector per
word piece.

Not an ``Encoder`` (those give one vector per text): it is the model of the
``multivector`` name index and of `train multivector`.

A transformers backbone plus a linear token projection (e.g. 384 → 128) and a
CLIP-style learnable temperature. Mentions are read in context, but only the
word pieces of the mention itself (between the [Ms] and [Me] markers) are
kept; entity names keep every non-special word piece.

sentence-transformers' MultiVectorEncoder (ColBERT) keeps every query token
and has no span markers, XTR alignment or per-name MML, so this is ~200 lines
of plain transformers instead.
"""

import math
from pathlib import Path

import numpy as np

from ontolink.encoders.base import length_batches
from ontolink.core.errors import InputError, OntolinkError
from ontolink.core.encoder_inputs import CONTEXT_CHARACTERS, MENTION_END, MENTION_START
from ontolink.core.manifest import peek_manifest
from ontolink.encoders.model_files import resolve_model_path
from ontolink.core.options import DEFAULT_SEED
from ontolink.indexes.options import TOKEN_DIMENSION, TOKEN_MAX_LENGTH

ARTIFACT = "multivector"
HEAD_FILE = "head.safetensors"
BACKBONE_DIR = "backbone"
# CLIP's initial temperature 0.07, and its cap of 100 on the logit scale.
INITIAL_LOG_SCALE = math.log(1 / 0.07)
MAX_LOG_SCALE = math.log(100.0)
MAX_BATCH_SIZE = 512  # texts a batch, whatever their length


def multivector_manifest(path):
    """The manifest of a `train multivector` directory, None for a plain backbone; other artifacts refused."""
    manifest = peek_manifest(path)
    if manifest is None:
        return None
    if manifest.get("artifact") not in (ARTIFACT, f"{ARTIFACT}-checkpoint"):
        raise InputError(f"is an ontolink {manifest.get('artifact', 'artifact')}, not a multi-vector model: pass a "
                         "model from `ontolink train multivector` or a plain transformers backbone", path)
    return manifest


def query_key(record):
    """What a mention is encoded from: (left context, mention, right context), hashable for memos."""
    return (record.get("context_left", "")[-CONTEXT_CHARACTERS:], record["mention"].strip(),
            record.get("context_right", "")[:CONTEXT_CHARACTERS])


class TokenEncoder:
    """Backbone + projection + temperature, as torch modules; builds inputs and pools token vectors."""

    def __init__(self, path, dimension=TOKEN_DIMENSION, temperature=True, device="cpu", seed=DEFAULT_SEED,
                 max_length=TOKEN_MAX_LENGTH):
        import torch
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
        transformers_logging.set_verbosity_error()
        self.device = device
        self.max_length = max_length
        trained = multivector_manifest(path) if Path(path).exists() else None
        source = Path(path, BACKBONE_DIR) if trained else resolve_model_path(path)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(str(source))
            self.transformer = AutoModel.from_pretrained(str(source))
        except Exception as error:
            hint = "" if Path(str(source)).exists() else " (hub names need network access, or pass a local path)"
            raise OntolinkError(f"cannot load backbone {path!r}: {type(error).__name__}: "
                                f"{str(error).splitlines()[0] if str(error) else ''}{hint}") from None
        if self.tokenizer.mask_token is None:
            self.tokenizer.add_special_tokens({"mask_token": "[MASK]"})
        added = self.tokenizer.add_special_tokens({"additional_special_tokens": [MENTION_START, MENTION_END]})
        if added:
            torch.manual_seed(seed)
            self.transformer.resize_token_embeddings(len(self.tokenizer), mean_resizing=False)
        hidden = self.transformer.config.hidden_size
        if trained:
            from safetensors.torch import load_file

            head = load_file(str(Path(path, HEAD_FILE)))
            dimension = head["projection.weight"].shape[0] if "projection.weight" in head else None
            temperature = bool(trained["options"].get("temperature", True))
        self.projection = None
        if dimension:
            generator = torch.Generator().manual_seed(seed)
            self.projection = torch.nn.Linear(hidden, dimension, bias=False)
            # Orthogonal rows keep the backbone's geometry, so the untrained model already ranks sensibly.
            weight = torch.empty(dimension, hidden)
            torch.nn.init.orthogonal_(weight, generator=generator)
            self.projection.weight.data.copy_(weight)
        self.log_scale = torch.nn.Parameter(torch.tensor(INITIAL_LOG_SCALE if temperature else 0.0),
                                            requires_grad=temperature)
        if trained:
            if self.projection is not None:
                self.projection.weight.data.copy_(head["projection.weight"])
            self.log_scale.data.copy_(head["log_scale"])
        self.temperature = temperature
        self.dimension = dimension or hidden
        self.ids = {"start": self.tokenizer.convert_tokens_to_ids(MENTION_START),
                    "end": self.tokenizer.convert_tokens_to_ids(MENTION_END),
                    "mask": self.tokenizer.mask_token_id}
        self.special_ids = set(self.tokenizer.all_special_ids)
        # the " ; " joining an entity document's names: never a token a mention "lacks"
        self.separator_ids = set(self.pieces(";"))
        self.trained = trained
        self.precision = "fp32"
        self.to(device)

    # -- torch plumbing -------------------------------------------------------------------------
    def modules(self):
        return [m for m in (self.transformer, self.projection) if m is not None]

    def parameters(self):
        parameters = [p for module in self.modules() for p in module.parameters()]
        return parameters + ([self.log_scale] if self.temperature else [])

    def to(self, device):
        for module in self.modules():
            module.to(device)
        self.log_scale.data = self.log_scale.data.to(device)
        return self

    def train(self, mode=True):
        for module in self.modules():
            module.train(mode)

    def eval(self):
        self.train(False)

    def scale(self):
        """exp(log scale) = 1/τ, capped at 100 as in CLIP; 1 when the temperature is off."""
        return self.log_scale.clamp(max=MAX_LOG_SCALE).exp()

    def save(self, directory):
        from safetensors.torch import save_file

        directory = Path(directory)
        self.transformer.save_pretrained(str(directory / BACKBONE_DIR), safe_serialization=True)
        self.tokenizer.save_pretrained(str(directory / BACKBONE_DIR))
        tensors = {"log_scale": self.log_scale.detach().cpu().contiguous()}
        if self.projection is not None:
            tensors["projection.weight"] = self.projection.weight.detach().cpu().contiguous()
        save_file(tensors, str(directory / HEAD_FILE))

    def set_precision(self, precision):
        """Inference arithmetic: fp16 (or bf16) on CUDA, int8 dynamic quantisation of the backbone on CPU, or fp32."""
        import warnings

        import torch
        from torch.ao.quantization import per_channel_dynamic_qconfig

        self.eval()
        if precision == "fp16":
            self.transformer.half()
        elif precision == "bf16":
            self.transformer.to(torch.bfloat16)
        elif precision == "int8":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.transformer = torch.ao.quantization.quantize_dynamic(
                    self.transformer, {torch.nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8)
        self.precision = precision
        return self

    def mention_text(self, record):
        """What a Mention record is searched as (the index's memo key)."""
        return query_key(record)

    # -- inputs ----------------------------------------------------------------------------------
    def pieces(self, text):
        return self.tokenizer(text, add_special_tokens=False)["input_ids"] if text.strip() else []

    def mention_ids(self, key, masks=0):
        """(input ids, span start, span end) for ``[CLS] left [Ms] mention [MASK]*masks [Me] right [SEP]``.

        The mention always fits: context is cut to the budget left, half a side (the rest to the other).
        """
        left, mention, right = key
        middle = self.pieces(mention)[: self.max_length - 4 - masks] + [self.ids["mask"]] * masks
        left_ids, right_ids = self.pieces(left), self.pieces(right)
        budget = self.max_length - 4 - len(middle)
        keep_left = min(len(left_ids), max(budget // 2, budget - len(right_ids)))
        keep_right = min(len(right_ids), budget - keep_left)
        ids = ([self.tokenizer.cls_token_id] + left_ids[len(left_ids) - keep_left:] + [self.ids["start"]]
               + middle + [self.ids["end"]] + right_ids[:keep_right] + [self.tokenizer.sep_token_id])
        start = 1 + keep_left + 1
        return ids, start, start + len(middle)

    def missing_pieces(self, mention, name):
        """Per kept word piece of ``name``: whether the ``mention`` lacks it (query expansion's targets)."""
        present = set(self.name_ids(mention)[0]) | self.separator_ids
        ids, keep = self.name_ids(name)
        return [ids[position] not in present for position in keep]

    def name_ids(self, text):
        ids = self.tokenizer(text, truncation=True, max_length=self.max_length)["input_ids"]
        keep = [position for position, token in enumerate(ids) if token not in self.special_ids]
        return ids, keep or [0]  # a name of unknown characters only: its [CLS] vector stands in

    # -- encoding --------------------------------------------------------------------------------
    def forward(self, sequences):
        """Token vectors (batch, length, d), L2-normalised, for lists of input ids (padded here)."""
        import torch

        longest = max(len(ids) for ids in sequences)
        pad = self.tokenizer.pad_token_id or 0
        input_ids = torch.tensor([ids + [pad] * (longest - len(ids)) for ids in sequences], device=self.device)
        attention = torch.tensor([[1] * len(ids) + [0] * (longest - len(ids)) for ids in sequences],
                                 device=self.device)
        hidden = self.transformer(input_ids=input_ids, attention_mask=attention).last_hidden_state
        if self.projection is not None:
            hidden = self.projection(hidden.to(self.projection.weight.dtype))
        return torch.nn.functional.normalize(hidden.float(), dim=-1)

    def mention_tokens(self, keys, masks=None):
        """Per mention: its span's token vectors (a tensor (n, d)); an empty span (nothing left after
        tokenisation) falls back to the [Ms] and [Me] vectors, which carry the context. Also returns
        which mentions fell back."""
        masks = masks or [0] * len(keys)
        return self._mention_vectors([self.mention_ids(key, count) for key, count in zip(keys, masks)])

    def _mention_vectors(self, built):
        vectors = self.forward([ids for ids, _, _ in built])
        result, empty = [], []
        for row, (_, start, end) in enumerate(built):
            empty.append(start == end)
            result.append(vectors[row, [start - 1, end]] if start == end else vectors[row, start:end])
        return result, empty

    def name_tokens(self, texts):
        """Per name: its word pieces' vectors (a tensor (n, d))."""
        return self._name_vectors([self.name_ids(text) for text in texts])

    def _name_vectors(self, built):
        vectors = self.forward([ids for ids, _ in built])
        return [vectors[row, keep] for row, (_, keep) in enumerate(built)]

    def encode_names(self, texts, tokens_per_batch=16384, progress=None):
        """All names' token vectors as one float32 matrix plus offsets (name i owns rows offsets[i]:offsets[i+1])."""
        import torch

        built = [self.name_ids(text) for text in texts]  # tokenised once: for batching and for the model
        lengths = [len(keep) + 2 for _, keep in built]
        pieces = [None] * len(texts)
        with torch.inference_mode():
            for rows in length_batches(lengths, tokens_per_batch, MAX_BATCH_SIZE):
                for row, vectors in zip(rows, self._name_vectors([built[row] for row in rows])):
                    pieces[row] = vectors.cpu().numpy()
                if progress is not None:
                    progress.update(len(rows))
        return _stack(pieces, self.dimension)

    def encode_mentions(self, keys, masks=None, tokens_per_batch=16384):
        """Per mention its span's token vectors (float32 arrays), and the count of empty spans."""
        import torch

        masks = masks or [0] * len(keys)
        built = [self.mention_ids(key, count) for key, count in zip(keys, masks)]  # tokenised once
        lengths = [len(ids) for ids, _, _ in built]
        result = [None] * len(keys)
        empty_count = 0
        with torch.inference_mode():
            for rows in length_batches(lengths, tokens_per_batch, MAX_BATCH_SIZE):
                vectors, empty = self._mention_vectors([built[row] for row in rows])
                empty_count += sum(empty)
                for row, value in zip(rows, vectors):
                    result[row] = value.cpu().numpy()
        return result, empty_count

    def describe(self):
        return {"dimension": self.dimension, "temperature": self.temperature, "max_length": self.max_length,
                "precision": self.precision, "scale": round(float(self.scale().detach()), 4)}


def _stack(pieces, dimension):
    offsets = np.zeros(len(pieces) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(piece) for piece in pieces])
    matrix = np.concatenate(pieces) if pieces else np.zeros((0, dimension), dtype=np.float32)
    return np.ascontiguousarray(matrix, dtype=np.float32), offsets
