"""A trained text ↔ KG alignment model (`ontolink align train`), read back for `align retrieve`.

Model directory (artifact ``align-model``): ``manifest.json`` (encoder, KG
embeddings and their sha256, composition, head, direction, training options,
best epoch), ``heads.safetensors`` (the heads' weights, plus the fixed relation
projection when one was needed) and ``training_curve.jsonl``. Loading checks that
the KG embeddings and the text encoder are the ones it was trained with.

The model's parts, which `align train` and `align cv` (ontolink.steps.align) fit and run:

    pairs.py     Text–triple pair records: checks, triple keys, verbalisation
    text.py      the frozen text encoder, its vectors cached by content hash
    compose.py   triple composition φ(s, p, o) over KG embeddings: concat, hadamard, l1, l2
    encoding.py  what a triple is to the model: composed KG vectors, verbalised text, or both; hard negatives
    heads.py     projection heads: linear, mlp, cross-attention
    model.py     the heads of one or both directions, residual over a verbalised block, the hybrid gate
    scorers.py   documents and triples as the vectors a retrieval direction ranks (trained or baseline)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ontolink.artifacts.alignment.encoding import triple_encoding
from ontolink.artifacts.alignment.model import alignment_model
from ontolink.artifacts.alignment.scorers import AlignedScorer
from ontolink.artifacts.alignment.text import TextEmbedder
from ontolink.artifacts.kg_embeddings import load_kg_embeddings
from ontolink.errors import InputError
from ontolink.manifest import read_manifest

if TYPE_CHECKING:
    from ontolink.artifacts.kg_embeddings import KGEmbeddings

ARTIFACT = "align-model"
HEADS_FILE = "heads.safetensors"
CURVE = "training_curve.jsonl"
PROJECTION = "composer.relation_projection"


class LoadedAlignment:
    def __init__(self, directory, manifest, model, encoding, embedder, kg):
        self.directory, self.manifest, self.model, self.encoding, self.embedder, self.kg = (
            directory, manifest, model, encoding, embedder, kg)

    @property
    def composer(self):
        """The KG composition (None for a verbalized model)."""
        return getattr(self.encoding, "composer", None)

    def scorer(self):
        return AlignedScorer(self.model, self.encoding, self.embedder, device=self.encoding.device)


def load_alignment(directory: str | Path, kg: KGEmbeddings | None = None, device: str = "auto",
                   embedder: TextEmbedder | None = None) -> LoadedAlignment:
    """Open a model directory; ``kg`` (loaded embeddings or a directory; default: the one it was trained on)
    must be the same embeddings, by sha256."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    from ontolink.device import resolve_device

    directory = Path(directory)
    manifest = read_manifest(directory, ARTIFACT, required_files=[HEADS_FILE])
    trained_on = manifest["kg"]
    if trained_on is None:
        if kg is not None:
            raise InputError("reads no KG embeddings (its triples are verbalised text): drop --kg-embeddings",
                             directory)
    else:
        if kg is None:
            kg = trained_on["directory"]
            if not Path(kg).exists():
                raise InputError(f"was trained on the KG embeddings in {kg}, which are gone: pass --kg-embeddings",
                                 directory)
        if not hasattr(kg, "entity"):
            kg = load_kg_embeddings(kg)
        if kg.sha256 != trained_on["sha256"]:
            raise InputError(f"was trained on other KG embeddings ({trained_on['directory']}, sha256 "
                             f"{str(trained_on['sha256'])[:12]}), not {kg.directory} (sha256 "
                             f"{str(kg.sha256)[:12]}); retrain it with `ontolink align train`", directory)
    device = resolve_device(device)
    encoder = manifest["encoder"]
    if embedder is None:
        embedder = TextEmbedder(encoder["model"], device=device, precision=encoder["precision"],
                                max_length=encoder["max_length"])
    elif embedder.model != encoder["model"]:
        raise InputError(f"was trained with text encoder {encoder['model']!r}, not {embedder.model!r}", directory)
    try:
        tensors = load_file(str(directory / HEADS_FILE))
    except (SafetensorError, OSError) as error:
        raise InputError(f"{HEADS_FILE} is damaged ({error}); retrain the model", directory) from None
    projection = tensors.pop(PROJECTION, None)
    composition = manifest["composition"] or {}
    encoding = triple_encoding(manifest.get("triple_encoding", "kg"), kg, embedder, composition.get("compose"),
                               normalize=composition.get("normalize_components"),
                               projection=None if projection is None else projection.numpy(), device=device)
    options = manifest["training"]["options"]
    model = alignment_model(manifest["direction"], manifest["head"], manifest["text_dim"], manifest["triple_dim"],
                            hidden=options["hidden"], dropout=options["dropout"],
                            text_block=manifest.get("text_block") or 0, combine=manifest.get("combine"))
    try:
        model.load_state_dict(tensors)
    except RuntimeError as error:
        raise InputError(f"{HEADS_FILE} does not fit the manifest ({str(error).splitlines()[0]})",
                         directory) from None
    model.to(device).eval()
    return LoadedAlignment(directory, manifest, model, encoding, embedder, kg)
