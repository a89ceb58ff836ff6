"""KG embeddings written by `ontolink embed-kg`, loaded: vectors by id, checked against their manifest.

The directory holds ``manifest.json``, ``embeddings.safetensors`` (``entity``: (E, d), ``relation``:
(R, d_r), float32, plus any further representation) and ``ids.json`` (the row order of both).
"""

from __future__ import annotations

from pathlib import Path

from ontolink.core.errors import InputError
from ontolink.core.manifest import file_sha256, read_manifest
from ontolink.core.artifact_files import load_tensors, read_json

ARTIFACT = "kg-embeddings"
TENSORS = "embeddings.safetensors"
IDS = "ids.json"


class KGEmbeddings:
    """An embeddings directory, loaded: vectors by id, and checks for ids that have none."""

    def __init__(self, directory, manifest, entity_ids, relation_ids, entity, relation, extra):
        self.directory = Path(directory)
        self.manifest = manifest
        self.entity_ids = entity_ids
        self.relation_ids = relation_ids
        self.entity = entity
        self.relation = relation
        self.extra = extra
        self.entity_row = {entity_id: row for row, entity_id in enumerate(entity_ids)}
        self.relation_row = {relation_id: row for row, relation_id in enumerate(relation_ids)}

    @property
    def sha256(self):
        return self.manifest.get("sha256")

    def describe(self):
        """What an align model records about the KG embeddings it was trained on."""
        return {"directory": str(self.directory), "method": self.manifest.get("method"),
                "sha256": self.sha256, "entity_dim": self.entity.shape[1], "relation_dim": self.relation.shape[1],
                "complex": self.manifest.get("complex", False), "triples_sha256": self.manifest["triples"]["sha256"],
                "ontology": self.manifest.get("ontology")}

    def missing(self, subject_id, predicate, object_id):
        """A message naming what has no embedding in a triple, or None."""
        for role, entity_id in (("subject", subject_id), ("object", object_id)):
            if entity_id not in self.entity_row:
                return f"{role} entity {entity_id!r} has no embedding in {self.directory} (not in its KG)"
        if predicate not in self.relation_row:
            return f"relation {predicate!r} is not in the KG of {self.directory} (it has no embedding)"
        return None


def check_kg_ontology(kg, ontology):
    """Refuse KG embeddings made from other content of the ontology than ``ontology`` (as `link` refuses an
    index). Embeddings made from a triples file carry no ontology: True when checked, False when not."""
    made_from = kg.manifest.get("ontology")
    if made_from is None:
        return False
    if made_from.get("sha256") != ontology.content_hash:
        raise InputError(f"were made from ontology {made_from.get('label', '?')} (sha256 "
                         f"{str(made_from.get('sha256'))[:12]}), not from {ontology.label} (sha256 "
                         f"{ontology.content_hash[:12]}); rebuild them with `ontolink embed-kg --ontology`",
                         kg.directory)
    return True


def load_kg_embeddings(directory: str | Path) -> KGEmbeddings:
    """Open an embeddings directory made by ``embed_kg``, refusing a truncated or altered one."""
    directory = Path(directory)
    manifest = read_manifest(directory, ARTIFACT, required_files=[TENSORS, IDS])
    tensors = load_tensors(directory / TENSORS, {"entity": ("f", 2), "relation": ("f", 2)})
    ids = read_json(directory / IDS)
    if not isinstance(ids, dict) or not all(
            isinstance(ids.get(key), list) and all(isinstance(item, str) for item in ids[key])
            for key in ("entities", "relations")):
        raise InputError("must hold 'entities' and 'relations', lists of ids; rebuild the embeddings",
                         directory / IDS)
    entity, relation = tensors.pop("entity"), tensors.pop("relation")
    if len(entity) != len(ids["entities"]) or len(relation) != len(ids["relations"]):
        raise InputError(f"{TENSORS} does not match {IDS}; rebuild the embeddings", directory)
    if manifest.get("sha256") and file_sha256(directory / TENSORS) != manifest["sha256"]:
        raise InputError(f"{TENSORS} was changed after the manifest was written; rebuild the embeddings",
                         directory)
    return KGEmbeddings(directory, manifest, ids["entities"], ids["relations"], entity, relation, tensors)
