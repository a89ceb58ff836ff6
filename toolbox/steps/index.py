"""`ontolink index`: every name and synonym of every entity into a searchable name index."""

import json
from pathlib import Path

import numpy as np

from toolbox.backends.encoders import DEFAULT_ENCODER_BACKEND, ENCODERS
from toolbox.backends.indexes import NAME_INDEXES
from toolbox.errors import InputError
from toolbox.io import warn
from toolbox.manifest import artifact_directory, check_same_ontology, library_versions, read_manifest
from toolbox.progress import progress_bar

ARTIFACT = "index"
NAMES_FILE = "names.json"


def index_rows(ontology):
    """(entity ids, entity names, name texts, entity row of each name): name-based KB rows."""
    entity_ids, entity_names, texts, owners = [], [], [], []
    for row, entity in enumerate(ontology):
        entity_ids.append(entity.id)
        entity_names.append(entity.name)
        for text in ontology.names(entity):
            texts.append(text)
            owners.append(row)
    return entity_ids, entity_names, texts, owners


def build_index(ontology, directory, method="dense", model=None, device="auto", precision="auto",
                faiss_type="flat", min_df=1, seed=0, encoder=DEFAULT_ENCODER_BACKEND, **index_options):
    """Build and write an index directory; returns its manifest.

    ``method`` is a registered index method; ``encoder`` the registered encoder of ``model`` (methods
    that encode names); a multi-vector method reads ``model`` as a token model.
    """
    index_type = NAME_INDEXES.get(method)
    if index_type.tokens:
        return build_multivector_index(ontology, directory, model=model, device=device, precision=precision,
                                       faiss_type=faiss_type, seed=seed, **index_options)
    _, _, texts, owners = index_rows(ontology)
    with progress_bar(total=len(texts), desc=f"index ({method})", unit="name") as progress:
        if index_type.uses_encoder:
            encoder = ENCODERS.get(encoder)(**({"model": model} if model else {}), device=device,
                                            precision=precision)
            definitions = [entity.definition for entity in ontology]
            inputs = [encoder.entity_text(text, definitions[owner]) for text, owner in zip(texts, owners)]
            name_index = index_type.build(inputs, encoder, faiss_type=faiss_type, seed=seed,
                                                   progress=progress, **index_options)
        else:
            if model:
                raise InputError(f"--model does not apply to --method {method}")
            name_index = index_type.build(texts, min_df=min_df, progress=progress)
    manifest = {
        "artifact": ARTIFACT,
        "kind": "single-vector",
        "ontology": ontology.describe() | {"synonym_scopes": list(ontology.synonym_scopes)},
        "index": name_index.describe(),
        "names": len(texts),
        "entities": len(ontology),
        "files": [NAMES_FILE, *name_index.files],
        "versions": library_versions("torch", "transformers", "sentence-transformers", "faiss-cpu",
                                     "faiss-gpu", "scikit-learn"),
    }
    with artifact_directory(directory, manifest) as temporary:
        name_index.save(temporary)
        _write_names(temporary, list(ontology), texts, owners)
    return manifest


def build_multivector_index(ontology, directory, model=None, device="auto", precision="auto", faiss_type="flat",
                            token_k=2048, seed=0, **faiss_options):
    """Build and write a multi-vector (token) index with a `train multivector` model (or a plain backbone,
    untrained: its 384-d word-piece vectors as they are); returns the manifest."""
    from toolbox.backends.encoders.sentence import DEFAULT_ENCODER
    from toolbox.backends.encoders.token import TokenEncoder, multivector_manifest
    from toolbox.backends.indexes.multivector import MultiVectorNameIndex
    from toolbox.device import resolve_device, resolve_precision
    from toolbox.steps.kb_documents import kb_documents

    model = model or DEFAULT_ENCODER
    trained = None
    if Path(model).exists():  # a local directory: recorded absolute, so the index works from anywhere
        model = str(Path(model).resolve())
        trained = multivector_manifest(model)
    if trained and trained["ontology"]["sha256"] != ontology.content_hash:
        warn(f"model {model} was trained for ontology {trained['ontology']['label']}; indexing {ontology.label}")
    kb = trained["options"]["kb"] if trained else "name"
    device = resolve_device(device)
    encoder = TokenEncoder(model, dimension=None, device=device, seed=seed,
                           max_length=trained["options"]["max_length"] if trained else 128)
    encoder.set_precision(resolve_precision(precision, device))
    documents, entity_of_document, expanded = kb_documents(ontology, kb)
    query_expansion = bool(trained and trained["options"].get("query_expansion"))
    with progress_bar(total=len(documents), desc="index (multi-vector)", unit="name") as progress:
        token_index = MultiVectorNameIndex.build(documents, encoder, faiss_type=faiss_type, seed=seed,
                                                 progress=progress, token_k=token_k,
                                                 query_expansion=query_expansion, **faiss_options)
    entities = list(ontology)
    manifest = {
        "artifact": ARTIFACT,
        "kind": "multi-vector",
        "ontology": ontology.describe() | {"synonym_scopes": list(ontology.synonym_scopes)},
        "index": token_index.describe() | {"model": model, "trained": bool(trained), "kb": kb,
                                           "homonyms_expanded": expanded},
        "names": len(documents),
        "entities": len(entities),
        "files": [NAMES_FILE, *token_index.files],
        "versions": library_versions("torch", "transformers", "faiss-cpu", "faiss-gpu"),
    }
    with artifact_directory(directory, manifest) as temporary:
        token_index.save(temporary)
        _write_names(temporary, entities, documents, entity_of_document)
    return manifest


def _write_names(directory, entities, names, entity_of_name):
    with open(directory / NAMES_FILE, "w", encoding="utf-8") as handle:
        json.dump({"entity_ids": [entity.id for entity in entities], "entity_names": [entity.name for entity in entities],
                   "names": names, "entity_of_name": entity_of_name,
                   # kept so a reranker can read "name [ENT] definition" without the ontology
                   "entity_definitions": [entity.definition for entity in entities]},
                  handle, ensure_ascii=False)


class LoadedIndex:
    """A name index plus the name → entity maps, ready to search."""

    def __init__(self, directory, manifest, name_index, entity_ids, entity_names, names, entity_of_name,
                 entity_definitions=None):
        self.directory = directory
        self.manifest = manifest
        self.name_index = name_index
        self.entity_ids = entity_ids
        self.entity_names = entity_names
        self.names = names
        self.entity_of_name = np.asarray(entity_of_name, dtype=np.int64)
        self.definitions = dict(zip(entity_ids, entity_definitions)) if entity_definitions else {}

    def __len__(self):
        return len(self.names)

    def query_text(self, record):
        """What a Mention record is searched as: the bare mention, or marked-up context for a retriever."""
        encoder = getattr(self.name_index, "encoder", None)
        return encoder.mention_text(record) if encoder is not None else record["mention"].strip()


def load_index(directory, ontology=None, device="auto", precision=None):
    """Open an index directory, refusing a truncated one or one built for another ontology."""
    directory = Path(directory)
    manifest = read_manifest(directory, ARTIFACT, required_files=[NAMES_FILE])
    if manifest.get("kind") not in ("single-vector", "multi-vector"):
        raise InputError(f"is a {manifest.get('kind')} index, which this version cannot read", directory)
    if ontology is not None:
        check_same_ontology(manifest, ontology, directory)
    try:
        with open(directory / NAMES_FILE, encoding="utf-8") as handle:
            maps = json.load(handle)
    except ValueError as error:
        raise InputError(f"{NAMES_FILE} is damaged or truncated ({error}); rebuild the index", directory) from None
    method = manifest["index"]["method"]
    if manifest["kind"] == "multi-vector":
        name_index = _load_multivector(directory, manifest, maps["names"], device, precision)
    else:
        index_type = NAME_INDEXES.get(method)
        encoder = None
        if index_type.uses_encoder:
            described = manifest["index"]["encoder"]
            encoder = ENCODERS.get(described.get("backend", DEFAULT_ENCODER_BACKEND))(
                described["model"], device=device,
                precision=precision or _same_precision(described["precision"], device),
                max_length=described.get("max_length", 128))
        name_index = index_type.load(directory, manifest, encoder)
    if len(name_index) != len(maps["names"]):
        raise InputError(f"index holds {len(name_index)} vectors but {NAMES_FILE} lists {len(maps['names'])} "
                         "names; rebuild it", directory)
    return LoadedIndex(directory, manifest, name_index, maps["entity_ids"], maps["entity_names"], maps["names"],
                       maps["entity_of_name"], maps.get("entity_definitions"))


def _load_multivector(directory, manifest, names, device, precision):
    from toolbox.backends.encoders.token import TokenEncoder
    from toolbox.backends.indexes.multivector import MultiVectorNameIndex
    from toolbox.device import resolve_device

    described = manifest["index"]
    encoder = TokenEncoder(described["model"], dimension=None, device=resolve_device(device),
                           max_length=described["encoder"]["max_length"])
    encoder.set_precision(precision or _same_precision(described["encoder"]["precision"], device))
    return MultiVectorNameIndex.load(directory, manifest, encoder, names)


def _same_precision(built_with, device):
    """Encode queries as the names were encoded, unless the device cannot (int8 is CPU-only)."""
    from toolbox.device import resolve_device

    resolved = resolve_device(device)
    if built_with == "int8" and resolved.startswith("cuda"):
        return "fp16"
    if built_with == "fp16" and not resolved.startswith("cuda"):
        return "fp32"
    return built_with
