"""Names from outside the ontology file for the matcher: Aliases records (`gen-aliases`, `filter`) or a
lexicon of the same shape, ``{"id": ..., "aliases": [...]}`` a line.

An ontology's names rarely hold every phrasing a corpus uses ("ocular anomalies" for Abnormality of the
eye); aliases written by an LLM and kept by `filter`, or a lab's own lexicon, add them. They are looked for as
the entity's names are (any order, word forms, equivalent words), but the matcher learns nothing from them: its
word forms, equivalent words and optional modifiers come from the ontology's own names, so a noisy alias file
adds its own names and no more.
"""

from ontolink.core.io import plural, read_records, warn
from ontolink.ontology.model import normalize
from ontolink.core.records import alias_record_validator


def read_extra_names(paths, ontology):
    """{entity id: [alias, ...]} of the Aliases records in ``paths``, in the order read.

    An alt_id or an obsolete id stands for the live entity it resolves to; an id that resolves to nothing is
    a bad line (``FILE:LINE:``), as is a record that is not an Aliases record. An alias that only repeats one
    of the entity's names (once folded) adds nothing and is left out; one that is another entity's name is
    left out and counted (a warning): the ontology's names are not taken from their entities.
    """
    owners = {}  # folded name -> the entities it names
    for entity in ontology:
        for name in ontology.names(entity):
            owners.setdefault(normalize(name), set()).add(entity.id)
    extra, seen = {}, {}
    for path in paths:
        taken = []  # (alias, its entity, the entity the ontology gives that name)
        for record in read_records(path, validate=alias_record_validator(ontology)):
            for entity_id in ontology.resolve(record["id"]):
                known = seen.setdefault(entity_id, set())
                for alias in record.get("aliases") or ():
                    key = normalize(alias)
                    if not key or key in known:
                        continue
                    known.add(key)
                    others = owners.get(key, set()) - {entity_id}
                    if others:
                        taken.append((alias, entity_id, min(others)))
                    elif entity_id not in owners.get(key, ()):
                        extra.setdefault(entity_id, []).append(alias)
        if taken:
            alias, entity_id, other = taken[0]
            warn(f"{path}: {plural(len(taken), 'alias', 'aliases')} left out, each another entity's name "
                 f"(the first: {alias!r} for {entity_id} is a name of {other})")
    return extra
