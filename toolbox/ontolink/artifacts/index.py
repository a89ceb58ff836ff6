"""A name index written by `ontolink index`, loaded: the index backend plus the name → entity maps.

The directory holds manifest.json (ontology label and SHA-256, index method, encoder, FAISS settings),
names.json (names, their entities, the entities' names and definitions) and the backend's files.
"""

import json
from pathlib import Path

import numpy as np

from ontolink.backends.encoders import load_encoder
from ontolink.backends.indexes import NAME_INDEXES
from ontolink.errors import InputError
from ontolink.manifest import check_same_ontology, read_manifest

ARTIFACT = "index"
NAMES_FILE = "names.json"


def write_names(directory, ontology, names, entity_of_name, name_kinds=None):
    """names.json: what linking needs of the ontology, so that `link` never parses it."""
    entities = list(ontology)
    depth = ontology.depths()
    row_of = {entity.id: row for row, entity in enumerate(entities)}
    with open(directory / NAMES_FILE, "w", encoding="utf-8") as handle:
        json.dump({"entity_ids": [entity.id for entity in entities], "entity_names": [entity.name for entity in entities],
                   "names": names, "entity_of_name": entity_of_name,
                   # kept so a reranker can read "name [ENT] definition" without the ontology
                   "entity_definitions": [entity.definition for entity in entities],
                   # candidate features of a ranker: where an entity sits, which kind of name matched
                   "entity_depths": [depth.get(entity.id, 0) for entity in entities],
                   "entity_children": [len(ontology.children[entity.id]) for entity in entities],
                   # rows of each entity's live is_a parents: hierarchy features among a mention's candidates
                   "entity_parents": [[row_of[parent] for parent in entity.parents if parent in row_of]
                                      for entity in entities],
                   **({"name_kinds": name_kinds} if name_kinds is not None else {})},
                  handle, ensure_ascii=False)


class LoadedIndex:
    """A name index plus the name → entity maps, ready to search."""

    def __init__(self, directory, manifest, name_index, entity_ids, entity_names, names, entity_of_name,
                 entity_definitions=None, entity_depths=None, entity_children=None, name_kinds=None, entity_parents=None):
        self.directory = directory
        self.manifest = manifest
        self.name_index = name_index
        self.entity_ids = entity_ids
        self.entity_names = entity_names
        self.names = names
        self.entity_of_name = np.asarray(entity_of_name, dtype=np.int64)
        self.definitions = dict(zip(entity_ids, entity_definitions)) if entity_definitions else {}
        # None in indexes written before candidate features existed
        self.entity_depths = entity_depths
        self.entity_children = entity_children
        self.name_kinds = name_kinds
        self.entity_parents = entity_parents

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
            # queries are encoded as the names were: the same runtime (indexes before ONNX were torch;
            # an ONNX index on CUDA is queried in PyTorch) and precision
            runtime = described.get("runtime", "torch")
            encoder = load_encoder(described["model"], device=device,
                                   precision=precision or _same_precision(described["precision"], device),
                                   runtime="auto" if runtime == "onnx" else runtime,
                                   max_length=described.get("max_length", 128))
        name_index = index_type.load(directory, manifest, encoder)
    if len(name_index) != len(maps["names"]):
        raise InputError(f"index holds {len(name_index)} vectors but {NAMES_FILE} lists {len(maps['names'])} "
                         "names; rebuild it", directory)
    return LoadedIndex(directory, manifest, name_index, maps["entity_ids"], maps["entity_names"], maps["names"],
                       maps["entity_of_name"], maps.get("entity_definitions"), maps.get("entity_depths"),
                       maps.get("entity_children"), maps.get("name_kinds"), maps.get("entity_parents"))


def _load_multivector(directory, manifest, names, device, precision):
    from ontolink.backends.indexes.multivector import MultiVectorNameIndex
    from ontolink.backends.indexes.token_encoder import TokenEncoder
    from ontolink.device import resolve_device

    described = manifest["index"]
    encoder = TokenEncoder(described["model"], dimension=None, device=resolve_device(device),
                           max_length=described["encoder"]["max_length"])
    encoder.set_precision(precision or _same_precision(described["encoder"]["precision"], device))
    return MultiVectorNameIndex.load(directory, manifest, encoder, names)


def _same_precision(built_with, device):
    """Encode queries as the names were encoded, unless the device cannot (int8 is CPU-only)."""
    from ontolink.device import resolve_device

    resolved = resolve_device(device)
    if built_with == "int8" and resolved.startswith("cuda"):
        return "fp16"
    if built_with == "fp16" and not resolved.startswith("cuda"):
        return "fp32"
    return built_with
