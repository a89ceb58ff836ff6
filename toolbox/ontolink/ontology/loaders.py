"""Parsers from ontology files to plain term dicts.

A term dict is JSON-ready: {id, name, definition, synonyms: [[text, scope]],
parents, alt_ids, obsolete, replaced_by}. Obsolete terms are kept here so that
their ids can be resolved later.
"""

import json

from ontolink.errors import InputError
from ontolink.file_formats import FileFormat, FormatRegistry
from ontolink.io import open_input



class OntologyFormat(FileFormat):
    """An ontology file format: ``load(path)`` gives its terms as term dicts (see ``term_dict``)."""

    def load(self, path):
        raise NotImplementedError


ONTOLOGY_FORMATS = FormatRegistry("ontology format", "ontology-format", "ontolink.ontology", OntologyFormat)


def format_names():
    """The registered ontology formats (what --ontology-format accepts)."""
    return ONTOLOGY_FORMATS.names()


def detect_format(path):
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


def load_terms(path, fmt):
    """The term dicts of the ontology file ``path`` in the registered format ``fmt``."""
    return ONTOLOGY_FORMATS.get(fmt)().load(path)


def _json_head(path):
    with open_input(path) as handle:
        return handle.read(4096).lstrip()


def term_dict(id, name, definition="", synonyms=(), parents=(), alt_ids=(), obsolete=False, replaced_by=()):
    return {
        "id": id,
        "name": name or "",
        "definition": definition or "",
        "synonyms": [list(pair) for pair in synonyms],
        "parents": list(dict.fromkeys(parents)),
        "alt_ids": list(alt_ids),
        "obsolete": bool(obsolete),
        "replaced_by": list(replaced_by),
    }


def load_obo(path):
    import fastobo

    try:
        if str(path).endswith(".gz"):
            with open_input(path, binary=True) as handle:
                document = fastobo.load(handle)
        else:
            document = fastobo.load(str(path))
    except SyntaxError as error:
        raise InputError(f"not valid OBO: {error.msg}", path, error.lineno) from None
    except (UnicodeDecodeError, ValueError) as error:
        raise InputError(f"not valid OBO: {error}", path) from None
    terms = []
    for frame in document:
        if not isinstance(frame, fastobo.term.TermFrame):
            continue
        fields = {"name": "", "definition": "", "synonyms": [], "parents": [], "alt_ids": [],
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


def load_with_pronto(path):
    """OWL (RDF/XML, OWL/XML) and OBO-Graphs JSON, through pronto."""
    import warnings

    import pronto

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ontology = pronto.Ontology(str(path))
    except Exception as error:  # pronto raises many kinds; all mean "cannot parse"
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


def load_scizsel(path):
    """Sci-ZSEL's KB JSON: {id: {id, name, def, synonyms, altdiseaseid, ParentIDs|is_a}}."""
    try:
        with open_input(path) as handle:
            data = json.load(handle)
    except json.JSONDecodeError as error:
        raise InputError(f"invalid JSON: {error.msg}", path, error.lineno) from None
    if not isinstance(data, dict) or not all(isinstance(value, dict) for value in data.values()):
        raise InputError("expected a Sci-ZSEL KB: a JSON object mapping ids to entity objects", path)
    terms = []
    for key, entry in data.items():
        if "name" not in entry:
            raise InputError(f"entity {key!r} has no 'name'", path)
        parents = entry.get("ParentIDs") or entry.get("is_a") or []
        terms.append(
            term_dict(
                entry.get("id", key),
                entry["name"],
                entry.get("def", ""),
                [(text, "EXACT") for text in entry.get("synonyms", []) if text],
                parents,
                entry.get("altdiseaseid", []),
            )
        )
    return terms


def load_entity_jsonl(path):
    from ontolink.io import read_records

    def validate(record):
        for field in ("id", "name"):
            if not isinstance(record.get(field), str) or not record[field]:
                raise ValueError(f"field {field!r} must be a non-empty string")

    terms = []
    for record in read_records(path, validate=validate):
        synonyms = []
        for synonym in record.get("synonyms") or []:
            if isinstance(synonym, dict):
                synonyms.append((synonym.get("text", ""), synonym.get("scope", "EXACT")))
            else:
                synonyms.append((str(synonym), "EXACT"))
        terms.append(
            term_dict(
                record["id"],
                record["name"],
                record.get("definition", ""),
                synonyms,
                record.get("parents") or [],
                record.get("alt_ids") or [],
                record.get("obsolete", False),
                record.get("replaced_by") or [],
            )
        )
    return terms


@ONTOLOGY_FORMATS.register("obo")
class OBOFormat(OntologyFormat):
    summary = "OBO 1.4 (fastobo)"
    suffixes = (".obo",)

    def load(self, path):
        return load_obo(path)


@ONTOLOGY_FORMATS.register("owl")
class OWLFormat(OntologyFormat):
    summary = "OWL: RDF/XML, OWL/XML or functional syntax (pronto)"
    suffixes = (".owl", ".rdf", ".xml", ".ofn", ".owx")

    def load(self, path):
        return load_with_pronto(path)


@ONTOLOGY_FORMATS.register("obographs")
class OBOGraphsFormat(OntologyFormat):
    summary = "OBO Graphs JSON (pronto)"
    suffixes = (".json",)

    @classmethod
    def sniff(cls, path):
        return '"graphs"' in _json_head(path)

    def load(self, path):
        return load_with_pronto(path)


@ONTOLOGY_FORMATS.register("scizsel")
class SciZSELFormat(OntologyFormat):
    summary = "Sci-ZSEL KB JSON: one object mapping ids to entities"
    suffixes = (".json",)

    @classmethod
    def sniff(cls, path):
        return '"graphs"' not in _json_head(path)

    def load(self, path):
        return load_scizsel(path)


@ONTOLOGY_FORMATS.register("jsonl")
class EntityJSONLFormat(OntologyFormat):
    summary = "Entity JSONL: one {id, name, synonyms, parents, ...} record per line"
    suffixes = (".jsonl",)

    def load(self, path):
        return load_entity_jsonl(path)
