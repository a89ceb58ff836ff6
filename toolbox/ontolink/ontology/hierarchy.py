"""Where a predicted entity sits relative to the gold one in the is_a graph.

Two entities are joined through their closest common ancestor (an entity counts as its own
ancestor at 0 steps): ``up`` is the number of is_a steps from gold to it, ``down`` from it to the
prediction. That gives every class an error can have:

- ``too-general``: the prediction is an ancestor of gold (down = 0), ``up`` steps above it;
- ``too-specific``: a descendant (up = 0), ``down`` steps below;
- ``sibling``: they share a parent (up = down = 1);
- ``related``: a common ancestor within ``within`` steps in all (up + down);
- ``unrelated``: none that close, no common ancestor, or an id outside the ontology.
"""

import math
from dataclasses import dataclass, field

RELATIONS = ("too-general", "too-specific", "sibling", "related", "unrelated")
DEFAULT_WITHIN = 4


@dataclass(frozen=True)
class Relation:
    """The class of a prediction against gold, the steps up and down through their closest common
    ancestor (None when there is none), and the path gold ... ancestor ... prediction."""

    kind: str
    up: int | None = None
    down: int | None = None
    path: tuple = field(default=())

    @property
    def steps(self):
        return None if self.up is None else self.up + self.down

    def label(self):
        """"too-general (2 steps)", "sibling", "unrelated", ..."""
        if self.kind in ("too-general", "too-specific", "related"):
            return f"{self.kind} ({self.steps} step{'s' if self.steps != 1 else ''})"
        return self.kind


class Hierarchy:
    """is_a relations of one loaded ontology, with each entity's ancestors remembered once computed."""

    def __init__(self, ontology, within=DEFAULT_WITHIN):
        self.ontology = ontology
        self.within = within
        self._ancestors = {}

    def ancestors(self, entity_id):
        """{ancestor id: (steps up, the next entity on the way back down to ``entity_id``)}, itself
        included at 0 steps; the shortest way up, the first parent listed on ties."""
        if entity_id in self._ancestors:
            return self._ancestors[entity_id]
        found = {entity_id: (0, None)}
        frontier = [entity_id]
        steps = 0
        while frontier:
            steps += 1
            following = []
            for current in frontier:
                for parent in self.ontology[current].parents:
                    if parent in self.ontology and parent not in found:
                        found[parent] = (steps, current)
                        following.append(parent)
            frontier = following
        self._ancestors[entity_id] = found
        return found

    def _path_up(self, entity_id, ancestor):
        """entity_id, its parent, ..., ancestor."""
        ancestors = self.ancestors(entity_id)
        path = [ancestor]
        while path[-1] != entity_id:
            path.append(ancestors[path[-1]][1])
        return path[::-1]

    def relation(self, gold_id, predicted_id):
        """The Relation of ``predicted_id`` to ``gold_id`` (both live ids of the ontology, or unrelated)."""
        if gold_id not in self.ontology or predicted_id not in self.ontology:
            return Relation("unrelated")
        gold_up, predicted_up = self.ancestors(gold_id), self.ancestors(predicted_id)
        common = [(gold_up[a][0] + predicted_up[a][0], gold_up[a][0], a) for a in gold_up if a in predicted_up]
        if not common:
            return Relation("unrelated")
        _, up, ancestor = min(common)  # fewest steps, then fewest up, then the id: deterministic
        down = predicted_up[ancestor][0]
        path = tuple(self._path_up(gold_id, ancestor) + self._path_up(predicted_id, ancestor)[::-1][1:])
        if down == 0:
            kind = "too-general"
        elif up == 0:
            kind = "too-specific"
        elif up == down == 1:
            kind = "sibling"
        elif up + down <= self.within:
            kind = "related"
        else:
            kind = "unrelated"
        return Relation(kind, up, down, path)

    def closest(self, gold_ids, predicted_id):
        """The closest Relation of ``predicted_id`` to any of several gold ids (a mention may have more)."""
        relations = [self.relation(gold_id, predicted_id) for gold_id in gold_ids] or [Relation("unrelated")]
        return min(relations, key=lambda relation: (math.inf if relation.steps is None else relation.steps,
                                                    RELATIONS.index(relation.kind)))
