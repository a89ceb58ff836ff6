"""A trained text ↔ KG alignment model (`ontolink align train`), read back for `align retrieve`.

Model directory (artifact ``align-model``): ``manifest.json`` (encoder, KG
embeddings and their sha256, composition, head, direction, training options,
best epoch), ``heads.safetensors`` (the heads' weights, plus the fixed relation
projection when one was needed) and ``training_curve.jsonl``. Loading checks that
the KG embeddings and the text encoder are the ones it was trained with.

The model's parts, which `align train` and `align cv` (ontolink.kg.alignment.workflows) fit and run:

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
from typing import TYPE_CHECKING, cast

from ontolink.core.artifact_files import FLOAT_TYPES, REBUILD, check_weights, field, module_shapes, number
from ontolink.kg.alignment.encoding import TRIPLE_ENCODINGS, triple_encoding
from ontolink.kg.alignment.choices import COMBINES, DIRECTIONS, HEADS
from ontolink.kg.alignment.model import alignment_model
from ontolink.kg.alignment.scorers import AlignedScorer
from ontolink.kg.alignment.text import TextEmbedder
from ontolink.kg.embeddings import load_kg_embeddings
from ontolink.core.errors import InputError
from ontolink.core.manifest import MANIFEST, read_manifest
from ontolink.core.device import resolve_device, portable_precision
from ontolink.core.options import AUTO_DEVICE

if TYPE_CHECKING:
    from ontolink.kg.embeddings import KGEmbeddings

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


def load_alignment(directory: str | Path, kg: KGEmbeddings | str | Path | None = None, device: str = AUTO_DEVICE,
                   embedder: TextEmbedder | None = None) -> LoadedAlignment:
    """Open a model directory; ``kg`` (loaded embeddings or a directory; default: the one it was trained on)
    must be the same embeddings, by sha256."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    directory = Path(directory)
    manifest = read_manifest(directory, ARTIFACT, required_files=[HEADS_FILE])
    described = checked_manifest(manifest, directory / MANIFEST)
    trained_on = manifest["kg"]
    loaded: KGEmbeddings | None = None
    if trained_on is None:
        if kg is not None:
            raise InputError("reads no KG embeddings (its triples are verbalised text): drop --kg-embeddings",
                             directory)
    else:
        if kg is None:
            kg = kg_directory = trained_on["directory"]
            if not Path(kg_directory).exists():
                raise InputError(f"was trained on the KG embeddings in {kg}, which are gone: pass --kg-embeddings",
                                 directory)
        loaded = cast("KGEmbeddings", kg) if hasattr(kg, "entity") else load_kg_embeddings(cast("str | Path", kg))
        if loaded.sha256 != trained_on["sha256"]:
            raise InputError(f"was trained on other KG embeddings ({trained_on['directory']}, sha256 "
                             f"{str(trained_on['sha256'])[:12]}), not {loaded.directory} (sha256 "
                             f"{str(loaded.sha256)[:12]}); retrain it with `ontolink align train`", directory)
    device = resolve_device(device)
    encoder = manifest["encoder"]
    if embedder is None:
        # a head trained on a GPU (fp16) is applied on a CPU in fp32, one trained on a CPU (int8) in fp16 on a GPU
        embedder = TextEmbedder(encoder["model"], device=device,
                                precision=portable_precision(encoder["precision"], device),
                                max_length=encoder["max_length"])
    elif embedder.model != encoder["model"]:
        raise InputError(f"was trained with text encoder {encoder['model']!r}, not {embedder.model!r}", directory)
    if embedder.dimension is not None and embedder.dimension != manifest["text_dim"]:
        raise InputError(f"'text_dim' is {manifest['text_dim']}, but its text encoder gives {embedder.dimension} "
                         "numbers" + REBUILD, directory / MANIFEST)
    heads = directory / HEADS_FILE
    # the heads the manifest declares, made on the meta device: their sizes are checked against the file's
    # header before anything of those sizes is made, and before the file is loaded
    header = check_weights(heads, module_shapes(lambda: alignment_model(**described)), extra=[PROJECTION])
    try:
        tensors = load_file(str(heads))
    except (SafetensorError, OSError) as error:
        raise InputError(f"is damaged ({error}); retrain the model", heads) from None
    projection = tensors.pop(PROJECTION, None)
    composition = manifest["composition"] or {}
    if projection is not None:
        expected = (loaded.relation.shape[1], loaded.entity.shape[1]) if loaded is not None else None
        if header[PROJECTION][0] not in FLOAT_TYPES or tuple(projection.shape) != expected:
            raise InputError(f"tensor {PROJECTION!r} is {header[PROJECTION][0]}{list(projection.shape)}, not the "
                             f"relation projection of its KG embeddings ({list(expected or [])})" + REBUILD, heads)
    encoding = triple_encoding(manifest["triple_encoding"], loaded, embedder, composition.get("compose"),
                               normalize=composition.get("normalize_components"),
                               projection=None if projection is None else projection.numpy(), device=device)
    check_triple_width(manifest, encoding, directory / MANIFEST)
    model = alignment_model(**described)
    try:
        model.load_state_dict(tensors)
    except RuntimeError as error:
        raise InputError(f"does not fit the manifest ({str(error).splitlines()[0]})", heads) from None
    model.to(device).eval()
    return LoadedAlignment(directory, manifest, model, encoding, embedder, loaded)


def checked_manifest(manifest, path):
    """An alignment model's manifest, field by field (a crafted one gave KeyErrors, or made the heads of whatever
    size it declared); returns ``alignment_model``'s arguments."""
    kg = field(manifest, path, "kg")
    if kg is not None:
        field(manifest, path, "kg", "directory", kind=str)
        field(manifest, path, "kg", "sha256", kind=str)
    for name, kind in (("model", str), ("precision", str), ("max_length", int)):
        field(manifest, path, "encoder", name, kind=kind)
    kind = manifest.get("triple_encoding", "kg")
    if kind not in TRIPLE_ENCODINGS:
        raise InputError(f"'triple_encoding' is {kind!r}, which this version does not know" + REBUILD, path)
    if (kg is None) != (kind == "verbalized"):
        raise InputError(f"a {kind} model {'needs' if kg is None else 'reads no'} KG embeddings, but 'kg' is "
                         f"{'null' if kg is None else 'set'}" + REBUILD, path)
    composition = field(manifest, path, "composition")
    if kind != "verbalized":
        field(manifest, path, "composition", "compose", kind=str)
    elif composition is not None:
        raise InputError("a verbalized model has no 'composition'" + REBUILD, path)
    text_block = manifest.get("text_block") or 0
    if isinstance(text_block, bool) or not isinstance(text_block, int) or text_block < 0:
        raise InputError(f"'text_block' must be a number of columns, got {text_block!r}" + REBUILD, path)
    combine = manifest.get("combine")
    if combine is not None and combine not in COMBINES:
        raise InputError(f"'combine' is {combine!r} (known: {', '.join(COMBINES)})" + REBUILD, path)
    direction = field(manifest, path, "direction", kind=str)
    if direction not in DIRECTIONS:
        raise InputError(f"'direction' is {direction!r} (known: {', '.join(DIRECTIONS)})" + REBUILD, path)
    head = field(manifest, path, "head", kind=str)
    if head not in HEADS:
        raise InputError(f"'head' is {head!r} (known: {', '.join(HEADS)})" + REBUILD, path)
    return {"direction": direction, "head": head, "text_dim": number(manifest, path, "text_dim", low=1),
            "triple_dim": number(manifest, path, "triple_dim", low=1),
            "hidden": number(manifest, path, "training", "options", "hidden", low=1),
            "dropout": number(manifest, path, "training", "options", "dropout", low=0, high=1, integer=False),
            "text_block": text_block, "combine": combine}


def check_triple_width(manifest, encoding, path):
    """The triple width the manifest declares is what its encoding gives (a verbalised block is the text's
    width): a wrong one failed only on the first retrieval, in a matrix product."""
    text_dim, triple_dim, text_block = manifest["text_dim"], manifest["triple_dim"], manifest.get("text_block") or 0
    kg_width = encoding.composer.dimension if getattr(encoding, "composer", None) is not None else 0
    expected = {"kg": (kg_width, 0), "verbalized": (text_dim, text_dim),
                "hybrid": (text_dim + kg_width, text_dim)}[encoding.kind]
    if (triple_dim, text_block) != expected:
        raise InputError(f"declares triples {triple_dim} wide with a text block of {text_block}, but its "
                         f"{encoding.kind} encoding gives {expected[0]} and {expected[1]}" + REBUILD, path)
