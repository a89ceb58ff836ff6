"""Fit a span scorer without labels: an ontology's names against the word n-grams of an unlabeled corpus."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ontolink.core.errors import InputError
from ontolink.recognition.span_scorer import SpanScorer, fit_span_scorer, training_texts


def looked_for(ontology: Any, roots: Sequence[str] | None) -> list[Any]:
    """The entities under ``roots`` (all of them without), as `annotate --roots` looks for them."""
    from ontolink.recognition.matcher import descendants

    keep = descendants(ontology, roots) if roots else None
    return [entity for entity in ontology if keep is None or entity.id in keep]


def train_span_scorer(ontology: Any, corpus_texts: Iterable[str], roots: Sequence[str] | None = None,
                      max_words: int = 4, negatives_per_name: float = 3.0, seed: int = 0,
                      regularisation: float = 1.0) -> tuple[SpanScorer, dict[str, Any]]:
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
