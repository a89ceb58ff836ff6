"""SSSOM TSV mapping tables from Linked mentions (https://mapping-commons.github.io/sssom/).

One row per mention (its best candidate, or ``sssom:NoTermFound`` when it is
NIL), or its top N candidates. By default the predicate says what a ranking
knows: ``skos:exactMatch`` for the best candidate, ``skos:closeMatch`` for the
ones below it; with score thresholds (``exact_min``, ``close_min``) the score
has a say too: the best candidate is an exact match only when its score
reaches ``exact_min`` (a 0.50 guess is a close match), and any candidate
scoring under ``close_min`` is a ``skos:relatedMatch``; the justification says how the candidate was matched (its
``matched_by``: the mention is one of its names once folded -> lexical
matching; TF-IDF -> lexical similarity; an encoder -> semantic similarity);
the confidence is the score. The metadata block must list every prefix in
``curie_map`` before the first row, so rows are spooled to a temporary file
(bounded memory) and written after the header once all prefixes are known.
"""

from __future__ import annotations

import math
import re
import tempfile
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import quote

from ontolink.version import __version__
from ontolink.core.errors import InputError
from ontolink.formats import DOCUMENT_FORMATS, DocumentFormat
from ontolink.formats.tab_rows import TabSeparatedRows

if TYPE_CHECKING:
    from bioc import BioCDocument

    from ontolink.formats import DocumentWriter

COLUMNS = ("subject_id", "subject_label", "predicate_id", "object_id", "object_label", "mapping_justification",
           "confidence", "comment")
# Prefix expansions for ids that are not OBO ontologies; any other prefix P gets the OBO PURL
# http://purl.obolibrary.org/obo/P_ (HP, MONDO, GO, CHEBI, ...). --curie-map adds or overrides.
KNOWN_PREFIXES = {
    "MESH": "http://id.nlm.nih.gov/mesh/",
    "NCBIGene": "http://identifiers.org/ncbigene/",
    "OMIM": "https://omim.org/entry/",
    "dbSNP": "http://identifiers.org/dbsnp/",
    "Cellosaurus": "http://identifiers.org/cellosaurus/",
    "orphanet": "http://www.orpha.net/ORDO/Orphanet_",
    "ORPHA": "http://www.orpha.net/ORDO/Orphanet_",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "semapv": "https://w3id.org/semapv/vocab/",
    "sssom": "https://w3id.org/sssom/",
    "owl": "http://www.w3.org/2002/07/owl#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "oboInOwl": "http://www.geneontology.org/formats/oboInOwl#",
}
NO_TERM_FOUND = "sssom:NoTermFound"
JUSTIFICATIONS = ("semapv:SemanticSimilarityThresholdMatching", "semapv:LexicalSimilarityThresholdMatching",
                  "semapv:LexicalMatching", "semapv:ManualMappingCuration", "semapv:UnspecifiedMatching")
PREDICATES = ("skos:exactMatch", "skos:closeMatch", "skos:broadMatch", "skos:narrowMatch", "skos:relatedMatch")
AUTO = "auto"
TOP_N = 1  # mapping rows per mention: its best candidate (convert --top-n)
OBJECT_PREFIX = ""  # given to bare candidate ids (convert --object-prefix); "": none
# the predicate of a candidate below the first: the ranking says it is close, not that it is the same
BELOW_BEST = "skos:closeMatch"
# the predicate of a candidate scoring under close_min: related, no more
BELOW_CLOSE = "skos:relatedMatch"
# a candidate's matched_by -> mapping_justification; anything else (an encoder) is semantic. A ranker keeps each
# candidate's matched_by: it reorders what the retriever found, and how a candidate was found is what SSSOM records
JUSTIFICATION_OF: dict[str | None, str] = {"exact": "semapv:LexicalMatching", "annotate": "semapv:LexicalMatching",
                                           "tfidf": "semapv:LexicalSimilarityThresholdMatching"}
# a CURIE's prefix is an XML NCName; its local part may not hold white space or control characters, which
# would break the TSV row or (in a prefix) the commented metadata block
_PREFIX = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")
_LOCAL = re.compile(r"[^\s\x00-\x1f\x7f]+\Z")
# an id that is an IRI, not a CURIE (an OWL ontology's classes outside OBO): "http" is no prefix to expand
_IRI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")
_OBO_PURL = re.compile(r"http://purl\.obolibrary\.org/obo/([A-Za-z_][A-Za-z0-9.\-]*?)_([^_/#]+)\Z")


def parse_curie_map(text: str | None) -> dict[str, str]:
    """``--curie-map``: "PREFIX=URI,PREFIX=URI"."""
    result: dict[str, str] = {}
    for part in (text or "").split(","):
        if part.strip():
            prefix, equals, uri = part.partition("=")
            if not equals or not prefix.strip() or not uri.strip():
                raise InputError(f"--curie-map entries are PREFIX=URI, got {part.strip()!r}")
            result[prefix.strip()] = uri.strip()
    return result


def _prefix(curie: object, what: str) -> str:
    if not isinstance(curie, str):
        raise InputError(f"{what} {curie!r} is not a CURIE (PREFIX:ID): it is not a string")
    prefix, colon, local = curie.partition(":")
    if not colon or not prefix or not local:
        raise InputError(f"{what} {curie!r} is not a CURIE (PREFIX:ID): give bare ids a prefix with --object-prefix")
    if not _PREFIX.match(prefix) or not _LOCAL.match(local):
        raise InputError(f"{what} {curie!r} is not a valid CURIE: its prefix must be a name (letters, digits, _ . -) "
                         "and its local part may not hold spaces, tabs, line breaks or control characters")
    return prefix


def subject_curie(prefix: str, mention_id: object) -> str:
    """The subject CURIE of a mention: its id percent-encoded, so that any id ("m 2") is one valid CURIE."""
    return f"{prefix}:{quote(str(mention_id), safe=':-._~/')}"


# what a CURIE's local part carries as it is (RFC 3987's irelative-ref, as SSSOM's validator reads it): the rest,
# "|" of tmVar's variant ids or a non-ASCII letter, is percent-encoded, else the validator drops the row
_LOCAL_SAFE = "!#$&'()*+,-./:;=?@_~"


def object_curie(prefix: str, local: str) -> str:
    """An entity's CURIE with its local part percent-encoded where a CURIE cannot carry a character."""
    return f"{prefix}:{quote(local, safe=_LOCAL_SAFE)}"


class SSSOMWriter:
    """Rows go to a spool as they come; ``close`` writes the header (with every prefix seen) and the rows."""

    def __init__(self, stream: IO[Any], mapping_set_id: str, license_url: str, justification: str = AUTO,
                 predicate: str = AUTO, subject_prefix: str = "mention", subject_base: str = "urn:ontolink:mention:",
                 object_prefix: str = OBJECT_PREFIX, curie_map: dict[str, str] | None = None, top_n: int = TOP_N,
                 mapping_set_title: str | None = None, exact_min: float | None = None,
                 close_min: float | None = None) -> None:
        self.stream = stream
        self.metadata = {"mapping_set_id": mapping_set_id, "license": license_url}
        if mapping_set_title:
            self.metadata["mapping_set_title"] = mapping_set_title
        self.metadata.update({"mapping_tool": "ontolink", "mapping_tool_version": __version__})
        self.justification, self.predicate = justification, predicate
        self.subject_prefix, self.object_prefix = subject_prefix, object_prefix
        self.top_n = top_n
        self.exact_min, self.close_min = exact_min, close_min
        self.expansions = {**KNOWN_PREFIXES, **(curie_map or {}), subject_prefix: subject_base}
        self.used = {subject_prefix, "skos" if predicate == AUTO else _prefix(predicate, "predicate"), "semapv"}
        self.spool = tempfile.SpooledTemporaryFile(max_size=1 << 24, mode="w+", encoding="utf-8", newline="")
        self.rows = TabSeparatedRows(self.spool)
        self.count = 0

    def _object(self, entity_id: str) -> str:
        if self.object_prefix and ":" not in entity_id:
            entity_id = self.object_prefix + entity_id
        if isinstance(entity_id, str) and _IRI.match(entity_id):
            entity_id = self._compacted(entity_id)
        prefix = _prefix(entity_id, "entity id")
        self.used.add(prefix)
        return object_curie(prefix, entity_id[len(prefix) + 1:])

    def _compacted(self, iri: str) -> str:
        """The CURIE of an IRI under the longest expansion it starts with (--curie-map's, or a known one); an
        IRI under none is refused with the --curie-map that would compact it."""
        matches = [(len(base), prefix) for prefix, base in self.expansions.items()
                   if iri.startswith(base) and len(iri) > len(base) and prefix != self.subject_prefix]
        if matches:
            prefix = max(matches)[1]
            return f"{prefix}:{iri[len(self.expansions[prefix]):]}"
        obo = _OBO_PURL.match(iri)
        if obo:  # what any other prefix expands to (close): HP_0001250 under the OBO PURL is HP:0001250
            return f"{obo.group(1)}:{obo.group(2)}"
        namespace = iri[:max(iri.rfind("/"), iri.rfind("#")) + 1]
        raise InputError(f"entity id {iri!r} is an IRI, not a CURIE (PREFIX:ID), and no prefix expands to its "
                         f"namespace: give one with --curie-map PREFIX={namespace}")

    def write(self, document: BioCDocument | None, links: list[dict[str, Any]]) -> None:
        """The rows of ``links`` (Linked mentions); a mapping table has no use for ``document``."""
        for record in links:
            self.write_record(record)

    def _justification(self, candidate: dict[str, Any]) -> str:
        if self.justification != AUTO:
            return self.justification
        return JUSTIFICATION_OF.get(candidate.get("matched_by"), JUSTIFICATIONS[0])

    def _predicate(self, rank: int, score: object = None) -> str:
        """The predicate of the candidate at ``rank`` (0: the best) of ``score``: exact for the best one (that
        scores at least ``exact_min``, when given), else close (scoring at least ``close_min``, when given), else
        related. A candidate without a numeric score reaches no threshold."""
        if self.predicate != AUTO:
            return self.predicate
        number = float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None

        def reaches(threshold: float | None) -> bool:
            return threshold is None or (number is not None and number >= threshold)

        if rank == 0 and reaches(self.exact_min):
            return PREDICATES[0]
        return BELOW_BEST if reaches(self.close_min) else BELOW_CLOSE

    def write_record(self, record: dict[str, Any]) -> None:
        subject = subject_curie(self.subject_prefix, record["id"])
        common = {"subject_id": subject, "subject_label": record["mention"], "comment": ""}
        if record.get("doc_id") is not None:
            common["comment"] = f"document {record['doc_id']}" + (
                f" at {record['start']}-{record['end']}" if "start" in record else "")
        candidates = record.get("candidates") or []
        if record.get("nil") or not candidates:
            self.used.add("sssom")
            rows = [{**common, "object_id": NO_TERM_FOUND, "object_label": "", "confidence": "",
                     # no term: the rank-only predicate, whatever the thresholds (there is no score to weigh)
                     "predicate_id": PREDICATES[0] if self.predicate == AUTO else self.predicate,
                     "mapping_justification": JUSTIFICATIONS[-1] if self.justification == AUTO else self.justification}]
        else:
            rows = [{**common, "object_id": self._object(candidate["id"]), "object_label": candidate.get("name", ""),
                     "confidence": _confidence(candidate.get("score")),
                     "predicate_id": self._predicate(rank, candidate.get("score")),
                     "mapping_justification": self._justification(candidate)}
                    for rank, candidate in enumerate(candidates[:self.top_n])]
        for row in rows:
            self.rows.writerow([row[column] for column in COLUMNS])
            self.count += 1

    def close(self) -> None:
        curie_map = {prefix: self.expansions.get(prefix, f"http://purl.obolibrary.org/obo/{prefix}_")
                     for prefix in sorted(self.used)}
        lines = ["curie_map:"] + [f"  {prefix}: {_yaml(uri)}" for prefix, uri in curie_map.items()]
        lines += [f"{key}: {_yaml(value)}" for key, value in self.metadata.items()]
        self.stream.write("".join(f"#{line}\n" for line in lines))
        self.stream.write("\t".join(COLUMNS) + "\n")
        self.spool.seek(0)
        for line in self.spool:
            self.stream.write(line)
        self.spool.close()
        self.stream.flush()


@DOCUMENT_FORMATS.register("sssom")
class SSSOMFormat(DocumentFormat):
    summary = "SSSOM TSV: a mapping table, one row per mention and candidate (written only)"
    suffixes = (".sssom.tsv", ".tsv")
    needs_documents = False

    def writer(self, stream: IO[Any], **options: Any) -> DocumentWriter:
        """``options``: SSSOMWriter's keywords (mapping_set_id and license_url are required)."""
        return SSSOMWriter(stream, **options)


def _confidence(score: object) -> str:
    """SSSOM confidence is in [0, 1]: cosine and similar scores are clipped into it. A score that is not a
    finite number ("high", "0.9", NaN) is refused: it would be written as some other confidence, or fail."""
    if score is None:
        return ""
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        raise InputError(f"a candidate's score {score!r} is not a finite number")
    return f"{min(1.0, max(0.0, float(score))):.6g}"


def _yaml(value: object) -> str:
    import json

    return json.dumps(str(value), ensure_ascii=False)  # a JSON string is a valid YAML scalar
