"""`ontolink filter`: drop generated aliases that drift to a neighbour (docs/methods.md: the drift filter).

For alias a of entity e: s_anchor = cos(n(e), a), s_drift = max over e' in
N+(e) (or N(e)) of cos(n(e'), a). a is kept only if s_anchor >= s_drift and
s_anchor >= tau. Every decision is kept in the output for auditing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ontolink.aliases.options import FilterOptions
from ontolink.core.errors import InputError
from ontolink.core.io import record_batches, ReadStats, RecordWriter, display_name, read_records, warn
from ontolink.core.progress import counting
from ontolink.core.records import alias_record_validator
from ontolink.encoders import load_encoder

if TYPE_CHECKING:
    from ontolink.encoders.base import Encoder
    from ontolink.ontology.model import Ontology

DEFAULT_TAU = FilterOptions.tau


class FilterStats:
    def __init__(self):
        self.entities = 0
        self.aliases = 0
        self.kept = 0
        self.drifted = 0
        self.below_tau = 0

    def summary(self):
        return (f"{self.entities} entities, {self.aliases} aliases: {self.kept} kept, {self.drifted} drifted to a "
                f"neighbour, {self.below_tau} below tau")


def _decide(alias, anchor, drift, drift_to, tau):
    kept = anchor >= drift and anchor >= tau
    return {"alias": alias, "s_anchor": round(float(anchor), 6),
            "s_drift": None if drift_to is None else round(float(drift), 6),
            "drift_to": drift_to, "kept": bool(kept)}


def filter_aliases(records: Iterable[dict[str, Any]], ontology: Ontology, encoder: Encoder | Callable[[], Encoder],
                   tau: float = DEFAULT_TAU, with_siblings: bool = True, batch_size: int = FilterOptions.batch_size,
                   stats: Any = None, source: str = "<stdin>") -> Iterator[dict[str, Any]]:
    """Yield each Aliases record with ``aliases`` = kept ones and ``decisions`` for all. ``encoder``: an Encoder,
    or a function that loads one, called when the first record has arrived (so a pipe's GPU holds the step
    before's model first)."""
    stats = stats if stats is not None else FilterStats()
    for batch in record_batches(records, batch_size):
        if not hasattr(encoder, "encode"):
            encoder = encoder()
        plans = []
        texts = []
        for record in batch:
            entity_id = record["id"]
            if entity_id not in ontology:
                raise InputError(f"entity {entity_id!r} is not in ontology {ontology.label}", source)
            neighbours = ontology.neighbours(entity_id, with_siblings=with_siblings)
            aliases = list(dict.fromkeys(alias for alias in record.get("aliases") or [] if alias.strip()))
            plans.append((record, entity_id, neighbours, aliases))
            texts += [ontology[entity_id].name] + [ontology[n].name for n in neighbours] + aliases
        vectors = dict(zip(texts, encoder.encode(texts))) if texts else {}
        for record, entity_id, neighbours, aliases in plans:
            stats.entities += 1
            decisions = []
            if aliases:
                alias_vectors = np.stack([vectors[alias] for alias in aliases])
                anchors = alias_vectors @ vectors[ontology[entity_id].name]
                if neighbours:
                    neighbour_vectors = np.stack([vectors[ontology[n].name] for n in neighbours])
                    similarities = alias_vectors @ neighbour_vectors.T
                    best = similarities.argmax(axis=1)
                    drifts = similarities[np.arange(len(aliases)), best]
                    targets = [neighbours[column] for column in best]
                else:
                    drifts, targets = np.full(len(aliases), -np.inf), [None] * len(aliases)
                for alias, anchor, drift, target in zip(aliases, anchors, drifts, targets):
                    decision = _decide(alias, anchor, drift, target, tau)
                    decisions.append(decision)
                    stats.aliases += 1
                    if decision["kept"]:
                        stats.kept += 1
                    elif anchor < drift:
                        stats.drifted += 1
                    else:
                        stats.below_tau += 1
            yield {**record, "aliases": [d["alias"] for d in decisions if d["kept"]], "decisions": decisions}


def filter_aliases_files(options: FilterOptions) -> FilterStats:
    """`ontolink filter`: read Aliases records from ``options.input_path``, write the filtered records to
    ``options.output_path`` and a one-line summary to stderr; return the counts."""
    loaded = options.ontology.load()
    stats, read_stats = FilterStats(), ReadStats()
    records = read_records(options.input_path, validate=alias_record_validator(loaded, resolved=False),
                           skip_invalid=options.skip_invalid, stats=read_stats, check_duplicate_ids=True)

    def encoder() -> Encoder:
        return load_encoder(options.model, device=options.device, precision=options.precision)

    with RecordWriter(options.output_path) as writer:
        # the encoder loads when the first record arrives (in a pipe: after gen-aliases has its GPU share)
        filtered = filter_aliases(records, loaded, encoder, tau=options.tau,
                                  with_siblings=options.neighbours == "n-plus", batch_size=options.batch_size,
                                  stats=stats, source=display_name(options.input_path))
        writer.write_all(counting(filtered, "filter", "entity"), flush_every=options.batch_size)
    warn(f"filter: {stats.summary()}")
    return stats
