"""A span scorer learned without labels: does a word n-gram read like a name of the ontology?

Distant supervision in the spirit of PhenoTagger: the positives are the names and synonyms of the
entities looked for (and their plurals), the negatives are word n-grams of unlabeled text that are
no name. Features are hashed character 3-5-grams (within words) and word unigrams and bigrams
(scikit-learn's ``HashingVectorizer``: no vocabulary to store), weighed by a logistic regression
(scikit-learn, the deterministic liblinear solver). The threshold is set without labels: a tenth of
the names and of the n-grams (drawn with the seed) are held out of the fit, and the threshold is the
score that maximises F1 of held-out names against held-out n-grams.

The negatives are noisy (some n-grams of a corpus are mentions the ontology words differently), so
the scorer is a gate, not a judge: `annotate --index --span-scorer` asks the dense index only about
the n-grams it passes, and keeps one only where the index also finds a name near it
(``steps.annotate``). Saved and loaded by ``artifacts.span_scorer``; fitted by
``steps.train_span_scorer``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

import numpy as np

from ontolink.recognition.ngrams import MAX_WORDS, candidate_spans
from ontolink.recognition.wordforms import fold, tokens
from ontolink.core.options import DEFAULT_SEED
from ontolink.training.options import TrainSpanScorerOptions

FEATURES = 1 << 16  # hashed features of each kind: a 1 MiB artifact (4x as many fit about 2x as slowly)


def _folded(text):
    return " ".join(fold(word) for word, _, _ in tokens(text))


class SpanScorer:
    """A fitted span scorer: ``scores(texts)`` in [0, 1], ``threshold`` chosen on held-out data."""

    def __init__(self, coefficients: np.ndarray, intercept: float, threshold: float):
        self.coefficients = np.asarray(coefficients, dtype=np.float64)
        self.intercept = float(intercept)
        self.threshold = float(threshold)
        self._vectorizers = _vectorizers()

    def scores(self, texts: Iterable[str]) -> np.ndarray:
        """Probability-like scores of ``texts``; each text's score depends on that text alone."""
        texts = [text.lower() for text in texts]
        if not texts:
            return np.zeros(0)
        matrix = _features(self._vectorizers, texts)
        return 1.0 / (1.0 + np.exp(-(matrix @ self.coefficients + self.intercept)))


def _vectorizers():
    from sklearn.feature_extraction.text import HashingVectorizer

    return (HashingVectorizer(analyzer="char_wb", ngram_range=(3, 5), n_features=FEATURES, alternate_sign=False,
                              norm="l2", lowercase=False),
            HashingVectorizer(analyzer="word", ngram_range=(1, 2), n_features=FEATURES, alternate_sign=False,
                              norm="l2", lowercase=False, token_pattern=r"[^\W_]+"))


def _features(vectorizers, texts):
    from scipy.sparse import hstack

    return hstack([vectorizer.transform(texts) for vectorizer in vectorizers]).tocsr()


def training_texts(names: Iterable[str], corpus: Iterable[str], max_words: int = MAX_WORDS,
                   negatives_per_name: float = TrainSpanScorerOptions.negatives_per_name,
                   seed: int = DEFAULT_SEED) -> tuple[list[str], list[str]]:
    """(positives, negatives): the distinct ``names`` with a plural of their last word added, and
    distinct word n-grams of the ``corpus`` texts that are no name once folded, at most
    ``negatives_per_name`` times as many as positives (drawn with ``seed``). The corpus is read until
    it has given ten times that many distinct n-grams (memory stays bounded on any corpus)."""
    positives = set()
    for name in names:
        name = " ".join(word for word, _, _ in tokens(name)).lower()
        if name:
            positives.add(name)
            if not name.endswith("s"):
                positives.add(name + "s")  # text names things in the plural; names are singular
    folded_names = {_folded(name) for name in positives}
    limit = int(len(positives) * negatives_per_name)
    negatives = set()
    for text in corpus:
        for start, end in candidate_spans(text, [False] * len(text), max_words):
            span = " ".join(word for word, _, _ in tokens(text[start:end])).lower()
            if span not in positives and _folded(span) not in folded_names:
                negatives.add(span)
        if len(negatives) >= 10 * limit:
            break
    positive_list, negative_list = sorted(positives), sorted(negatives)
    if len(negative_list) > limit:
        negative_list = sorted(random.Random(seed).sample(negative_list, limit))
    return positive_list, negative_list


def fit_span_scorer(positives: list[str], negatives: list[str], seed: int = DEFAULT_SEED, held_out: float = 0.1,
                    regularisation: float = TrainSpanScorerOptions.regularisation) -> tuple[SpanScorer, dict]:
    """Fit on ``positives`` and ``negatives`` (``training_texts``) less a held-out share of each, choose
    the threshold on that share; returns the scorer and a report (counts, held-out precision/recall)."""
    from sklearn.linear_model import LogisticRegression

    if not positives or not negatives:
        raise ValueError(f"a span scorer needs names and corpus n-grams: got {len(positives)} names and "
                         f"{len(negatives)} n-grams")
    rng = random.Random(seed)
    texts = [(text, 1) for text in positives] + [(text, 0) for text in negatives]
    held = [rng.random() < held_out for _ in texts]
    vectorizers = _vectorizers()
    train = [pair for pair, out in zip(texts, held) if not out]
    test = [pair for pair, out in zip(texts, held) if out]
    model = LogisticRegression(C=regularisation, solver="liblinear", max_iter=1000)
    model.fit(_features(vectorizers, [text for text, _ in train]), np.array([label for _, label in train]))
    scorer = SpanScorer(model.coef_[0], model.intercept_[0], 0.5)
    threshold, precision, recall = 0.5, 0.0, 0.0
    if test and any(label for _, label in test) and not all(label for _, label in test):
        scores = scorer.scores([text for text, _ in test])
        labels = np.array([label for _, label in test])
        order = np.argsort(-scores, kind="stable")
        hits = np.cumsum(labels[order])
        precisions = hits / np.arange(1, len(order) + 1)
        recalls = hits / labels.sum()
        f1 = np.where(precisions + recalls > 0, 2 * precisions * recalls / np.maximum(precisions + recalls, 1e-12), 0)
        best = int(np.argmax(f1))
        threshold, precision, recall = float(scores[order][best]), float(precisions[best]), float(recalls[best])
    scorer.threshold = threshold
    return scorer, {"positives": len(positives), "negatives": len(negatives), "held_out": len(test),
                    "threshold": round(threshold, 6), "held_out_precision": round(precision, 4),
                    "held_out_recall": round(recall, 4)}
