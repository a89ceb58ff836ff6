"""The candidates a reranker's held-out pairs are scored on: its index's top K of each pair, searched with the pair's
own string held out of the index when its gold entity has another name.

`make-pairs` pairs are exact matches: searched as they are, the index ranks each gold first (held-out R@1 1.000),
and no reranker could ever beat that start. With its own string held out a pair reads like a mention in other
words, as the retriever's held-out pairs do (ontolink.training.retriever.validation_scores).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ontolink.linking.linker import Linker
from ontolink.ontology import normalize
from ontolink.ranking.queries import rows_by_text


def held_out_candidates(held_out: list[dict[str, Any]], loaded_index: Any, top_k: int) -> list[list[dict[str, Any]]]:
    """Per held-out pair, its top-K candidate records (as the linker makes them), its own string held out."""
    linker = Linker(loaded_index, top_k=top_k)
    rows_of_text = rows_by_text(loaded_index)
    names_per_entity = np.bincount(loaded_index.entity_of_name, minlength=len(loaded_index.entity_ids))
    entity_of = {entity_id: row for row, entity_id in enumerate(loaded_index.entity_ids)}
    exclude = []
    for pair in held_out:
        own = tuple(rows_of_text.get(normalize(pair["mention"]), ()))
        gold = entity_of.get(pair["entity_id"])
        gold_own = sum(1 for row in own if loaded_index.entity_of_name[row] == gold)
        exclude.append(own if gold is not None and names_per_entity[gold] > gold_own else ())
    texts = [loaded_index.query_text(pair) for pair in held_out]
    return linker.candidate_lists(linker.search_rows(texts, exclude=exclude)) if held_out else []
