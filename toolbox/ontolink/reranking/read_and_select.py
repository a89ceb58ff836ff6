"""The parts of a trained Read-and-Select (ReS) reranker (`ontolink train reranker --architecture res`; the reranker
itself: ontolink.reranking.architectures.res).

ReS (Xu et al. 2023) scores a candidate in the light of the mention's other candidates:

* **reading**: one vector per (mention, candidate).
  ``cross``: a cross-encoder reads "[CLS] left [Ms] m [Me] right [SEP] name [ENT] definition [SEP]" and
  the vector is the mean of the mention's own word pieces (a candidate-conditioned mention vector),
  with the cross-encoder's own logit. ``frozen``: the frozen bi-encoder's mention vector m and
  candidate name vector c as [m, c, m⊙c, m·c] (nothing trains there: the CPU-cheap variant).
  Both add the retriever's score.
* **selecting**: a small transformer over the K reading vectors of one mention (cross-candidate
  attention) and a linear layer to K scores. Each candidate's retrieval rank is a learned embedding
  added to its vector, so a candidate's score depends on where the others were retrieved; the
  transformer itself has no position encoding, so the order the candidates are presented in carries
  nothing beyond their ranks (training injects a missing gold at a seeded random rank, so the rank
  does not leak it). Ranks past the trained K share the last rank's embedding.

Directory: manifest.json (architecture "res", ``version`` 2, the reading kind and its encoder, the
selecting transformer's shape), selector.safetensors, and for ``cross`` the reading encoder in reader/.
Version 1 (no ranks) is refused with a one-line "retrain" error.
"""

from pathlib import Path

import numpy as np

from ontolink.core.artifact_files import REBUILD, check_weights, module_shapes, number
from ontolink.core.errors import InputError
from ontolink.core.encoder_inputs import span_pool
from ontolink.core.device import portable_precision
from ontolink.encoders import load_encoder
from ontolink.encoders.embedding_cache import EmbeddingCache

SELECTOR_FILE = "selector.safetensors"
READER_FOLDER = "reader"
READINGS = ("cross", "frozen")
VERSION = 2  # 2: the selecting stage sees each candidate's retrieval rank (1 treated them as a set)


def selector_class():
    """The selecting transformer (a torch module; defined lazily so importing this module stays cheap)."""
    import torch

    class Selector(torch.nn.Module):
        """(B, K, input) reading vectors and (B, K) retrieval ranks -> (B, K) scores."""

        def __init__(self, input_dimension, width=256, layers=2, heads=4, dropout=0.1, ranks=16):
            super().__init__()
            self.project = torch.nn.Sequential(torch.nn.Linear(input_dimension, width), torch.nn.LayerNorm(width))
            self.rank = torch.nn.Embedding(ranks, width)
            layer = torch.nn.TransformerEncoderLayer(width, heads, 4 * width, dropout, batch_first=True,
                                                     norm_first=True)
            self.select = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False) if layers else None
            self.score = torch.nn.Linear(width, 1)

        def forward(self, reading, ranks=None, attend=True):
            """``ranks``: each candidate's 0-based retrieval rank (default: the order given); ``attend=False``
            skips the cross-candidate stage (each candidate scored alone, with its rank)."""
            if ranks is None:
                ranks = torch.arange(reading.shape[1], device=reading.device).expand(reading.shape[:2])
            hidden = self.project(reading) + self.rank(ranks.clamp(max=self.rank.num_embeddings - 1))
            if attend and self.select is not None:
                hidden = self.select(hidden)
            return self.score(hidden).squeeze(-1)

    return Selector


def new_selector(shape):
    """A selecting transformer from the manifest's ``selecting`` block."""
    return selector_class()(shape["input"], shape["width"], shape["layers"], shape["heads"], shape["dropout"],
                            shape["ranks"])


def checked_selecting(manifest, directory):
    """The manifest's ``selecting`` block: positive integer sizes (a width a multiple of the heads), a dropout
    from 0 to 1."""
    path = Path(directory) / "manifest.json"
    shape = {name: number(manifest, path, "selecting", name, low=0 if name == "layers" else 1)
             for name in ("input", "width", "layers", "heads", "ranks")}
    shape["dropout"] = number(manifest, path, "selecting", "dropout", low=0, high=1, integer=False)
    if shape["width"] % shape["heads"]:
        raise InputError(f"'selecting.width' {shape['width']} is not a multiple of 'selecting.heads' "
                         f"{shape['heads']}" + REBUILD, path)
    return shape


def load_selector(directory, shape, device):
    """The selecting transformer the manifest's ``shape`` describes, its weights checked against that shape (from
    the file's header, before anything of the declared sizes is made) and loaded."""
    from safetensors.torch import load_file

    weights = Path(directory) / SELECTOR_FILE
    check_weights(weights, module_shapes(lambda: new_selector(shape)))
    selector = new_selector(shape)
    try:
        selector.load_state_dict(load_file(str(weights)))
    except Exception as error:  # noqa: BLE001  safetensors' own error type, an unreadable file
        raise InputError(f"is damaged or does not match the manifest ({str(error).splitlines()[0]})" + REBUILD,
                         weights) from None
    return selector.to(device)


def save_selector(selector, directory):
    from safetensors.torch import save_file

    save_file({key: value.detach().cpu().contiguous() for key, value in selector.state_dict().items()},
              str(directory / SELECTOR_FILE))


class FrozenReading:
    """The frozen bi-encoder's vectors: [m, c, m⊙c, m·c] per (mention, candidate name)."""

    def __init__(self, encoder):
        self.encoder = encoder
        self.dimension = 3 * encoder.dimension + 1
        # candidate names are the ontology's names: `index` left their vectors in the embedding cache
        self.known = None
        if encoder.batch_invariant:
            self.known = EmbeddingCache(encoder.fingerprint, encoder.dimension)

    @classmethod
    def described(cls, described, device):
        """The encoder the manifest describes, rebuilt as an index rebuilds its own (ONNX on CPU only; the
        recorded precision where ``device`` can run it, else the nearest: a reranker trained on a GPU reads in
        fp32 on a CPU, one trained on a CPU in fp16 on a GPU)."""
        runtime = described["runtime"]
        precision = portable_precision(described["precision"], device)
        return cls(load_encoder(described["model"], device=device, precision=precision,
                                runtime="auto" if runtime == "onnx" else runtime, max_length=described["max_length"]))

    def vectors(self, records, definition_of, progress=None):
        """(mention vectors (B, d), candidate name vectors per record: a list of (K_i, d)); ``progress``
        counts the distinct texts encoded."""
        encoder = self.encoder
        mentions = encoder.encode([encoder.mention_text(record) for record in records], progress=progress)
        names = encoder.encode([encoder.entity_text(candidate["name"], definition_of(candidate["id"]))
                                for record in records for candidate in record["candidates"]], progress=progress,
                               known=self.known)
        return mentions, np.split(names, np.cumsum([len(record["candidates"]) for record in records])[:-1])


def frozen_features(mention, names):
    """(B, K, 3d + 1) reading vectors from (B, d) mention and (B, K, d) name vectors (torch)."""
    mention = mention.unsqueeze(1).expand_as(names)
    product = mention * names
    import torch

    return torch.cat([mention, names, product, product.sum(-1, keepdim=True)], dim=-1)


def cross_reading_vectors(model, tokenizer, mentions, entities, max_length, device):
    """(n, hidden + 1): the mean of the mention's word pieces read with the candidate, and the cross-encoder's
    logit (its scoring head: trained when the reader starts from `train reranker`, random otherwise)."""
    import torch

    features = tokenizer(mentions, entities, truncation="longest_first", max_length=max_length, padding=True,
                         return_tensors="pt").to(device)
    output = model(**features, output_hidden_states=True)
    vector = span_pool(output.hidden_states[-1], features["input_ids"], features["attention_mask"], tokenizer)
    return torch.cat([vector, output.logits[:, :1]], dim=-1)


def with_retriever_scores(reading, scores):
    """The (..., K, D) reading vectors with the retriever's K scores as a last column."""
    import torch

    column = torch.as_tensor(scores, dtype=reading.dtype, device=reading.device).unsqueeze(-1)
    return torch.cat([reading, column], dim=-1)
