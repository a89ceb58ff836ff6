"""`ontolink align train | retrieve | cv`: text ↔ KG alignment (docs/alignment.md), frozen text and KG
encoders and a trained projection. The steps are here; their parts:

    fit_heads.py  InfoNCE training of the heads (in-batch + optional hard negatives), early stopping
    retrieve.py   D2T / T2D ranking over the full candidate pool, Retrieved records
    cv.py         grouped k-fold splits (no group in both train and test)

The model they train and run (pair records, text encoder, triple composition and
encodings, heads, scorers) and its directory (artifact ``align-model``) are in
ontolink.kg.alignment.

CV directory (artifact ``align-cv``): ``fold-K.jsonl.gz`` (Retrieved records of
fold K's test pairs, both directions), ``folds.json`` (the pair ids of each
fold), ``summary.json`` / ``summary.md`` (metrics, mean ± std over folds).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ontolink.kg.alignment import ARTIFACT, CURVE, HEADS_FILE, PROJECTION, load_alignment
from ontolink.kg.alignment.encoding import triple_encoding
from ontolink.kg.alignment.pairs import group_of
from ontolink.kg.alignment.scorers import AlignedScorer, VerbalizedScorer
from ontolink.kg.alignment.text import TextEmbedder
from ontolink.core.errors import InputError, UsageError
from ontolink.core.io import RecordWriter, warn, read_records, ReadStats
from ontolink.core.manifest import artifact_directory, library_versions
from ontolink.core.progress import progress_bar
from ontolink.kg.alignment.cv import grouped_folds, grouped_holdout
from ontolink.kg.alignment.fit_heads import TrainOptions, train_alignment_model
from ontolink.kg.alignment.retrieve import RETRIEVALS, retrieved_records
from ontolink.core.device import resolve_device
from ontolink.core.records import triple_pair_validator
from ontolink.evaluation.retrieval import aggregate_folds, render_retrieval, retrieval_metrics
from ontolink.kg.embeddings import check_kg_ontology, load_kg_embeddings
from ontolink.core.options import AUTO_DEVICE, DEFAULT_SEED
from ontolink.kg.options import (AlignCvOptions, AlignEncoderOptions, AlignFitOptions, AlignRetrieveOptions,
                                 AlignTrainOptions)

if TYPE_CHECKING:
    from pathlib import Path

    from ontolink.kg.embeddings import KGEmbeddings
    from ontolink.ontology import OntologySource
    from ontolink.ontology.model import Ontology

CV_ARTIFACT = "align-cv"


def _check_pairs(pairs, name="pairs"):
    if not pairs:
        raise InputError(f"no {name} to work on")
    seen = set()
    for record in pairs:
        if record["pair_id"] in seen:
            raise InputError(f"pair_id {record['pair_id']!r} occurs twice in the {name}: ids must be unique")
        seen.add(record["pair_id"])


def _resolve_device(device):
    return resolve_device(device)


def _encoded_triples(pairs, kind, kg, embedder, compose, normalize, seed, device, options):
    """The triple encoding ``kind`` and the rows of ``pairs``, with hard negatives prepared when it reads text."""
    encoding = triple_encoding(kind, kg, embedder, compose, normalize=normalize, seed=seed, device=device)
    rows = encoding.rows(pairs)
    if options.hard_negatives != "none":
        encoding.prepare_negatives(rows, pairs, options.hard_negatives, options.negatives_per_example, seed)
    return encoding, rows


def _encoding_manifest(encoding, combine):
    composer = getattr(encoding, "composer", None)
    return {"triple_encoding": encoding.kind, "combine": combine if encoding.kind == "hybrid" else None,
            "text_block": encoding.text_dim, "composition": composer.describe() if composer else None}


def train_alignment(pairs: Sequence[dict[str, Any]], kg: KGEmbeddings | None, directory: str | Path,
                    embedder: Any = None, compose: str = AlignFitOptions.compose, head: str = AlignFitOptions.head,
                    direction: str = AlignFitOptions.direction, options: Any = None,
                    validation_fraction: float = AlignFitOptions.validation_fraction,
                    normalize: bool = AlignFitOptions.kg_normalize, seed: int = DEFAULT_SEED, device: str = AUTO_DEVICE,
                    source: str | None = None, triple_encoding: str = AlignFitOptions.triple_encoding,
                    combine: str = AlignFitOptions.combine, force: bool = AlignFitOptions.force) -> dict[str, Any]:
    """Train an alignment model on ``pairs`` and write ``directory``; returns the manifest. Triples are
    ``triple_encoding`` (encoding.py): composed KG embeddings ``kg``, verbalised text, or both."""
    import torch
    from safetensors.torch import save_file

    _check_pairs(pairs)
    options = (options or TrainOptions()).check()
    device = _resolve_device(device)
    embedder = embedder or TextEmbedder(device=device)
    started = time.perf_counter()
    with progress_bar(total=len(pairs), desc="encode texts", unit="text") as progress:
        texts = embedder.encode([record["text"] for record in pairs], progress=progress)
    encode_seconds = time.perf_counter() - started
    encoding, rows = _encoded_triples(pairs, triple_encoding, kg, embedder, compose, normalize, seed, device, options)
    train_index, validation_index = grouped_holdout(np.arange(len(pairs)), [group_of(r) for r in pairs],
                                                    validation_fraction, seed)
    with progress_bar(total=options.max_epochs, desc=f"align train ({direction}, {head}, {triple_encoding})",
                      unit="epoch") as progress:
        model, curve, summary = train_alignment_model(texts, rows, encoding, direction, head, train_index,
                                                      validation_index, options, seed, device, progress, combine)
    tensors = {key: value.detach().cpu().contiguous() for key, value in model.state_dict().items()}
    composer = getattr(encoding, "composer", None)
    if composer is not None and composer.projection is not None:
        tensors[PROJECTION] = torch.as_tensor(composer.projection).contiguous()
    manifest = {
        "artifact": ARTIFACT,
        "direction": direction,
        "head": head,
        **_encoding_manifest(encoding, combine),
        "text_dim": int(texts.shape[1]),
        "triple_dim": int(encoding.dimension),
        "encoder": embedder.describe(),
        "kg": kg.describe() if kg is not None and encoding.uses_kg else None,
        "pairs": {"path": None if source in (None, "-") else str(source), "count": len(pairs)},
        "training": summary,
        "seed": seed,
        "encode_seconds": round(encode_seconds, 2),
        "texts_encoded": embedder.encoded,
        "files": [HEADS_FILE, CURVE],
        "versions": library_versions("torch", "transformers", "sentence-transformers", "safetensors"),
    }
    with artifact_directory(directory, manifest, force=force) as temporary:
        save_file(tensors, str(temporary / HEADS_FILE))
        with open(temporary / CURVE, "w", encoding="utf-8") as handle:
            for entry in curve:
                handle.write(json.dumps(entry) + "\n")
    return manifest


def retrieve(queries: Sequence[dict[str, Any]], pool: Sequence[dict[str, Any]], scorer: Any,
             retrievals: Sequence[str] = RETRIEVALS,
             top_k: int = AlignRetrieveOptions.top_k) -> Iterator[dict[str, Any]]:
    """Retrieved records of ``queries`` against the ``pool`` (D2T and/or T2D), query by query."""
    _check_pairs(queries, "queries")
    _check_pairs(pool, "candidates")
    query_inputs = scorer.inputs(queries)
    pool_inputs = query_inputs if pool is queries else scorer.inputs(pool)
    yield from retrieved_records(queries, pool, query_inputs, pool_inputs, scorer, retrievals, top_k)


def resolve_entities(records: Iterable[dict[str, Any]], ontology: Ontology) -> Iterator[dict[str, Any]]:
    """Yield ``records`` with ``subject_entities`` / ``object_entities``: the ontology entities {id, name} the
    triple's subject and object resolve to (the id itself, or an alt_id's or obsolete id's live terms; an
    empty list when it does not resolve), so alignment output joins with `link` output on entity ids."""
    for record in records:
        for end in ("subject", "object"):
            record[f"{end}_entities"] = [{"id": entity_id, "name": ontology[entity_id].name}
                                         for entity_id in ontology.resolve(record[end]["id"])]
        yield record


def cross_validate(pairs: Sequence[dict[str, Any]], directory: str | Path, kg: KGEmbeddings | None = None,
                   embedder: Any = None, baseline: str | None = None, compose: str = AlignCvOptions.compose,
                   head: str = AlignCvOptions.head, direction: str = AlignCvOptions.direction, options: Any = None,
                   folds: int = AlignCvOptions.folds, pool: str = AlignCvOptions.pool,
                   validation_fraction: float = AlignCvOptions.validation_fraction,
                   normalize: bool = AlignCvOptions.kg_normalize, top_k: int = AlignCvOptions.top_k,
                   seed: int = DEFAULT_SEED, device: str = AUTO_DEVICE, source: str | None = None,
                   triple_encoding: str = AlignCvOptions.triple_encoding, combine: str = AlignCvOptions.combine,
                   force: bool = AlignCvOptions.force) -> tuple[dict[str, Any], str]:
    """k-fold CV grouped by ``group``: train on k-1 folds (15% of it by group for validation), retrieve the
    test fold's pairs against the pool (``full``: every pair; ``fold``: the test fold). Writes ``directory``
    and returns the manifest, whose ``summary`` is {group: {metric: {mean, std}}}."""
    import torch

    _check_pairs(pairs)
    if baseline not in (None, "verbalized"):
        raise InputError(f"unknown baseline {baseline!r} (known: verbalized)")
    if baseline is None and kg is None and triple_encoding != "verbalized":
        raise InputError("--kg-embeddings is needed (or --baseline verbalized, or --triple-encoding verbalized)")
    options = (options or TrainOptions()).check()
    device = _resolve_device(device)
    embedder = embedder or TextEmbedder(device=device)
    groups = [group_of(record) for record in pairs]
    ungrouped = sum(1 for record in pairs if record.get("group") is None)
    if ungrouped:
        warn(f"{ungrouped} pairs have no 'group': each is its own group")
    test_folds = grouped_folds(groups, folds, seed)
    started = time.perf_counter()
    with progress_bar(total=len(pairs), desc="encode texts", unit="text") as progress:
        embedder.encode([record["text"] for record in pairs], progress=progress)
    encode_seconds = time.perf_counter() - started
    encoding = None
    if baseline is None:
        encoding, rows = _encoded_triples(pairs, triple_encoding, kg, embedder, compose, normalize, seed, device,
                                          options)
        texts = embedder.encode([record["text"] for record in pairs])
    scorer: VerbalizedScorer | AlignedScorer | None = VerbalizedScorer(embedder) if baseline else None
    per_fold, fold_reports = [], []
    all_rows = np.arange(len(pairs))
    manifest: dict[str, Any] = {}  # filled in place at the end: artifact_directory writes it when the block completes
    with artifact_directory(directory, manifest, force=force) as temporary:
        for fold, test_index in enumerate(test_folds, 1):
            fold_started = time.perf_counter()
            report: dict[str, Any] = {"fold": fold, "test_pairs": int(len(test_index)),
                      "test_groups": len({groups[row] for row in test_index})}
            if baseline is None:
                rest = np.setdiff1d(all_rows, test_index)
                train_index, validation_index = grouped_holdout(rest, groups, validation_fraction, seed + fold)
                if len(train_index) < 2:
                    raise InputError(f"fold {fold}: only {len(train_index)} training pair(s) after holding out "
                                     "the test fold and validation; use fewer --folds or more pairs")
                torch.manual_seed(seed + fold)
                model, curve, summary = train_alignment_model(texts, rows, encoding, direction, head, train_index,
                                                              validation_index, options, seed + fold, device,
                                                              combine=combine)
                report.update({key: summary[key] for key in ("train_pairs", "validation_pairs", "epochs_run",
                                                              "best_epoch", "best_validation_mrr")})
                report["train_seconds"] = summary["seconds"]
                with open(temporary / f"fold-{fold}.curve.jsonl", "w", encoding="utf-8") as handle:
                    for entry in curve:
                        handle.write(json.dumps(entry) + "\n")
                scorer = AlignedScorer(model, encoding, embedder, device=device)
            queries = [pairs[row] for row in test_index]
            candidates = pairs if pool == "full" else queries
            records = []
            with RecordWriter(temporary / f"fold-{fold}.jsonl.gz") as writer:
                for record in retrieve(queries, candidates, scorer, RETRIEVALS, top_k):
                    record["fold"] = fold
                    writer.write(record)
                    records.append({"direction": record["direction"], "rank": record["rank"],
                                    "predicate": record["predicate"], "pool": record["pool"]})
            metrics = retrieval_metrics(records)
            per_fold.append(metrics)
            report["metrics"] = metrics
            report["seconds"] = round(time.perf_counter() - fold_started, 3)
            fold_reports.append(report)
            warn(f"fold {fold}/{len(test_folds)}: {len(test_index)} test pairs, D2T MRR "
                 f"{metrics['d2t']['MRR']:.3f}, T2D MRR {metrics['t2d']['MRR']:.3f} "
                 f"({report['seconds']:.1f} s)")
        summary = aggregate_folds(per_fold)
        table = render_retrieval(summary, "markdown", [f"fold {fold}" for fold in range(1, len(test_folds) + 1)])
        with open(temporary / "summary.json", "w", encoding="utf-8") as handle:
            json.dump({"summary": summary, "folds": fold_reports}, handle, indent=2)
        with open(temporary / "summary.md", "w", encoding="utf-8") as handle:
            handle.write(table + "\n")
        with open(temporary / "folds.json", "w", encoding="utf-8") as handle:
            json.dump([[pairs[row]["pair_id"] for row in test_index] for test_index in test_folds], handle)
        manifest.update({
            "artifact": CV_ARTIFACT,
            "method": "verbalized baseline" if baseline else "aligned",
            "direction": None if baseline else direction,
            "head": None if baseline else head,
            **(_encoding_manifest(encoding, combine) if encoding else {"composition": None}),
            "encoder": embedder.describe(),
            "kg": kg.describe() if kg is not None and encoding is not None and encoding.uses_kg else None,
            "training": None if baseline else {"options": options.__dict__,
                                               "validation_fraction": validation_fraction},
            "folds": len(test_folds),
            "pool": pool,
            "pairs": {"path": None if source in (None, "-") else str(source), "count": len(pairs),
                      "groups": len(set(groups))},
            "seed": seed,
            "encode_seconds": round(encode_seconds, 2),
            "texts_encoded": embedder.encoded,
            "seconds": round(time.perf_counter() - started, 2),
            "summary": summary,
            "fold_reports": fold_reports,
            "files": ["summary.json", "summary.md", "folds.json"] + [f"fold-{k}.jsonl.gz"
                                                                     for k in range(1, len(test_folds) + 1)],
            "versions": library_versions("torch", "transformers", "sentence-transformers", "pykeen", "gensim"),
        })
    return manifest, table



# The commands as one call each: `align train`, `align retrieve` and `align cv` with their options objects.

def _embedder(options: AlignEncoderOptions) -> TextEmbedder:
    return TextEmbedder(options.encoder, device=options.device, precision=options.precision,
                        max_length=options.max_length)


def _train_options(options: AlignFitOptions) -> TrainOptions:
    return TrainOptions(temperature=options.temperature, lr=options.lr, weight_decay=options.weight_decay,
                        batch_size=options.batch_size, max_epochs=options.max_epochs, patience=options.patience,
                        grad_clip=options.grad_clip, hard_negatives=options.hard_negatives,
                        negatives_per_example=options.negatives_per_example, hidden=options.hidden,
                        dropout=options.dropout)


def _read_triple_pairs(path, kg=None, skip_invalid=False, stats=None):
    return list(read_records(path, validate=triple_pair_validator(kg), skip_invalid=skip_invalid, stats=stats,
                             check_duplicate_ids=False))


def _checked_kg(kg_dir: str | None, triple_encoding: str, ontology: OntologySource | None) -> KGEmbeddings | None:
    """The KG embeddings an encoding needs (None for verbalized), checked against ``ontology`` when given."""
    if triple_encoding == "verbalized":
        if kg_dir:
            raise UsageError("--kg-embeddings: --triple-encoding verbalized reads no KG")
        return None
    if not kg_dir:
        raise UsageError(f"--triple-encoding {triple_encoding} needs --kg-embeddings DIR")
    kg = load_kg_embeddings(kg_dir)
    # checked by the ontology file's content hash, never parsed
    if ontology is not None and not check_kg_ontology(kg, ontology):
        warn(f"{kg_dir} was made from triples, not from an ontology: --ontology {ontology.spec} checks nothing")
    return kg


def train_alignment_files(options: AlignTrainOptions) -> dict[str, Any]:
    """`ontolink align train`: train on the pairs of ``options.input_path``, write the model to
    ``options.directory`` and a one-line summary to stderr; returns the manifest."""
    started = time.perf_counter()
    kg = _checked_kg(options.kg_dir, options.triple_encoding, options.ontology)
    stats = ReadStats()
    pairs = _read_triple_pairs(options.input_path, kg=kg, skip_invalid=options.skip_invalid, stats=stats)
    manifest = train_alignment(pairs, kg, options.directory, embedder=_embedder(options), compose=options.compose,
                               head=options.head, direction=options.direction, options=_train_options(options),
                               validation_fraction=options.validation_fraction, normalize=options.kg_normalize,
                               seed=options.seed, device=options.device, source=options.input_path,
                               triple_encoding=options.triple_encoding, combine=options.combine, force=options.force)
    training = manifest["training"]
    best = (f", best validation MRR {training['best_validation_mrr']:.3f} at epoch {training['best_epoch']}"
            if training["best_validation_mrr"] is not None else "")
    skipped = f" ({stats.skipped} pairs skipped: entity or relation without embedding, or invalid)" \
        if stats.skipped else ""
    triples = options.triple_encoding if options.triple_encoding == "verbalized" else \
        f"{options.triple_encoding}, {options.compose}"
    warn(f"trained a {options.head} {options.direction} head ({triples}) on {training['train_pairs']} pairs"
         f"{skipped} in {training['seconds']:.1f} s ({training['epochs_run']} epochs{best}); "
         f"{manifest['texts_encoded']} texts encoded, the rest cached; total {time.perf_counter() - started:.1f} s")
    return manifest


def retrieve_files(options: AlignRetrieveOptions) -> int:
    """`ontolink align retrieve`: rank the candidate pool for every pair of ``options.input_path`` with a model
    (``options.model_dir``) or the verbalized baseline, write the Retrieved records to ``options.output_path``
    and a one-line summary to stderr; returns the number of records written."""
    if bool(options.model_dir) == bool(options.baseline):
        raise UsageError("give either --model DIR or --baseline verbalized")
    started = time.perf_counter()
    if options.baseline:
        if options.kg_dir:
            raise UsageError("--kg-embeddings applies to --model only")
        scorer = VerbalizedScorer(_embedder(options))
        kg = None
    else:
        if options.encoder:
            raise UsageError("--encoder: a model uses the encoder it was trained with")
        loaded = load_alignment(str(options.model_dir), kg=options.kg_dir, device=options.device)
        scorer, kg = loaded.scorer(), loaded.kg
    ontology = options.ontology
    if ontology is not None and kg is not None:
        check_kg_ontology(kg, ontology)
    checked = ontology.load() if ontology is not None else None
    stats = ReadStats()
    queries = _read_triple_pairs(options.input_path, kg=kg, skip_invalid=options.skip_invalid, stats=stats)
    pool = queries
    if options.candidates_path:
        pool_stats = ReadStats()
        pool = _read_triple_pairs(options.candidates_path, kg=kg, skip_invalid=options.skip_invalid,
                                  stats=pool_stats)
    retrievals = ("d2t", "t2d") if options.retrieval == "both" else (options.retrieval,)
    with RecordWriter(options.output_path) as writer:
        records = retrieve(queries, pool, scorer, retrievals, options.top_k)
        writer.write_all(resolve_entities(records, checked) if checked else records, flush_every=256)
    warn(f"retrieved {writer.count} rankings ({', '.join(retrievals)}) of {len(queries)} pairs over a pool of "
         f"{len(pool)} in {time.perf_counter() - started:.1f} s; read {stats.summary()}")
    return writer.count


def cross_validate_files(options: AlignCvOptions) -> dict[str, Any]:
    """`ontolink align cv`: grouped k-fold cross-validation of the pairs of ``options.input_path`` into
    ``options.directory``; the table and a one-line summary go to stderr. Returns the manifest."""
    import sys

    if options.baseline and options.kg_dir:
        raise UsageError("give either --kg-embeddings DIR or --baseline verbalized")
    started = time.perf_counter()
    kg = None if options.baseline else _checked_kg(options.kg_dir, options.triple_encoding, options.ontology)
    stats = ReadStats()
    pairs = _read_triple_pairs(options.input_path, kg=kg, skip_invalid=options.skip_invalid, stats=stats)
    manifest, table = cross_validate(pairs, options.directory, kg=kg, embedder=_embedder(options),
                                     baseline=options.baseline, compose=options.compose, head=options.head,
                                     direction=options.direction, options=_train_options(options),
                                     folds=options.folds, pool=options.pool,
                                     validation_fraction=options.validation_fraction, normalize=options.kg_normalize,
                                     top_k=options.top_k, seed=options.seed, device=options.device,
                                     source=options.input_path, triple_encoding=options.triple_encoding,
                                     combine=options.combine, force=options.force)
    sys.stderr.write(f"{table}\n")
    sys.stderr.flush()
    warn(f"{options.folds}-fold CV of {len(pairs)} pairs ({manifest['pairs']['groups']} groups) in "
         f"{time.perf_counter() - started:.1f} s into {options.directory}; read {stats.summary()}")
    return manifest
