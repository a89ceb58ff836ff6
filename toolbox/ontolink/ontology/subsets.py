"""Entity subsets: the entities `annotate` looks for and `link` returns, chosen by a file of ids
(``--entities FILE``) and by the values of an entity field (``--where type=Disease``), on top of
``annotate --roots``.

An ontology without a hierarchy (a table of names) cannot be cut by ``--roots``; its ``type`` column,
or a list of the ids wanted, can. Both choose from the same ids: `annotate` from the parsed
ontology, `link` from the index (which keeps each entity's types), so neither needs the other.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ontolink.core.errors import InputError, UsageError
from ontolink.core.io import open_input, plural, read_records, warn

# the entity fields --where reads: the type field (a CSV column or JSONL field mapped with --field type=...)
WHERE_FIELDS = ("type",)


def parse_where(texts: Sequence[str]) -> dict[str, frozenset[str]]:
    """``--where FIELD=VALUE[,VALUE...]`` (repeatable) -> {field: values}: an entity is kept when, for each
    field named, one of its values is among those given (a field named twice: either's values)."""
    conditions: dict[str, set[str]] = {}
    for text in texts:
        field, equals, values = text.partition("=")
        field = field.strip()
        wanted = {value.strip() for value in values.split(",") if value.strip()}
        if not equals or not field or not wanted:
            raise UsageError(f"--where takes FIELD=VALUE[,VALUE...], got {text!r}")
        if field not in WHERE_FIELDS:
            raise UsageError(f"--where: {field!r} is not a field it reads ({', '.join(WHERE_FIELDS)}: map the "
                             f"ontology's own column or field to it with --field type=NAME when indexing)")
        conditions.setdefault(field, set()).update(wanted)
    return {field: frozenset(values) for field, values in conditions.items()}


def read_entity_ids(path: str | Path) -> list[str]:
    """The ids of an ``--entities`` file: one a line (the first tab-separated column, so an id/count TSV
    serves; blank lines and '#' comments skipped), or, for .jsonl, each record's "id" (`select-entities`
    output)."""
    name = str(path)
    if not Path(name).is_file():
        raise InputError("no such file of entity ids", name)
    if name.lower().removesuffix(".gz").endswith(".jsonl"):
        def has_id(record: dict) -> None:
            if not isinstance(record.get("id"), str) or not record["id"].strip():
                raise ValueError("an --entities record needs an \"id\" string")

        return [record["id"].strip() for record in read_records(name, validate=has_id)]
    ids = []
    with open_input(name) as handle:
        for line in handle:
            entity_id = line.split("\t", 1)[0].strip()
            if entity_id and not entity_id.startswith("#"):
                ids.append(entity_id)
    return ids


@dataclass(frozen=True)
class EntitySubset:
    """What ``--entities`` and ``--where`` ask for; ``choose`` applies it to a set of entities."""

    entities_path: str | None = None
    where: tuple[str, ...] = ()
    entity_ids: tuple[str, ...] | None = None  # the ids themselves (the Python API), as a file would list them

    def __bool__(self) -> bool:
        return bool(self.entities_path or self.where or self.entity_ids is not None)

    def describe(self) -> str:
        """For messages and summaries: "--entities FILE --where type=Disease"."""
        parts = [f"--entities {self.entities_path}"] if self.entities_path else []
        parts += [f"entities ({len(self.entity_ids)} ids)"] if self.entity_ids is not None else []
        return " ".join(parts + [f"--where {condition}" for condition in self.where])

    def choose(self, ids: Sequence[str], types: Sequence[Sequence[str]] | None, source: str) -> set[str] | None:
        """The ids of ``ids`` (each with its ``types``, None when the source has none) that the subset keeps;
        None when nothing is asked. An id of the file that ``ids`` lacks is counted in a warning; a subset
        that keeps nothing is an error, as is --where type=... on entities without types."""
        if not self:
            return None
        kept: set[str] = set(ids)
        for listed, named in ((read_entity_ids(self.entities_path) if self.entities_path else None,
                               f"--entities {self.entities_path}"), (self.entity_ids, "entities")):
            if listed is None:
                continue
            unknown = [entity_id for entity_id in dict.fromkeys(listed) if entity_id not in kept]
            if unknown:
                warn(f"{named}: {plural(len(unknown), 'id')} not in {source} (e.g. {', '.join(unknown[:3])}); "
                     "left out")
            kept &= set(listed)
        conditions = parse_where(self.where)
        if "type" in conditions:
            if types is None or not any(types):
                raise UsageError(f"--where type=...: the entities of {source} have no type (give the ontology's "
                                 "type column or field with --field type=NAME; an index of it is built again)")
            wanted = conditions["type"]
            kept &= {entity_id for entity_id, own in zip(ids, types) if wanted.intersection(own)}
        if not kept:
            raise UsageError(f"{self.describe()} keeps no entity of {source}{_known_types(types)}")
        return kept


def _known_types(types: Sequence[Sequence[str]] | None, shown: int = 12) -> str:
    """" (its types: Chemical, Disease, ...)", for a --where that kept nothing; "" when there are none."""
    known = sorted({kind for own in types or () for kind in own})
    if not known:
        return ""
    more = f", ... ({len(known):,} in all)" if len(known) > shown else ""
    return f" (its types: {', '.join(known[:shown])}{more})"


def type_summary(entities: Iterable, shown: int = 6) -> str:
    """"; types (--where type=...): Disease 1,112, Gene 1,498, ..." (the most common first) for `index`'s summary
    line, so a user sees what --where can ask; "" for entities without types."""
    counts = Counter(kind for entity in entities for kind in entity.types)
    if not counts:
        return ""
    common = counts.most_common(shown)
    more = f" and {len(counts) - shown:,} more" if len(counts) > shown else ""
    return f"; types (--where type=...): {', '.join(f'{kind} {count:,}' for kind, count in common)}{more}"


def types_of(entities: Iterable) -> list[list[str]]:
    """Each entity's types, in order (Entity objects)."""
    return [list(entity.types) for entity in entities]
