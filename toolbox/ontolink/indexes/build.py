"""`ontolink index`: every name and synonym of every entity into a searchable name index
(loaded back by ontolink.indexes.artifact)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ontolink.indexes.artifact import ARTIFACT, NAMES_FILE, TABLES_FILE, write_name_tables, write_names, written_index
from ontolink.indexes import NAME_INDEXES
from ontolink.core.errors import InputError
from ontolink.core.io import warn
from ontolink.core.manifest import (artifact_directory, json_sha256, library_versions, not_improved_warning,
    peek_manifest)
from ontolink.core.progress import progress_bar
from ontolink.core.device import resolve_device, resolve_precision
from ontolink.encoders import load_encoder
from ontolink.encoders.embedding_cache import EmbeddingCache
from ontolink.encoders.model_files import DEFAULT_ENCODER
from ontolink.indexes.multivector import MultiVectorNameIndex
from ontolink.indexes.token_encoder import TokenEncoder, multivector_manifest
from ontolink.ontology.kb_documents import kb_documents
from ontolink.ranking.default import add_ranker
from ontolink.core.options import AUTO_DEVICE, DEFAULT_SEED
from ontolink.indexes.options import IndexOptions

if TYPE_CHECKING:
    from ontolink.engines import Engine
    from ontolink.ontology.model import Ontology


def index_rows(ontology: Ontology, extra_names: dict[str, list[str]] | None = None
               ) -> tuple[list[str], list[int], list[str]]:
    """(name texts, entity row of each name, kind of each name): name-based KB rows; an entity's
    ``extra_names`` (``ontolink.recognition.extra_names``) follow its own, of kind "alias"."""
    texts: list[str] = []
    owners: list[int] = []
    kinds: list[str] = []
    extra_names = extra_names or {}
    for row, entity in enumerate(ontology):
        for text, kind in ontology.named(entity) + [(alias, "alias") for alias in extra_names.get(entity.id, ())]:
            texts.append(text)
            owners.append(row)
            kinds.append(kind)
    return texts, owners, kinds


def warn_not_improved(model):
    """Say once, on stderr, that ``model`` (a trained retriever or multi-vector model) did not beat its start."""
    manifest = peek_manifest(model) if model and Path(model).is_dir() else None
    line = not_improved_warning(manifest, manifest.get("artifact", "model"), model) if manifest else None
    if line:
        warn(line + (": the index is the starting model's" if (manifest or {}).get("kept_epoch") == 0 else ""))


def build_index(ontology: Ontology, directory: str | Path, method: str = IndexOptions.method, model: str | None = None,
                device: str = AUTO_DEVICE, precision: str = IndexOptions.precision,
                faiss_type: str = IndexOptions.faiss_type, min_df: int = IndexOptions.min_df, seed: int = DEFAULT_SEED,
                runtime: str = IndexOptions.runtime, cache: bool = True, engine: Engine | None = None,
                force: bool = IndexOptions.force, extra_names: dict[str, list[str]] | None = None,
                ranker: str = IndexOptions.ranker, name_tables: dict[str, Any] | None = None,
                **index_options: Any) -> dict[str, Any]:
    """Build and write an index directory; returns its manifest.

    ``method`` is a registered index method; ``runtime`` the registered encoder of ``model`` (methods
    that encode names; ``auto``: ONNX on CPU, PyTorch otherwise); a multi-vector method reads ``model``
    as a token model. ``cache``: reuse and keep name vectors in the persistent embedding cache
    (batch-invariant encoders), so a rebuild encodes only names it has not seen. ``engine``: where the
    names to encode are encoded (the driver keeps the cache, the only writer). ``extra_names``: {entity id:
    [alias, ...]} indexed as names of kind "alias" (`index --aliases`; single-vector methods). ``ranker``: the
    default ranker `link` applies (auto: the packaged one, one fitted here on the ontology's synonyms, or none,
    whichever measures best on held-out synonyms; packaged; none), with the tables its features read
    (ontolink.ranking.default; the manifest's "ranker").
    ``name_tables``: {table: (digest, function of the names)}, tables of the names that their reader would
    otherwise make on every load (``LoadedIndex.name_table``; `link`'s: ``ontolink.linking.link.name_tables()``).
    """
    warn_not_improved(model)
    index_type = NAME_INDEXES.get(method)
    if index_type.tokens:
        if extra_names:
            raise InputError(f"--aliases applies to the single-vector methods, not --method {method}")
        return build_multivector_index(ontology, directory, model=model, device=device, precision=precision,
                                       faiss_type=faiss_type, seed=seed, force=force, **index_options)
    texts, owners, kinds = index_rows(ontology, extra_names)
    # an encoder counts in tokens (sets the total itself): names come sorted by length, so names/s falls
    with progress_bar(total=None if index_type.uses_encoder else len(texts), desc=f"index ({method})",
                      unit="token" if index_type.uses_encoder else "name") as progress:
        if index_type.uses_encoder:
            encoder = load_encoder(model, device=device, precision=precision, runtime=runtime)
            definitions = [entity.definition for entity in ontology]
            inputs = [encoder.entity_text(text, definitions[owner]) for text, owner in zip(texts, owners)]
            known = None
            if cache and encoder.batch_invariant:
                known = EmbeddingCache(encoder.fingerprint, encoder.dimension)
            name_index = index_type.build(inputs, encoder, faiss_type=faiss_type, seed=seed, progress=progress,
                                          known=known, engine=engine, **index_options)
            if known is not None:
                known.close()
        else:
            if model:
                raise InputError(f"--model does not apply to --method {method}")
            name_index = index_type.build(texts, min_df=min_df, progress=progress)
    manifest = {
        "artifact": ARTIFACT,
        "kind": "single-vector",
        "ontology": ontology.describe() | {"synonym_scopes": list(ontology.synonym_scopes)},
        "index": name_index.describe(),
        # distinct name inputs encoded now, and reused from the embedding cache; the seconds of an ONNX export this
        # build made (none: an earlier run made it, or no ONNX encoder)
        "encoded": {field: getattr(getattr(name_index, "encoder", None), f"last_{field}", None)
                    for field in ("encoded", "reused")} | _export_seconds(name_index),
        "names": len(texts),
        "entities": len(ontology),
        **({"aliases": {"names": kinds.count("alias"), "sha256": json_sha256(extra_names)}} if extra_names else {}),
        "files": [NAMES_FILE, *name_index.files, *([TABLES_FILE] if name_tables else [])],
        "versions": library_versions("torch", "transformers", "sentence-transformers", "onnxruntime", "faiss-cpu",
                                     "faiss-gpu", "scikit-learn"),
    }
    with artifact_directory(directory, manifest, force=force) as temporary:
        name_index.save(temporary)
        write_names(temporary, ontology, texts, owners, kinds)
        write_name_tables(temporary, texts, name_tables)

        add_ranker(temporary, written_index(temporary, manifest, name_index), ranker, seed)
    return manifest


def _export_seconds(name_index: Any) -> dict[str, float]:
    seconds = getattr(getattr(name_index, "encoder", None), "export_seconds", None)
    return {} if seconds is None else {"onnx_export_seconds": round(seconds, 1)}


def build_multivector_index(ontology: Ontology, directory: str | Path, model: str | None = None,
                            device: str = AUTO_DEVICE, precision: str = IndexOptions.precision,
                            faiss_type: str = IndexOptions.faiss_type, token_k: int = IndexOptions.token_k,
                            seed: int = DEFAULT_SEED, force: bool = IndexOptions.force,
                            **faiss_options: Any) -> dict[str, Any]:
    """Build and write a multi-vector (token) index with a `train multivector` model (or a plain backbone,
    untrained: its 384-d word-piece vectors as they are); returns the manifest."""
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
    with artifact_directory(directory, manifest, force=force) as temporary:
        token_index.save(temporary)
        write_names(temporary, ontology, documents, entity_of_document)
    return manifest
