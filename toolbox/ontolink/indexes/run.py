"""`ontolink index` as one library function: ``index_directory(IndexOptions(...))`` loads the ontology (and alias
files), builds the index with the method and options asked, and prints the command's summary line."""

from __future__ import annotations

import time
from typing import Any

from ontolink.core.errors import InputError
from ontolink.core.io import warn as summary
from ontolink.indexes.options import IndexOptions
from ontolink.engines import ENGINES, open_engine
from ontolink.indexes import NAME_INDEXES
from ontolink.indexes.build import build_index
from ontolink.ranking.default import ranker_summary
from ontolink.recognition.extra_names import read_extra_names
from ontolink.ontology.subsets import type_summary


def index_directory(options: IndexOptions, name_tables: dict[str, Any] | None = None) -> dict[str, Any]:
    """Build the index ``options`` describe into ``options.directory``; returns its manifest. ``name_tables``:
    ``build_index``'s, the tables of the names `link` would otherwise make on every start
    (``ontolink.linking.link.name_tables()``)."""
    started = time.perf_counter()
    method = options.method
    if options.multivector:
        summary("--multivector is deprecated: use --method multivector")
        if method not in ("dense", "multivector"):
            raise InputError(f"--multivector (now --method multivector) does not combine with --method {method}")
        method = "multivector"
    loaded = options.ontology.load()
    extra_names = None
    if options.alias_files:
        extra_names = read_extra_names(options.alias_files, loaded)
    faiss_options: dict[str, Any] = {key: value for key, value in dict(
        hnsw_m=options.hnsw_m, ef_search=options.ef_search, ivf_nlist=options.nlist, pq_m=options.pq_m,
        nprobe=options.nprobe).items() if value is not None}
    index_type = NAME_INDEXES.get(method)
    engine_name = getattr(options.start_engine, "name", "local")
    if (index_type.tokens or not index_type.uses_encoder) and not ENGINES.get(engine_name).in_process:
        raise InputError(f"--engine {engine_name} encodes names in parallel: --method {method} builds in "
                         "this process only (use --engine local)")
    if index_type.tokens:
        manifest = build_index(loaded, options.directory, method=method, model=options.model, device=options.device,
                               precision=options.precision, faiss_type=options.faiss_type, token_k=options.token_k,
                               seed=options.seed, force=options.force, extra_names=extra_names, **faiss_options)
        summary(f"indexed {manifest['index']['tokens']} tokens of {manifest['names']} names of "
                f"{manifest['entities']} entities (multi-vector, {manifest['index']['faiss']['bytes_per_token']} "
                f"bytes per token) into {options.directory} in {time.perf_counter() - started:.1f} s"
                f"{type_summary(loaded)}")
        return manifest
    build_options: dict[str, Any]
    if index_type.uses_encoder:
        build_options = dict(model=options.model, device=options.device, precision=options.precision,
                             faiss_type=options.faiss_type, seed=options.seed, runtime=options.runtime,
                             cache=not options.no_cache, **faiss_options)
    else:
        build_options = dict(model=options.model, min_df=options.min_df)
    start_engine = options.start_engine or (lambda device: open_engine(device=device))
    with start_engine(options.device) as engine:
        manifest = build_index(loaded, options.directory, method=method, engine=engine, force=options.force,
                               extra_names=extra_names, ranker=options.ranker, name_tables=name_tables,
                               **build_options)
    encoded = manifest.get("encoded") or {}
    # counted per distinct input (names that tokenise alike are one): said, as they need not add up to the names
    reused = (f"; of {encoded['encoded'] + encoded['reused']} distinct once tokenised, {encoded['encoded']} encoded, "
              f"{encoded['reused']} from the embedding cache") if encoded.get("reused") else ""
    if "onnx_export_seconds" in encoded:
        reused += (f"; the encoder was exported to ONNX in {encoded['onnx_export_seconds']:.1f} s, once: the user "
                   "cache keeps it for every later run (`ontolink cache info`)")
    aliases = f" ({manifest['aliases']['names']} of them aliases)" if "aliases" in manifest else ""
    summary(f"indexed {manifest['names']} names{aliases} of {manifest['entities']} entities ({method}) into "
            f"{options.directory} in {time.perf_counter() - started:.1f} s{reused}; {ranker_summary(manifest)}"
            f"{type_summary(loaded)}")
    return manifest
