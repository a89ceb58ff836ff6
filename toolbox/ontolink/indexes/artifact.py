"""A name index written by `ontolink index`, loaded: the index backend plus the name → entity maps.

The directory holds manifest.json (ontology label and SHA-256, index method, encoder, FAISS settings),
names.json (names, their entities, the entities' names and definitions) and the backend's files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ontolink.encoders import load_encoder
from ontolink.indexes import NAME_INDEXES
from ontolink.core.artifact_files import check_rows, field, read_json
from ontolink.core.errors import InputError
from ontolink.core.manifest import check_same_ontology, read_manifest
from ontolink.core.device import resolve_device, portable_precision
from ontolink.indexes.multivector import MultiVectorNameIndex
from ontolink.indexes.token_encoder import TokenEncoder
from ontolink.core.options import AUTO_DEVICE

if TYPE_CHECKING:
    from ontolink.ontology import OntologySource
    from ontolink.ontology.model import Ontology

ARTIFACT = "index"
NAMES_FILE = "names.json"
# tables made from the names alone, by whoever reads them (`link`'s folded names), at `index` time rather than
# on every load: {table name: {"digest": what made it, "rows": one value per name}}
TABLES_FILE = "name_tables.json"


def write_name_tables(directory, names, makers):
    """TABLES_FILE from ``makers`` ({table name: (digest, function of the names -> one value per name)});
    nothing when there are none. Returns the file name written, or None."""
    if not makers:
        return None
    tables = {table: {"digest": digest, "rows": make(names)} for table, (digest, make) in makers.items()}
    with open(Path(directory) / TABLES_FILE, "w", encoding="utf-8") as handle:
        json.dump(tables, handle, ensure_ascii=False)
    return TABLES_FILE


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
                   **({"name_kinds": name_kinds} if name_kinds is not None else {}),
                   # each entity's types (the ontology's type field), for `link --where type=...`; only when some
                   # entity has one
                   **({"entity_types": [list(entity.types) for entity in entities]}
                      if any(entity.types for entity in entities) else {})},
                  handle, ensure_ascii=False)


class LoadedIndex:
    """A name index plus the name → entity maps, ready to search."""

    def __init__(self, directory, manifest, name_index, entity_ids, entity_names, names, entity_of_name,
                 entity_definitions=None, entity_depths=None, entity_children=None, name_kinds=None,
                 entity_parents=None, entity_types=None):
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
        self.entity_types = entity_types  # None: no entity of the ontology had a type
        # entity rows searches may return (a bool per entity; None: all), ``restrict``
        self.allowed_entities: np.ndarray | None = None

    def restrict(self, entity_ids) -> None:
        """Let searches of this index return only the entities of ``entity_ids`` (`link --entities / --where`;
        None: all again). Every ``Linker`` made on it afterwards keeps to them, also a ranker's."""
        if entity_ids is None:
            self.allowed_entities = None
            return
        wanted = set(entity_ids)
        self.allowed_entities = np.fromiter((entity_id in wanted for entity_id in self.entity_ids), dtype=bool,
                                            count=len(self.entity_ids))

    def __len__(self):
        return len(self.names)

    def name_table(self, table, digest, make):
        """One value per name: the table ``index`` stored under ``table`` when it was made by ``digest``, else
        ``make(names)`` (an index built before the table existed, or by another version of what makes it).
        The stored tables are read on the first call, not at load."""
        stored = getattr(self, "_name_tables", None)
        if stored is None:
            path = Path(self.directory) / TABLES_FILE
            stored = {}
            if path.exists():
                try:
                    stored = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    stored = {}  # unreadable: made again, as for an index without it
            self._name_tables = stored if isinstance(stored, dict) else {}
            stored = self._name_tables
        entry = stored.get(table)
        if isinstance(entry, dict) and entry.get("digest") == digest:
            rows = entry.get("rows")
            if isinstance(rows, list) and len(rows) == len(self.names) and all(isinstance(row, str) for row in rows):
                return rows
        return make(self.names)

    @property
    def method(self):
        """How the index searches ("dense", "tfidf", "multivector", ...): what a candidate it found was matched by."""
        return self.manifest.get("index", {}).get("method", "index")

    def query_text(self, record):
        """What a Mention record is searched as: the bare mention, or marked-up context for a retriever."""
        encoder = getattr(self.name_index, "encoder", None)
        return encoder.mention_text(record) if encoder is not None else record["mention"].strip()


# reads of an index directory that `index` replaced meanwhile, made again before its error is believed
REPLACED_RETRIES = 3


def load_index(directory: str | Path, ontology: Ontology | OntologySource | None = None, device: str = AUTO_DEVICE,
               precision: str | None = None) -> LoadedIndex:
    """Open an index directory, refusing a truncated one or one built for another ontology.

    `index` puts a new build in place in one step (core.swap), but a reader takes its files one after another:
    one that started on the old directory and ends on the new one finds them at odds ("holds 39059 vectors ...
    the index has 40508"), or, rebuilt with another encoder over the same names, no error at all. So when the
    directory at the path is no longer the one the read began with, failed or not, it is read again from the
    start; an index that is at odds with itself still fails."""
    for attempt in range(REPLACED_RETRIES + 1):
        began = _identity(directory)
        try:
            loaded = _load_index(Path(directory), ontology, device, precision)
        except (InputError, OSError):
            if attempt == REPLACED_RETRIES or _identity(directory) in (began, None):
                raise
            continue
        if attempt == REPLACED_RETRIES or _identity(directory) == began:
            return loaded
    raise AssertionError("unreachable")


def _identity(directory):
    """(device, inode) of the directory at a path, None when there is none: what a swap changes."""
    try:
        status = os.stat(directory)
    except OSError:
        return None
    return status.st_dev, status.st_ino


def _load_index(directory: Path, ontology: Ontology | OntologySource | None, device: str,
                precision: str | None) -> LoadedIndex:
    manifest = read_manifest(directory, ARTIFACT, required_files=[NAMES_FILE])
    if manifest.get("kind") not in ("single-vector", "multi-vector"):
        raise InputError(f"is a {manifest.get('kind')} index, which this version cannot read", directory)
    if ontology is not None:
        check_same_ontology(manifest, ontology, directory)
    maps = checked_names(read_json(directory / NAMES_FILE), directory / NAMES_FILE)
    manifest_path = directory / "manifest.json"
    method = field(manifest, manifest_path, "index", "method", kind=str)
    if manifest["kind"] == "multi-vector":
        name_index = _load_multivector(directory, manifest, maps["names"], device, precision)
    else:
        if method not in NAME_INDEXES.names():
            raise InputError(f"'index.method' is {method!r}, which this version does not know (known: "
                             f"{', '.join(NAME_INDEXES.names())}); rebuild it", manifest_path)
        index_type = NAME_INDEXES.get(method)
        encoder = None
        if index_type.uses_encoder:
            described = field(manifest, manifest_path, "index", "encoder", kind=dict)
            model = field(manifest, manifest_path, "index", "encoder", "model", kind=str)
            # queries are encoded as the names were: the same runtime (indexes before ONNX were torch;
            # an ONNX index on CUDA is queried in PyTorch) and precision
            runtime = described.get("runtime", "torch")
            encoder = load_encoder(model, device=device,
                                   precision=precision or _same_precision(
                                       field(manifest, manifest_path, "index", "encoder", "precision", kind=str),
                                       device),
                                   runtime="auto" if runtime == "onnx" else runtime,
                                   max_length=described.get("max_length", 128))
        name_index = index_type.load(directory, manifest, encoder)
    if len(name_index) != len(maps["names"]):
        raise InputError(f"index holds {len(name_index)} vectors but {NAMES_FILE} lists {len(maps['names'])} "
                         "names; rebuild it", directory)
    return _loaded(directory, manifest, name_index, maps)


def written_index(directory, manifest, name_index):
    """A ``LoadedIndex`` over the names.json just written into ``directory`` and ``name_index`` as built, for
    what `index` measures on it before its manifest is written (the default ranker's choice)."""
    return _loaded(Path(directory), manifest, name_index,
                   checked_names(read_json(Path(directory) / NAMES_FILE), Path(directory) / NAMES_FILE))


def _loaded(directory, manifest, name_index, maps):
    return LoadedIndex(directory, manifest, name_index, maps["entity_ids"], maps["entity_names"], maps["names"],
                       maps["entity_of_name"], maps.get("entity_definitions"), maps.get("entity_depths"),
                       maps.get("entity_children"), maps.get("name_kinds"), maps.get("entity_parents"),
                       maps.get("entity_types"))


def checked_names(maps, path):
    """names.json as ``write_names`` writes it: lists of the right types and lengths, and every row number
    (a name's entity, an entity's parents) inside the entity list; a wrong one links every mention to a
    wrong entity, or fails mid-run."""
    if not isinstance(maps, dict):
        raise InputError(f"holds a JSON {type(maps).__name__}, not an object; rebuild the index", path)

    def strings(key, optional=False, nullable=False):
        value = maps.get(key)
        if value is None and optional:
            return None
        allowed = (str, type(None)) if nullable else str
        if not isinstance(value, list) or not all(isinstance(item, allowed) for item in value):
            raise InputError(f"{key!r} must be a list of strings; rebuild the index", path)
        return value

    entity_ids = strings("entity_ids")
    entity_count = len(entity_ids)
    names = strings("names")
    for key, optional, nullable, count in (("entity_names", False, False, entity_count),
                                           ("entity_definitions", True, True, entity_count),
                                           ("name_kinds", True, False, len(names))):
        value = strings(key, optional, nullable)
        if value is not None and len(value) != count:
            raise InputError(f"{key!r} lists {len(value)} items for {count} "
                             f"{'names' if key == 'name_kinds' else 'entities'}; rebuild the index", path)
    entity_of_name = maps.get("entity_of_name")
    if not isinstance(entity_of_name, list) or len(entity_of_name) != len(names) or not all(
            type(row) is int for row in entity_of_name):
        raise InputError(f"'entity_of_name' must list one entity row (an integer) per name ({len(names)}); "
                         "rebuild the index", path)
    check_rows(np.asarray(entity_of_name, dtype=np.int64), entity_count, "'entity_of_name'", path)
    for key in ("entity_depths", "entity_children"):
        value = maps.get(key)
        if value is not None and (not isinstance(value, list) or len(value) != entity_count
                                  or not all(type(item) is int for item in value)):
            raise InputError(f"{key!r} must list one integer per entity ({entity_count}); rebuild the index", path)
    types = maps.get("entity_types")
    if types is not None and (not isinstance(types, list) or len(types) != entity_count or not all(
            isinstance(own, list) and all(isinstance(kind, str) for kind in own) for own in types)):
        raise InputError(f"'entity_types' must list the types (strings) of each entity ({entity_count}); "
                         "rebuild the index", path)
    parents = maps.get("entity_parents")
    if parents is not None:
        if not isinstance(parents, list) or len(parents) != entity_count or not all(
                isinstance(rows, list) and all(type(row) is int for row in rows) for rows in parents):
            raise InputError(f"'entity_parents' must list the parent rows of each entity ({entity_count}); "
                             "rebuild the index", path)
        check_rows(np.fromiter((row for rows in parents for row in rows), dtype=np.int64), entity_count,
                   "'entity_parents'", path)
    return maps


def _load_multivector(directory, manifest, names, device, precision):
    path = directory / "manifest.json"
    encoder = TokenEncoder(field(manifest, path, "index", "model", kind=str), dimension=None,
                           device=resolve_device(device),
                           max_length=field(manifest, path, "index", "encoder", "max_length", kind=int))
    encoder.set_precision(precision or _same_precision(field(manifest, path, "index", "encoder", "precision",
                                                             kind=str), device))
    return MultiVectorNameIndex.load(directory, manifest, encoder, names)


def _same_precision(built_with, device):
    """Encode queries as the names were encoded, unless the device cannot (core.device.portable_precision)."""
    return portable_precision(built_with, resolve_device(device))
