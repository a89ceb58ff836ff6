"""A fitted span scorer (`ontolink train span-scorer`): which word n-grams `annotate --index` asks the index about.

The directory holds manifest.json (features, threshold, what it was fitted on and how it scored on its held-out
share) and span_scorer.safetensors (the logistic regression's weights over the hashed features).
"""

from pathlib import Path

import numpy as np

from ontolink.core.errors import InputError
from ontolink.core.manifest import artifact_directory, library_versions, read_manifest
from ontolink.recognition.span_scorer import FEATURES, SpanScorer
from ontolink.core.artifact_files import field, load_tensors

ARTIFACT = "span-scorer"
WEIGHTS_FILE = "span_scorer.safetensors"
FEATURE_SPACE = {"character_ngrams": [3, 5], "word_ngrams": [1, 2], "hashed_features": FEATURES}


def save_span_scorer(directory, scorer: SpanScorer, manifest, force=False):
    from safetensors.numpy import save_file

    manifest = {"artifact": ARTIFACT, **manifest, "features": FEATURE_SPACE, "threshold": scorer.threshold,
                "files": [WEIGHTS_FILE], "versions": library_versions("scikit-learn")}
    with artifact_directory(directory, manifest, force=force) as temporary:
        save_file({"coefficients": scorer.coefficients.astype(np.float64),
                   "intercept": np.array([scorer.intercept], dtype=np.float64)}, str(temporary / WEIGHTS_FILE))
    return manifest


def load_span_scorer(directory) -> SpanScorer:
    """The scorer saved in ``directory``, its weights and threshold checked against its manifest."""
    manifest = read_manifest(directory, ARTIFACT, required_files=[WEIGHTS_FILE])
    manifest_path = Path(directory) / "manifest.json"
    if field(manifest, manifest_path, "features", kind=dict) != FEATURE_SPACE:
        raise InputError(f"'features' is not the feature space of this version ({FEATURE_SPACE}); refit it",
                         manifest_path)
    threshold = field(manifest, manifest_path, "threshold", kind=(int, float))
    if not np.isfinite(threshold):
        raise InputError("'threshold' must be a finite number; refit it", manifest_path)
    weights = load_tensors(Path(directory) / WEIGHTS_FILE, {"coefficients": ("f", 1), "intercept": ("f", 1)})
    if len(weights["coefficients"]) != 2 * FEATURES or len(weights["intercept"]) != 1:
        raise InputError(f"{WEIGHTS_FILE} holds {len(weights['coefficients'])} weights, not the {2 * FEATURES} of "
                         "its features; refit it", directory)
    if not (np.isfinite(weights["coefficients"]).all() and np.isfinite(weights["intercept"]).all()):
        raise InputError(f"{WEIGHTS_FILE} holds weights that are not finite numbers; refit it", directory)
    return SpanScorer(weights["coefficients"], float(weights["intercept"][0]), float(threshold))
