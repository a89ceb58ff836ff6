"""The documents a multi-vector model scores: one per name (name-based KB) or one per entity.

A name shared by several entities would make them indistinguishable, so each
occurrence is expanded with a distinguishing term (docs/multivector.md): a parent's
name, else the start of the definition, else the id, e.g. "conorenal
syndrome (short rib-polydactyly syndrome)". Every document text is unique.
"""

from collections import defaultdict

from ontolink.ontology.model import normalize

KB_KINDS = ("name", "entity")
DEFINITION_WORDS = 8


def _distinguishing_terms(entity, ontology):
    for parent in entity.parents:
        if parent in ontology:
            yield ontology[parent].name
    words = entity.definition.split()[:DEFINITION_WORDS]
    if words:
        yield " ".join(words).rstrip(".,;:")
    yield entity.id


def name_documents(ontology):
    """(texts, entity row of each text, number of names expanded): every name unique."""
    entities = list(ontology)
    rows = [(text, row) for row, entity in enumerate(entities) for text in ontology.names(entity)]
    taken = {normalize(text) for text, _ in rows}
    by_key = defaultdict(list)
    for position, (text, _) in enumerate(rows):
        by_key[normalize(text)].append(position)
    expanded = 0
    for positions in by_key.values():
        if len({rows[position][1] for position in positions}) < 2:
            continue
        for position in positions:
            text, row = rows[position]
            for term in _distinguishing_terms(entities[row], ontology):
                candidate = f"{text} ({term})"
                if normalize(candidate) not in taken:
                    break
            taken.add(normalize(candidate))
            rows[position] = (candidate, row)
            expanded += 1
    return [text for text, _ in rows], [row for _, row in rows], expanded


def entity_documents(ontology):
    """(texts, entity rows, 0): one document per entity, its names joined (entity-based KB)."""
    texts = [" ; ".join(ontology.names(entity)) for entity in ontology]
    return texts, list(range(len(texts))), 0


def kb_documents(ontology, kind="name"):
    return {"name": name_documents, "entity": entity_documents}[kind](ontology)
