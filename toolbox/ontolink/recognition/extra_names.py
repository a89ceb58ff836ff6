"""Names from outside the ontology file for the matcher: Aliases records (`gen-aliases`, `filter`) or a
lexicon of the same shape, ``{"id": ..., "aliases": [...]}`` a line.

An ontology's own names rarely hold every phrasing a corpus uses ("ocular anomalies" for Abnormality of the
eye); aliases written by an LLM and kept by `filter`, or a lab's own lexicon, add them. They are looked for as
the entity's names are (any order, word forms, equivalent words), but the matcher learns nothing from them: its
word forms and equivalent words come from the ontology's own names, so a noisy alias file adds its own names
and no more.
"""

from ontolink.io import read_records
from ontolink.ontology.model import normalize
from ontolink.records import alias_record_validator


def read_extra_names(paths, ontology):
    """{entity id: [alias, ...]} of the Aliases records in ``paths``, in the order read.

    An alt_id or an obsolete id stands for the live entity it resolves to; an id that resolves to nothing is
    a bad line (``FILE:LINE:``), as is a record that is not an Aliases record. An alias that only repeats one
    of the entity's names (once folded) adds nothing and is left out.
    """
    extra = {}
    for path in paths:
        for record in read_records(path, validate=alias_record_validator(ontology)):
            for entity_id in ontology.resolve(record["id"]):
                known = extra.setdefault(entity_id, [])
                seen = {normalize(name) for name in ontology.names(ontology[entity_id]) + known}
                for alias in record.get("aliases") or ():
                    if normalize(alias) and normalize(alias) not in seen:
                        seen.add(normalize(alias))
                        known.append(alias)
    return {entity_id: aliases for entity_id, aliases in extra.items() if aliases}
