"""A fitted candidate ranker (`ontolink train ranker`): reorders a mention's retrieved candidates at link time.

The directory holds manifest.json (feature groups and columns, the prior it was fitted with, its training
queries and fit report) and ranker.safetensors (feature means and scales, logistic-regression weights).
It is tied to no ontology: its features are relative to each mention's candidates or read from the index,
so one ranker serves any index built by this version.
"""

from pathlib import Path

import numpy as np

from ontolink.core.errors import InputError
from ontolink.core.manifest import artifact_directory, library_versions, read_manifest
from ontolink.core.artifact_files import field, load_tensors
from ontolink.ranking import AUTO_PRIOR, FITTING_DEPTH
from ontolink.ranking.features import CandidateFeatures
from ontolink.ranking.groups import feature_columns
from ontolink.ranking.margin import top_margin
from ontolink.ranking.priors import load_prior
from ontolink.ranking.tables import ranker_tables

ARTIFACT = "ranker"
WEIGHTS_FILE = "ranker.safetensors"
# a ranked candidate's "matched_by" when the long form of an abbreviation defined in the document found it
FOUND_BY_LONG_FORM = "abbreviation"


def save_ranker(directory, weights, manifest, force=False):
    from safetensors.numpy import save_file

    manifest = {"artifact": ARTIFACT, **manifest, "files": [WEIGHTS_FILE],
                "versions": library_versions("scikit-learn", "abbreviations")}
    with artifact_directory(directory, manifest, force=force) as temporary:
        save_file(weights, str(temporary / WEIGHTS_FILE))
    return manifest


def resolve_prior(spec, loaded_index):
    """A prior spec for ``loaded_index``: 'auto' is HPO's annotation counts for an HPO index, else none."""
    if spec == AUTO_PRIOR:
        return "hpo" if loaded_index.manifest["ontology"].get("label") == "hpo" else "none"
    return spec


class Ranker:
    """Fitted weights plus, once bound to an index, the features they weigh."""

    def __init__(self, directory):
        self.directory = directory
        self.manifest = read_manifest(directory, ARTIFACT)
        weights = load_tensors(Path(directory) / WEIGHTS_FILE, {name: ("f", 1) for name in (
            "mean", "scale", "coefficients", "intercept")})
        if len(weights["intercept"]) != 1:
            raise InputError(f"{WEIGHTS_FILE}: 'intercept' must hold one number; refit it", directory)
        manifest_path = Path(directory) / "manifest.json"
        self.groups = field(self.manifest, manifest_path, "features", "groups", kind=list)
        self.columns = field(self.manifest, manifest_path, "features", "columns", kind=list)
        if any(len(weights.get(name, ())) != len(self.columns) for name in ("mean", "scale", "coefficients")):
            raise InputError(f"{WEIGHTS_FILE} does not match the {len(self.columns)} features of its manifest; "
                             "refit it", directory)
        self.mean, self.scale = weights["mean"], weights["scale"]
        self.coefficients, self.intercept = weights["coefficients"], float(weights["intercept"][0])
        # a gated ranker: a first pass on the features that run no encoder, the rest only where it is unsure
        self.gate = self.manifest["features"].get("gate")
        if self.gate is not None:
            self.gate_columns = feature_columns(self.gate["groups"])
            self.gate_weights = {name: weights.get(f"gate_{name}") for name in ("mean", "scale", "coefficients")}
            if any(value is None or len(value) != len(self.gate_columns) for value in self.gate_weights.values()):
                raise InputError(f"{WEIGHTS_FILE} does not match the gate of its manifest; refit it", directory)
            # the groups the gate leaves out, and the ranker's columns as positions in [gate columns, theirs]
            self._rest_groups = [group for group in self.groups if group not in self.gate["groups"]]
            spliced_columns = self.gate_columns + feature_columns(self._rest_groups)
            self._splice_order = [spliced_columns.index(column) for column in self.columns]
        self.features = None
        self._bound = None
        self.refined = self.ranked = 0  # records scored, and those of them the gate passed on to the rest

    def bound_to(self, loaded_index, prior, top_k):
        return self._bound == (id(loaded_index), prior, top_k)

    def bind(self, loaded_index, prior=AUTO_PRIOR, top_k=FITTING_DEPTH):
        """Compute features on ``loaded_index``; ``prior``: 'auto', 'hpo', 'none' or a file (priors.py)."""
        if feature_columns(self.groups) != self.columns:
            raise InputError("was fitted with features this version computes differently; refit it", self.directory)
        counts = rows = None
        if "prior" in self.groups and prior == AUTO_PRIOR:
            # the prior `auto` resolves to, read from the index's tables (parsing phenotype.hpoa cost 0.6 CPU-s)
            rows = ranker_tables(loaded_index).prior
        elif "prior" in self.groups:
            counts = load_prior(resolve_prior(prior, loaded_index))
        # what the groups recorded when fitted (second_encoder: the encoder) goes back to them as options
        recorded = {key: value for key, value in self.manifest["features"].items()
                    if key not in ("groups", "columns", "gate")}
        self.features = CandidateFeatures(loaded_index, self.groups, prior=counts, prior_rows=rows, top_k=top_k,
                                          **recorded)
        self._bound = (id(loaded_index), prior, top_k)
        return self

    def scores(self, matrix):
        return ((matrix - self.mean) / self.scale) @ self.coefficients + self.intercept

    def gate_scores(self, matrix):
        weights = self.gate_weights
        return ((matrix - weights["mean"]) / weights["scale"]) @ weights["coefficients"]

    def scored(self, records):
        """Per record: (its features as ``CandidateFeatures`` gives them, their scores, their columns). A gated
        ranker scores every record by its gate and computes the rest for those whose top-1 margin is small."""
        self.ranked += len(records)
        if self.gate is None:
            self.refined += len(records)
            return [(found, self.scores(found[2]), self.columns) for found in self.features(records)]

        result = []
        for found in self.features(records, groups=self.gate["groups"]):
            result.append((found, self.gate_scores(found[2]), self.gate_columns))
        unsure = [position for position, (_, scores, _) in enumerate(result)
                  if top_margin(scores) <= self.gate["margin"]]
        self.refined += len(unsure)
        # only the groups the gate left out are computed for the unsure records (the search is memoised, so their
        # candidates are the gate's), and spliced into the gate's columns in the ranker's order
        spliced = {}  # records that share one features object (a repeated mention) share the spliced one too
        rest = self.features([records[position] for position in unsure], groups=self._rest_groups)
        for position, extra in zip(unsure, rest):
            found = result[position][0]
            if id(found) not in spliced:
                # C order, as the ungated ranker's: the product's sums then run in the same order, to the last bit
                matrix = np.ascontiguousarray(np.concatenate([found[2], extra[2]], axis=1)[:, self._splice_order])
                spliced[id(found)] = found._replace(features=matrix)
            result[position] = (spliced[id(found)], self.scores(spliced[id(found)][2]), self.columns)
        return result

    def rank(self, records, with_features=False):
        """Each record with "candidates" ordered by the ranker: "score" is its probability that the candidate is
        the answer, "retriever_score" the retriever's, "matched_name" and "matched_kind" the name the retriever
        found it by (as the linker's candidates say), "matched_by" the index method, or ``FOUND_BY_LONG_FORM``
        where the long form of the mention, defined in its document, found it; ``with_features`` adds each
        candidate's feature values (under a gate, only the gate's for the records it was sure of)."""
        index = self.features.index
        names, kinds, method = index.names, index.name_kinds, index.method
        entity_ids, entity_names = index.entity_ids, index.entity_names
        scored = self.scored(records)
        # records whose features are one object (a repeated mention) share one candidate list
        first = {}
        for found, scores, columns in scored:
            first.setdefault(id(found), (found, scores, columns))
        distinct = list(first.values())
        # every distinct record's candidates ordered at once, end to end: per record, a dozen array operations on
        # ten values were most of a ranked link's own time at thousands of new mentions a second
        counts = [len(found[0]) for found, _, _ in distinct]
        bounds = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64).tolist()
        fields: tuple[list, ...] = ([],) * 5
        if bounds[-1]:
            entities, retrieved, name_rows, by_long_form = (np.concatenate([found[field] for found, _, _ in distinct])
                                                            for field in (0, 1, 3, 4))
            probability = 1.0 / (1.0 + np.exp(-np.concatenate([scores for _, scores, _ in distinct])))
            # by record, then by probability; a stable sort: ties keep the retriever's order
            order = np.lexsort((-probability, np.repeat(np.arange(len(distinct)), counts)))
            # rounded as arrays, as the linker rounds its scores (per value in Python it was a third of the
            # ranker's time)
            fields = (entities[order].tolist(), np.round(probability[order].astype(np.float64), 6).tolist(),
                      np.round(retrieved[order].astype(np.float64), 6).tolist(), name_rows[order].tolist(),
                      by_long_form[order].tolist())
        ranked = {}
        for number, (found, _, columns) in enumerate(distinct):
            start, end = bounds[number], bounds[number + 1]
            rounded = zip(*(values[start:end] for values in fields)) if end > start else ()
            # one dict display each, the index's tables looked up once (a merged optional key cost a dict more
            # per candidate: the largest Python cost of a ranked link of new mentions)
            if kinds is not None:
                candidates = [{"id": entity_ids[entity], "name": entity_names[entity], "score": score,
                               "retriever_score": retriever_score, "matched_name": names[row],
                               "matched_kind": kinds[row], "matched_by": FOUND_BY_LONG_FORM if long_form else method}
                              for entity, score, retriever_score, row, long_form in rounded]
            else:
                candidates = [{"id": entity_ids[entity], "name": entity_names[entity], "score": score,
                               "retriever_score": retriever_score, "matched_name": names[row],
                               "matched_by": FOUND_BY_LONG_FORM if long_form else method}
                              for entity, score, retriever_score, row, long_form in rounded]
            if with_features and end > start:
                mine = order[start:end] - start
                for candidate, values in zip(candidates, np.round(found[2][mine].astype(np.float64), 4).tolist()):
                    candidate["features"] = dict(zip(columns, values))
            ranked[id(found)] = candidates
        for record, (found, _, _) in zip(records, scored):
            yield {**record, "candidates": ranked[id(found)]}
