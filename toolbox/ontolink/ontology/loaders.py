"""Parsers from ontology files to plain term dicts.

A term dict is JSON-ready: {id, name, definition, synonyms: [[text, scope]],
parents, alt_ids, obsolete, replaced_by}. Obsolete terms are kept here so that
their ids can be resolved later.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
import zlib
from pathlib import Path
from typing import Any

from ontolink.core.errors import InputError
from ontolink.core.file_formats import FileFormat, FormatRegistry
from ontolink.core.io import guarded_path, open_input, open_input_lines, read_records


class OntologyFormat(FileFormat):
    """An ontology file format: ``load(path)`` gives its terms as term dicts (see ``term_dict``).

    A format whose records name their fields (``takes_fields``) also takes ``load(path, fields=...)``:
    a mapping from Entity fields to the file's own field names (``--field``)."""

    takes_fields: bool = False

    def load(self, path: str | Path) -> list[dict[str, Any]]:
        raise NotImplementedError


ONTOLOGY_FORMATS: FormatRegistry[OntologyFormat] = FormatRegistry("ontology format", "ontology-format",
                                                                   "ontolink.ontology", OntologyFormat)


def format_names() -> list[str]:
    """The registered ontology formats (what --ontology-format accepts)."""
    return ONTOLOGY_FORMATS.names()


def detect_format(path: str | Path) -> str:
    """Tell the format from the extension, peeking into files whose extension several formats use (.json)."""
    fmt = ONTOLOGY_FORMATS.guess(path)
    if fmt is None:
        suffixes = sorted({suffix for name in format_names() for suffix in ONTOLOGY_FORMATS.get(name).suffixes})
        raise InputError(
            f"cannot tell the ontology format from the name (expected {', '.join(suffixes)}); "
            f"pass --ontology-format one of {', '.join(format_names())}",
            path,
        )
    return fmt


def load_terms(path: str | Path, fmt: str, fields: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The term dicts of the ontology file ``path`` in the registered format ``fmt`` (``fields``: see
    ``parse_fields``)."""
    loader = ONTOLOGY_FORMATS.get(fmt)()
    if not fields:
        return loader.load(path)
    if not loader.takes_fields:
        takers = [name for name in format_names() if ONTOLOGY_FORMATS.get(name).takes_fields]
        raise InputError(f"--field applies to formats whose records name their fields ({', '.join(takers)}), "
                         f"not to {fmt}", path)
    return loader.load(path, fields=fields)  # type: ignore[call-arg]  # a takes_fields format's load takes them


# Entity JSONL fields and what each holds (documented in `index --help` and docs/ontologies.md)
ENTITY_FIELDS = ("id", "name", "definition", "synonyms", "parents", "alt_ids", "obsolete", "replaced_by", "type")
# Entity fields that hold lists: in a CSV/TSV cell, values joined by the list separator
LIST_FIELDS = ("synonyms", "parents", "alt_ids", "replaced_by", "type")
# --field's one entry that is not an Entity field: the separator of a CSV/TSV cell's list (a word for the
# characters --field's own syntax or a shell makes awkward to write)
SEPARATOR = "separator"
SEPARATOR_WORDS = {"comma": ",", "semicolon": ";", "space": " ", "tab": "\t", "pipe": "|"}


def parse_fields(text: str | None) -> dict[str, str]:
    """``--field``: "id=concept_id,name=canonical_name,synonyms=aliases" -> {"id": "concept_id", ...}:
    which field of the file (a JSONL record's key, a CSV/TSV column's header or 1-based number) holds each Entity
    field; "separator=;" (or a word: comma, semicolon, space, tab, pipe) splits a CSV/TSV cell's list."""
    fields = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        ours, equals, theirs = part.partition("=")
        ours = ours.strip()
        theirs = theirs.strip()
        if not equals or not ours or not theirs:
            raise InputError(f"--field entries are ENTITY_FIELD=FILE_FIELD, got {part.strip()!r}")
        if ours == SEPARATOR:
            theirs = SEPARATOR_WORDS.get(theirs.lower(), theirs)
        elif ours not in ENTITY_FIELDS:
            raise InputError(f"--field: {ours!r} is not an Entity field (fields: {', '.join(ENTITY_FIELDS)}; "
                             f"and {SEPARATOR}=SEP for CSV/TSV lists)")
        fields[ours] = theirs
    return fields


def _json_head(path: str | Path) -> str:
    """The first 4 KB of a file (gunzipped), for telling formats apart; unreadable: empty (the loader that
    follows names the problem)."""
    head = b""
    try:
        with open_input_lines(path) as lines:
            for raw in lines:
                head += raw
                if len(head) >= 4096:
                    break
    except (InputError, OSError, EOFError, zlib.error):
        pass
    return head[:4096].decode("utf-8-sig", "replace").lstrip()


def term_dict(id: str, name: str | None, definition: str | None = "", synonyms: Iterable[Iterable[str]] = (),
              parents: Iterable[str] = (), alt_ids: Iterable[str] = (), obsolete: bool = False,
              replaced_by: Iterable[str] = (), types: Iterable[str] = ()) -> dict[str, Any]:
    return {
        "id": id,
        "name": name or "",
        "definition": definition or "",
        "synonyms": [list(pair) for pair in synonyms],
        "parents": list(dict.fromkeys(parents)),
        "alt_ids": list(alt_ids),
        "obsolete": bool(obsolete),
        "replaced_by": list(replaced_by),
        "types": list(dict.fromkeys(types)),
    }


def load_obo(path: str | Path) -> list[dict[str, Any]]:
    import fastobo

    try:
        with guarded_path(path) as plain:  # line limit, UTF-8, truncation, gzip bomb: named with file and line
            document = fastobo.load(plain)
    except SyntaxError as error:
        raise InputError(f"not valid OBO: {error.msg}", path, error.lineno) from None
    except (UnicodeDecodeError, ValueError) as error:
        raise InputError(f"not valid OBO: {error}", path) from None
    terms = []
    for frame in document:
        if not isinstance(frame, fastobo.term.TermFrame):
            continue
        fields: dict[str, Any] = {"name": "", "definition": "", "synonyms": [], "parents": [], "alt_ids": [],
                  "obsolete": False, "replaced_by": []}
        for clause in frame:
            kind = type(clause).__name__
            if kind == "NameClause":
                fields["name"] = str(clause.name)
            elif kind == "DefClause":
                fields["definition"] = str(clause.definition)
            elif kind == "SynonymClause":
                fields["synonyms"].append((str(clause.synonym.desc), str(clause.synonym.scope)))
            elif kind == "IsAClause":
                fields["parents"].append(str(clause.term))
            elif kind == "AltIdClause":
                fields["alt_ids"].append(str(clause.alt_id))
            elif kind == "IsObsoleteClause":
                fields["obsolete"] = bool(clause.obsolete)
            elif kind == "ReplacedByClause":
                fields["replaced_by"].append(str(clause.term))
        terms.append(term_dict(str(frame.id), **fields))
    return terms


def load_with_pronto(path: str | Path) -> list[dict[str, Any]]:
    """OWL (RDF/XML, OWL/XML) and OBO-Graphs JSON, through pronto."""
    import warnings

    import pronto

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with guarded_path(path, utf8=False) as plain:  # XML may declare another encoding
                ontology = pronto.Ontology(plain)
    except (InputError, KeyboardInterrupt, SystemExit):
        raise
    # pronto raises many kinds; all mean "cannot parse". Its Rust parser's panics (pyo3's PanicException) derive
    # from BaseException, not Exception: a malformed file found by the fuzz test gave a traceback.
    except BaseException as error:
        raise InputError(f"cannot parse ontology ({type(error).__name__}: {error})", path) from None
    # pronto keeps synonyms, superclasses and replacements in sets, whose order changes with
    # PYTHONHASHSEED: sort them, so that a file always gives the same terms (and names order).
    # Synonyms go EXACT, RELATED, NARROW, BROAD (an OBO file's usual order), then by text.
    scope_rank = {scope: rank for rank, scope in enumerate(("EXACT", "RELATED", "NARROW", "BROAD"))}
    terms = []
    for term in ontology.terms():
        synonyms = sorted(
            {(synonym.description, synonym.scope or "RELATED") for synonym in term.synonyms},
            key=lambda pair: (scope_rank.get(pair[1], len(scope_rank)), pair[1], pair[0]),
        )
        terms.append(
            term_dict(
                term.id,
                term.name,
                str(term.definition or ""),
                synonyms,
                sorted(parent.id for parent in term.superclasses(distance=1, with_self=False)),
                sorted(term.alternate_ids),
                term.obsolete,
                sorted(replacement.id for replacement in term.replaced_by),
            )
        )
    return terms


def load_scizsel(path: str | Path) -> list[dict[str, Any]]:
    """Sci-ZSEL's KB JSON: {id: {id, name, def, synonyms, altdiseaseid, ParentIDs|is_a}}."""
    try:
        with open_input(path) as handle:
            data = json.load(handle)
    except json.JSONDecodeError as error:
        raise InputError(f"invalid JSON: {error.msg}", path, error.lineno) from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deep", path) from None
    if not isinstance(data, dict) or not all(isinstance(value, dict) for value in data.values()):
        raise InputError("expected a Sci-ZSEL KB: a JSON object mapping ids to entity objects", path)
    terms = []
    for key, entry in data.items():
        if "name" not in entry:
            raise InputError(f"entity {key!r} has no 'name'", path)
        try:
            entity_id = entry.get("id", key)
            _string(entity_id, "id")
            _string(entry.get("name"), "name")
            parents_field = "ParentIDs" if entry.get("ParentIDs") else "is_a"
            terms.append(term_dict(
                entity_id, entry["name"], _optional_string(entry.get("def"), "def"),
                [(text, "EXACT") for text in _strings(entry.get("synonyms"), "synonyms") if text],
                _strings(entry.get(parents_field), parents_field), _strings(entry.get("altdiseaseid"), "altdiseaseid")))
        except ValueError as error:
            raise InputError(f"entity {key!r}: {error}", path) from None
    return terms


def _kind(value: object) -> str:
    return {str: "a string", bool: "true/false", int: "a number", float: "a number", list: "a list",
            dict: "an object", type(None): "null"}.get(type(value), type(value).__name__)


def _string(value: object, field: str) -> str:
    if isinstance(value, str) and not value.strip():
        raise ValueError(f"field {field!r} is empty")
    if not isinstance(value, str):
        raise ValueError(f"field {field!r} must be a non-empty string, not {_kind(value)}"
                         + (f" ({value!r})" if isinstance(value, (int, float)) and not isinstance(value, bool) else ""))
    return value


def _optional_string(value: object, field: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"field {field!r} must be a string, not {_kind(value)}")
    return value


def _strings(value: object, field: str) -> list[str]:
    """A list of strings (absent or null: none); a lone string is refused, never split into characters."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"field {field!r} must be a list of strings, not {_kind(value)}"
                         + ("" if not isinstance(value, list) else " holding "
                            + next(_kind(item) for item in value if not isinstance(item, str))))
    return value


def _synonyms(value: object, field: str) -> list[tuple[str, str]]:
    """Synonyms: strings (EXACT) or {"text", "scope"} objects."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"field {field!r} must be a list of strings or {{text, scope}} objects, not {_kind(value)}")
    synonyms = []
    for item in value:
        if isinstance(item, str):
            synonyms.append((item, "EXACT"))
        elif isinstance(item, dict) and isinstance(item.get("text"), str) \
                and isinstance(item.get("scope", "EXACT"), str):
            synonyms.append((item["text"], item.get("scope", "EXACT").upper()))
        else:
            raise ValueError(f"field {field!r}: each synonym is a string or a {{\"text\": string, \"scope\": "
                             f"string}} object, not {_kind(item)}")
    return synonyms


def _types(value: object, field: str) -> list[str]:
    """An entity's type: a string, or a list of strings (an entity of several types); absent or null: none."""
    if isinstance(value, str):
        return [value] if value.strip() else []
    return [item for item in _strings(value, field) if item.strip()]


def entity_term(record: dict[str, Any], fields: dict[str, str] | None = None) -> dict[str, Any]:
    """The term dict of one Entity JSONL record, its types checked (``ValueError`` naming the field);
    ``fields`` maps Entity fields to the record's own names."""
    names = fields or {}

    def get(field: str) -> Any:
        return record.get(names.get(field, field))

    def name_of(field: str) -> str:
        return names.get(field, field)

    missing = [field for field in ("id", "name") if name_of(field) not in record]
    if missing:
        example = ",".join(f"{field}=FIELD" for field in missing)
        raise ValueError(f"no field {' or '.join(repr(name_of(field)) for field in missing)} (the record has "
                         f"{', '.join(map(repr, record)) or 'no fields'}): name the file's own fields with --field "
                         f"{example}")
    obsolete = get("obsolete")
    if obsolete is not None and not isinstance(obsolete, bool):
        raise ValueError(f"field {name_of('obsolete')!r} must be true or false, not {_kind(obsolete)}")
    return term_dict(_string(get("id"), name_of("id")), _string(get("name"), name_of("name")),
                     _optional_string(get("definition"), name_of("definition")),
                     _synonyms(get("synonyms"), name_of("synonyms")), _strings(get("parents"), name_of("parents")),
                     _strings(get("alt_ids"), name_of("alt_ids")), bool(obsolete),
                     _strings(get("replaced_by"), name_of("replaced_by")), _types(get("type"), name_of("type")))


def load_entity_jsonl(path: str | Path, fields: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Entity JSONL (``entity_term``); a record of wrong types is FILE:LINE bad data."""
    if fields and SEPARATOR in fields:
        raise InputError(f"--field {SEPARATOR}= splits the cells of a CSV/TSV file: a JSONL record holds its lists "
                         "as JSON lists", path)
    terms: list[dict[str, Any]] = []
    for _ in read_records(path, validate=lambda record: terms.append(entity_term(record, fields))):
        pass
    return terms


# scispaCy's KnowledgeBase JSONL (what its linker's `KnowledgeBase` reads): concept_id, canonical_name,
# aliases, types (semantic type ids: the entities' type), definition
SCISPACY_FIELDS = {"id": "concept_id", "name": "canonical_name", "synonyms": "aliases", "definition": "definition",
                   "type": "types"}


def _first_record_has(path: str | Path, field: str) -> bool:
    """Whether the first line of ``path`` names ``field`` (False when it cannot be read: the name decides)."""
    try:
        head = _json_head(path)
    except (OSError, UnicodeDecodeError, EOFError):
        return False
    return f'"{field}"' in head.split("\n", 1)[0]


@ONTOLOGY_FORMATS.register("obo")
class OBOFormat(OntologyFormat):
    summary = "OBO 1.4 (fastobo)"
    suffixes = (".obo",)

    def load(self, path: str | Path) -> list[dict[str, Any]]:
        return load_obo(path)


@ONTOLOGY_FORMATS.register("owl")
class OWLFormat(OntologyFormat):
    summary = "OWL: RDF/XML, OWL/XML or functional syntax (pronto)"
    suffixes = (".owl", ".rdf", ".xml", ".ofn", ".owx")

    def load(self, path: str | Path) -> list[dict[str, Any]]:
        return load_with_pronto(path)


@ONTOLOGY_FORMATS.register("obographs")
class OBOGraphsFormat(OntologyFormat):
    summary = "OBO Graphs JSON (pronto)"
    suffixes = (".json",)

    @classmethod
    def sniff(cls, path: str | Path) -> bool:
        return '"graphs"' in _json_head(path)

    def load(self, path: str | Path) -> list[dict[str, Any]]:
        return load_with_pronto(path)


@ONTOLOGY_FORMATS.register("scizsel")
class SciZSELFormat(OntologyFormat):
    summary = "Sci-ZSEL KB JSON: one object mapping ids to entities"
    suffixes = (".json",)

    @classmethod
    def sniff(cls, path: str | Path) -> bool:
        return '"graphs"' not in _json_head(path)

    def load(self, path: str | Path) -> list[dict[str, Any]]:
        return load_scizsel(path)


@ONTOLOGY_FORMATS.register("jsonl")
class EntityJSONLFormat(OntologyFormat):
    summary = "Entity JSONL: one {id, name, synonyms, parents, type, ...} record per line (--field maps other names)"
    suffixes = (".jsonl",)
    takes_fields = True

    @classmethod
    def sniff(cls, path: str | Path) -> bool:
        return not _first_record_has(path, SCISPACY_FIELDS["id"])

    def load(self, path: str | Path, fields: dict[str, str] | None = None) -> list[dict[str, Any]]:
        return load_entity_jsonl(path, fields)


@ONTOLOGY_FORMATS.register("scispacy")
class ScispaCyKBFormat(OntologyFormat):
    summary = "scispaCy KB JSONL: {concept_id, canonical_name, aliases, types, definition} per line"
    suffixes = (".jsonl",)
    takes_fields = True

    @classmethod
    def sniff(cls, path: str | Path) -> bool:
        return _first_record_has(path, SCISPACY_FIELDS["id"])

    def load(self, path: str | Path, fields: dict[str, str] | None = None) -> list[dict[str, Any]]:
        return load_entity_jsonl(path, {**SCISPACY_FIELDS, **(fields or {})})
