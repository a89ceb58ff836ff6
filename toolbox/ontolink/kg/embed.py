"""`ontolink embed-kg`: KG embeddings (RDF2Vec or any PyKEEN model) into an embeddings directory.

The directory holds ``manifest.json``, ``embeddings.safetensors`` (``entity``:
(E, d), ``relation``: (R, d_r), float32, plus any further representation),
``ids.json`` (the row order of both) and ``training_curve.jsonl`` (one line per
epoch: loss, seconds and, when evaluated, validation MRR). Complex-valued
vectors (RotatE) are stored as real vectors of twice the dimension,
[real parts | imaginary parts], and the manifest says so.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from ontolink.kg.embeddings import ARTIFACT, IDS, TENSORS
from ontolink.kg.embedders import MODEL_ZOO, kg_embedder_class
from ontolink.core.errors import InputError, UsageError
from ontolink.core.manifest import artifact_directory, file_sha256, library_versions
from ontolink.core.progress import progress_bar
from ontolink.formats.triples import TripleSet, Triple, read_triples
from ontolink.core.io import ReadStats, plural, warn
from ontolink.core.options import AUTO_DEVICE, DEFAULT_SEED
from ontolink.kg.options import EmbedKgOptions

if TYPE_CHECKING:
    from pathlib import Path

    from ontolink.ontology.model import Ontology

CURVE = "training_curve.jsonl"
IS_A = "is_a"


def ontology_triples(ontology: Ontology) -> TripleSet:
    """An ontology's own graph as triples: (child, is_a, parent) for every live term and parent the loader
    keeps (alt_ids and replaced_by are other names of a term, not edges, so they add none)."""
    return TripleSet.from_triples([Triple(entity.id, IS_A, parent) for entity in ontology
                                   for parent in entity.parents])


def embed_kg(triples: Iterable[Triple] | TripleSet, directory: str | Path, method: str = EmbedKgOptions.method,
             seed: int = DEFAULT_SEED, device: str = AUTO_DEVICE, source: str | None = None,
             ontology: Ontology | None = None, force: bool = EmbedKgOptions.force, **options: Any) -> dict[str, Any]:
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
    if len(triple_set.entity_ids) < 2:  # PyKEEN's negative sampler draws among the other entities: there are none
        raise InputError(f"the graph has {len(triple_set.entity_ids)} entity: embeddings need two or more", source)
    options = {key: value for key, value in options.items() if value is not None}
    embedder_class = kg_embedder_class(method)
    embedder = embedder_class(method, **options) if embedder_class.method == MODEL_ZOO else embedder_class(**options)
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
    with artifact_directory(directory, manifest, force=force) as temporary:
        save_file(tensors, str(temporary / TENSORS))
        manifest["sha256"] = file_sha256(temporary / TENSORS)
        with open(temporary / IDS, "w", encoding="utf-8") as handle:
            json.dump({"entities": triple_set.entity_ids, "relations": triple_set.relation_ids}, handle,
                      ensure_ascii=False)
        with open(temporary / CURVE, "w", encoding="utf-8") as handle:
            for entry in result.curve:
                handle.write(json.dumps(entry) + "\n")
    return manifest


RDF2VEC_ONLY = ("depth", "walks", "window", "reverse", "workers")
PYKEEN_ONLY = ("relation_dim", "batch_size", "lr", "negatives", "margin", "adversarial_temperature",
               "label_smoothing", "validation_fraction", "eval_every", "patience", "model_kwargs")


def embed_kg_files(options: EmbedKgOptions) -> dict[str, Any]:
    """`ontolink embed-kg`: read the triples (``options.input_path``, or ``options.ontology``'s own), train the
    embeddings of ``options.method`` into ``options.directory`` and say so in one line on stderr; returns the
    manifest."""
    started = time.perf_counter()
    stats = ReadStats()
    source = None
    input_path = options.input_path
    if options.ontology is not None:
        if input_path != "-" or options.fmt or options.skip_invalid:
            raise UsageError("--ontology replaces -i/--input, --format and --skip-invalid: give one source")
        source = options.ontology.load()
        triple_set = ontology_triples(source)
        input_path = str(source.source)
        # a term with no parent and no child is in no triple, so it gets no vector: a later `align train
        # --ontology` naming it fails, so say how many now
        embedded = set(triple_set.entity_ids)
        isolated = sum(1 for entity in source if entity.id not in embedded)
        if isolated:
            verbs = "is in no is_a triple and gets" if isolated == 1 else "are in no is_a triple and get"
            warn(f"{plural(isolated, 'term')} of {source.label} with no parent and no child {verbs} no vector")
    else:
        triple_set = TripleSet.from_triples(list(read_triples(input_path, fmt=options.fmt,
                                                              skip_invalid=options.skip_invalid, stats=stats)))
    if triple_set.duplicates:
        warn(f"{triple_set.duplicates} duplicate triples dropped")
    method = options.method
    rdf2vec = method.lower() == "rdf2vec"
    others, kind = (PYKEEN_ONLY, "PyKEEN") if rdf2vec else (RDF2VEC_ONLY, "RDF2Vec")
    given = sorted(name.replace("_", "-") if rdf2vec else name for name in others
                   if getattr(options, name) is not None)
    if given:
        raise UsageError(f"--{', --'.join(given)}: {kind} options, not for --method {'rdf2vec' if rdf2vec else method}")
    settings = {name: getattr(options, name) for name in ("dim", "epochs") + (RDF2VEC_ONLY if rdf2vec else
                                                                            PYKEEN_ONLY)}
    manifest = embed_kg(triple_set, options.directory, method=method, seed=options.seed, device=options.device,
                        source=input_path, ontology=source, force=options.force, **settings)
    described = manifest["embedding"]
    best = ""
    if described.get("best_validation_mrr") is not None:
        best = f", best validation MRR {described['best_validation_mrr']:.3f} at epoch {described['best_epoch']}"
    warn(f"embedded {plural(manifest['entities'], 'entity', 'entities')} and "
         f"{plural(manifest['relations'], 'relation')} "
         f"({manifest['entity_dim']}-d{', complex stored as real' if manifest['complex'] else ''}) from "
         f"{len(triple_set)} triples with {described.get('model', method)} into {options.directory} in "
         f"{time.perf_counter() - started:.1f} s{best}; "
         + (f"ontology {source.label} (sha256 {source.content_hash[:12]})" if source else f"read {stats.summary()}"))
    return manifest
