"""`ontolink embed-kg`: KG embeddings (RDF2Vec or any PyKEEN model) into an embeddings directory.

The directory holds ``manifest.json``, ``embeddings.safetensors`` (``entity``:
(E, d), ``relation``: (R, d_r), float32, plus any further representation),
``ids.json`` (the row order of both) and ``training_curve.jsonl`` (one line per
epoch: loss, seconds and, when evaluated, validation MRR). Complex-valued
vectors (RotatE) are stored as real vectors of twice the dimension,
[real parts | imaginary parts], and the manifest says so.
"""

import json
import time
from pathlib import Path

import numpy as np

from toolbox.backends.kg import kg_embedder_class
from toolbox.errors import InputError
from toolbox.manifest import artifact_directory, file_sha256, library_versions, read_manifest
from toolbox.progress import progress_bar
from toolbox.triples import TripleSet

ARTIFACT = "kg-embeddings"
TENSORS = "embeddings.safetensors"
IDS = "ids.json"
CURVE = "training_curve.jsonl"


IS_A = "is_a"


def ontology_triples(ontology):
    """An ontology's own graph as triples: (child, is_a, parent) for every live term and parent the loader
    keeps (alt_ids and replaced_by are other names of a term, not edges, so they add none)."""
    from toolbox.triples import Triple

    return TripleSet.from_triples([Triple(entity.id, IS_A, parent) for entity in ontology for parent in entity.parents])


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


def embed_kg(triples, directory, method="rdf2vec", seed=0, device="auto", source=None, ontology=None, **options):
    """Train KG embeddings on ``triples`` (Triples or a TripleSet) and write ``directory``; returns its manifest.
    ``ontology``: the Ontology the triples come from (``ontology_triples``), recorded with its content hash.

    ``options`` are the backend's keywords (RDF2Vec: dim, depth, walks, epochs, ...;
    PyKEEN: dim, relation_dim, epochs, batch_size, lr, negatives, ...), None meaning
    the published default.
    """
    from safetensors.numpy import save_file

    triple_set = triples if isinstance(triples, TripleSet) else TripleSet.from_triples(list(triples))
    if not len(triple_set):
        raise InputError("no triples to embed", source)
    options = {key: value for key, value in options.items() if value is not None}
    embedder_class = kg_embedder_class(method)
    embedder = embedder_class(method, **options) if embedder_class.method == "pykeen" else embedder_class(**options)
    started = time.perf_counter()
    total = options.get("epochs") or getattr(embedder, "options", {}).get("epochs")
    with progress_bar(total=total, desc=f"embed-kg ({method})", unit="epoch") as progress:
        result = embedder.fit(triple_set, seed=seed, device=device, progress=progress)
    seconds = time.perf_counter() - started
    tensors = {"entity": np.ascontiguousarray(result.entity, dtype=np.float32),
               "relation": np.ascontiguousarray(result.relation, dtype=np.float32)}
    tensors.update({name: np.ascontiguousarray(value, dtype=np.float32) for name, value in result.extra.items()})
    for name, value in tensors.items():
        if not np.all(np.isfinite(value)):
            raise InputError(f"training produced non-finite {name} vectors; try a lower --lr")
    manifest = {
        "artifact": ARTIFACT,
        "method": method,
        "embedding": result.describe,
        "entities": len(triple_set.entity_ids),
        "relations": len(triple_set.relation_ids),
        "entity_dim": int(tensors["entity"].shape[1]),
        "relation_dim": int(tensors["relation"].shape[1]),
        "complex": bool(result.describe.get("complex")),
        "triples": {"path": None if source in (None, "-") else str(source), "count": len(triple_set),
                    "duplicates_dropped": triple_set.duplicates, "sha256": triple_set.content_hash()},
        "ontology": ontology.describe() if ontology is not None else None,
        "seed": seed,
        "seconds": round(seconds, 2),
        "tensors": {name: list(value.shape) for name, value in tensors.items()},
        "files": [TENSORS, IDS, CURVE],
        "versions": library_versions("torch", "pykeen", "gensim", "numpy", "safetensors"),
    }
    with artifact_directory(directory, manifest) as temporary:
        save_file(tensors, str(temporary / TENSORS))
        manifest["sha256"] = file_sha256(temporary / TENSORS)
        with open(temporary / IDS, "w", encoding="utf-8") as handle:
            json.dump({"entities": triple_set.entity_ids, "relations": triple_set.relation_ids}, handle,
                      ensure_ascii=False)
        with open(temporary / CURVE, "w", encoding="utf-8") as handle:
            for entry in result.curve:
                handle.write(json.dumps(entry) + "\n")
    return manifest


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


def load_kg_embeddings(directory):
    """Open an embeddings directory made by ``embed_kg``, refusing a truncated or altered one."""
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    directory = Path(directory)
    manifest = read_manifest(directory, ARTIFACT, required_files=[TENSORS, IDS])
    try:
        tensors = load_file(str(directory / TENSORS))
        with open(directory / IDS, encoding="utf-8") as handle:
            ids = json.load(handle)
    except (SafetensorError, ValueError, OSError) as error:
        raise InputError(f"embeddings are damaged ({type(error).__name__}: {error}); rebuild them with "
                         "`ontolink embed-kg`", directory) from None
    entity, relation = tensors.pop("entity", None), tensors.pop("relation", None)
    if entity is None or relation is None or len(entity) != len(ids["entities"]) or \
            len(relation) != len(ids["relations"]):
        raise InputError(f"{TENSORS} does not match {IDS}; rebuild the embeddings", directory)
    if manifest.get("sha256") and file_sha256(directory / TENSORS) != manifest["sha256"]:
        raise InputError(f"{TENSORS} was changed after the manifest was written; rebuild the embeddings",
                         directory)
    return KGEmbeddings(directory, manifest, ids["entities"], ids["relations"], entity, relation, tensors)
