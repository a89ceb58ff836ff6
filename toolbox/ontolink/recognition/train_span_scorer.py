"""Fit a span scorer without labels: an ontology's names against the word n-grams of an unlabeled corpus."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
import time
from typing import Any

from ontolink.core.errors import InputError
from ontolink.recognition.span_scorer import SpanScorer, fit_span_scorer, training_texts
from ontolink.core.io import max_line_bytes, plural, warn
from ontolink.core.progress import counting
from ontolink.formats import Counted, Problems, document_format, document_text, resolve_format
from ontolink.recognition.matcher import descendants
from ontolink.recognition.span_scorer_artifact import save_span_scorer
from ontolink.core.options import DEFAULT_SEED
from ontolink.recognition.ngrams import MAX_WORDS
from ontolink.training.options import TrainSpanScorerOptions


def looked_for(ontology: Any, roots: Sequence[str] | None) -> list[Any]:
    """The entities under ``roots`` (all of them without), as `annotate --roots` looks for them."""
    keep = descendants(ontology, roots) if roots else None
    return [entity for entity in ontology if keep is None or entity.id in keep]


def train_span_scorer(ontology: Any, corpus_texts: Iterable[str], roots: Sequence[str] | None = None,
                      max_words: int = MAX_WORDS, negatives_per_name: float = TrainSpanScorerOptions.negatives_per_name,
                      seed: int = DEFAULT_SEED,
                      regularisation: float = TrainSpanScorerOptions.regularisation
                      ) -> tuple[SpanScorer, dict[str, Any]]:
    """(scorer, manifest fields): positives are the names and synonyms of the entities under ``roots``,
    negatives the word n-grams (up to ``max_words``) of ``corpus_texts`` that are no name."""
    names = [name for entity in looked_for(ontology, roots) for name in ontology.names(entity)]
    positives, negatives = training_texts(names, corpus_texts, max_words, negatives_per_name, seed)
    if not positives:
        raise InputError("no entity name to learn from (check --roots)")
    if not negatives:
        raise InputError("the corpus holds no word n-gram that is not a name: give documents of running text")
    try:
        scorer, report = fit_span_scorer(positives, negatives, seed=seed, regularisation=regularisation)
    except ValueError as error:
        raise InputError(str(error)) from None
    manifest = {"ontology": {"label": ontology.label, "sha256": ontology.content_hash},
                "roots": list(roots) if roots else None,
                "options": {"max_words": max_words, "negatives_per_name": negatives_per_name, "seed": seed,
                            "regularisation": regularisation},
                "fit": report}
    return scorer, manifest


def train_span_scorer_files(options: TrainSpanScorerOptions) -> dict[str, Any]:
    """`ontolink train span-scorer`: the ontology's names against the word n-grams of the documents read, the fit
    written to DIRECTORY and the summary line printed; returns the manifest."""
    started = time.perf_counter()
    loaded = options.ontology.load()
    root_ids = [part.strip() for part in options.roots.split(",") if part.strip()] if options.roots else None
    missing = [root for root in root_ids or () if root not in loaded]
    if missing:
        raise InputError(f"--roots: {', '.join(missing)} not in the ontology {loaded.label}")
    source_format = options.source_format
    if source_format is None and options.input_path == "-":
        source_format = "text"
    max_line_bytes()  # a bad ONTOLINK_MAX_LINE_BYTES is said as itself, not as an input without text (below)
    problems = Problems(options.skip_invalid)
    reader = document_format(resolve_format(options.input_path, source_format))
    if hasattr(reader, "text_field"):
        reader.text_field = options.text_field
    documents = Counted(document for document in counting(reader.read(options.input_path, problems),
                                                          "span-scorer", "document")
                        if document_text(document).strip())
    try:
        scorer, manifest = train_span_scorer(loaded, (document_text(document) for document in documents), root_ids,
                                             max_words=options.max_words,
                                             negatives_per_name=options.negatives_per_name, seed=options.seed,
                                             regularisation=options.regularisation)
    except InputError:
        if not documents.count:
            raise InputError("holds no document with text: the negatives come from its word n-grams",
                             options.input_path) from None
        raise
    manifest["corpus"] = {"documents": documents.count}
    save_span_scorer(options.directory, scorer, manifest, force=options.force)
    fit = manifest["fit"]
    skipped = f"; {plural(problems.skipped, 'invalid line')} skipped" if problems.skipped else ""
    warn(f"fitted a span scorer on {plural(fit['positives'], 'name')} and {plural(fit['negatives'], 'n-gram')} of "
         f"{plural(documents.count, 'document')} into {options.directory} in {time.perf_counter() - started:.1f} s: "
         f"threshold "
         f"{fit['threshold']:.3f}, held-out precision {fit['held_out_precision']:.3f}, recall "
         f"{fit['held_out_recall']:.3f}{skipped}")
    return manifest
