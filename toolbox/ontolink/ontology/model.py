"""The in-memory ontology: live entities, their graph, and id resolution."""

from dataclasses import dataclass, field

DEFAULT_SYNONYM_SCOPES = ("EXACT", "RELATED")
ALL_SYNONYM_SCOPES = ("EXACT", "RELATED", "NARROW", "BROAD")


def normalize(text):
    """The normalisation every exact match uses: lowercase, trim, collapse whitespace."""
    return " ".join(text.lower().split())


@dataclass
class Entity:
    id: str
    name: str
    definition: str = ""
    synonyms: list = field(default_factory=list)  # [(text, scope)]
    parents: list = field(default_factory=list)
    alt_ids: list = field(default_factory=list)
    types: list = field(default_factory=list)  # the ontology's type field (a CSV column, scispaCy's types): [str]

    @property
    def type(self):
        """The entity's type (its first, when it has several), or None: what `annotate` writes as a mention's."""
        return self.types[0] if self.types else None

    def to_record(self, synonym_scopes=ALL_SYNONYM_SCOPES):
        record = {
            "id": self.id,
            "name": self.name,
            "definition": self.definition,
            "synonyms": [text for text, scope in self.synonyms if scope in synonym_scopes],
            "parents": list(self.parents),
            "alt_ids": list(self.alt_ids),
        }
        if self.types:
            record["type"] = self.types[0] if len(self.types) == 1 else list(self.types)
        return record


class Ontology:
    """Live (non-obsolete) entities plus what resolves retired ids.

    ``redirects`` maps an alt_id or an obsolete id to the live ids it stands
    for (its primary term, or its replaced_by terms).
    """

    def __init__(self, label, source, content_hash, entities, redirects=None, synonym_scopes=DEFAULT_SYNONYM_SCOPES):
        self.label = label
        self.source = source
        self.content_hash = content_hash
        self.entities = {entity.id: entity for entity in entities}
        self.redirects = dict(redirects or {})
        self.synonym_scopes = tuple(synonym_scopes)
        self._children = None
        # how the file's fields or columns were read (--field), when they were mapped: the same file read
        # otherwise is other entities, which what is cached by content_hash must tell apart (load_ontology sets it)
        self.fields: dict[str, str] | None = None

    def __len__(self):
        return len(self.entities)

    def __contains__(self, entity_id):
        return entity_id in self.entities

    def __getitem__(self, entity_id):
        return self.entities[entity_id]

    def __iter__(self):
        return iter(self.entities.values())

    def describe(self):
        """Identity for artifact manifests: an index is tied to this exact content."""
        return {"label": self.label, "source": str(self.source), "sha256": self.content_hash,
                "entities": len(self.entities)}

    def names(self, entity):
        """Name first, then synonyms of the chosen scopes, without normalised duplicates."""
        return [text for text, _ in self.named(entity)]

    def named(self, entity):
        """``names`` with each name's kind: "name" for the preferred name, else the synonym's scope."""
        seen = set()
        result = []
        for text, kind in [(entity.name, "name")] + [(text, scope) for text, scope in entity.synonyms
                                                      if scope in self.synonym_scopes]:
            key = normalize(text)
            if key and key not in seen:
                seen.add(key)
                result.append((text, kind))
        return result

    def depths(self):
        """Entity id -> shortest is_a distance to a root (an entity without live parents): 0 at the roots."""
        depth = {entity_id: 0 for entity_id, entity in self.entities.items()
                 if not any(parent in self.entities for parent in entity.parents)}
        frontier = list(depth)
        while frontier:
            following = []
            for entity_id in frontier:
                for child in self.children[entity_id]:
                    if child not in depth:
                        depth[child] = depth[entity_id] + 1
                        following.append(child)
            frontier = following
        return depth

    def resolve(self, entity_id):
        """The live ids an id stands for: itself, or via alt_id / replaced_by."""
        if entity_id in self.entities:
            return [entity_id]
        return list(self.redirects.get(entity_id, ()))

    @property
    def children(self):
        if self._children is None:
            children = {entity_id: [] for entity_id in self.entities}
            for entity in self.entities.values():
                for parent in entity.parents:
                    children[parent].append(entity.id)
            self._children = children
        return self._children

    def siblings(self, entity_id):
        entity = self.entities[entity_id]
        result = []
        seen = {entity_id}
        for parent in entity.parents:
            for child in self.children[parent]:
                if child not in seen:
                    seen.add(child)
                    result.append(child)
        return result

    def neighbours(self, entity_id, with_siblings=True):
        """N(e) = parents ∪ children; N+(e) adds siblings (the drift filter's neighbourhoods, docs/methods.md)."""
        entity = self.entities[entity_id]
        result = list(dict.fromkeys(entity.parents + self.children[entity_id]))
        if with_siblings:
            result += [s for s in self.siblings(entity_id) if s not in result]
        return result
