"""ontolink from Python: the same library functions the commands call, with the commands' defaults.

    import ontolink

    hpo = ontolink.load_ontology("hpo")
    index = ontolink.build_index(hpo, "idx/hpo")            # or ontolink.load_index("idx/hpo")
    index.link(["seizures", "short stature"], top_k=5)      # the records `ontolink link` writes
    ontolink.annotate(["The boy had seizures."], hpo)       # the records `ontolink annotate` writes

Records are plain dicts, as the commands read and write them as JSON Lines (docs/records.md). Each
function imports what it needs when called, so ``import ontolink`` stays cheap.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ontolink.core.records import validate_mention
from ontolink.ontology import DEFAULT_SYNONYM_SCOPES, OntologySource, load_ontology as read_ontology
from ontolink.ontology.subsets import EntitySubset, types_of
from ontolink.ranking.options import TrainRankerOptions
from ontolink.recognition.annotate import DEFAULT_CONTEXT, annotate_documents
from ontolink.recognition.matcher import ConceptMatcher
from ontolink.reranking.base import Reranker, load_reranker
from ontolink.core.options import AUTO_DEVICE
from ontolink.evaluation.options import EvalOptions
from ontolink.indexes.options import IndexOptions
from ontolink.linking.options import LinkOptions
from ontolink.recognition.options import AnnotateOptions

if TYPE_CHECKING:
    from ontolink.evaluation.results import Evaluation
    from ontolink.indexes.artifact import LoadedIndex
    from ontolink.ontology.model import Ontology
    from ontolink.ranking.ranker import Ranker


def load_ontology(source: Ontology | OntologySource | str | Path = "hpo", *, format: str | None = None,
                  synonym_scopes: Sequence[str] | None = None, fields: dict[str, str] | None = None) -> Ontology:
    """An ontology file (OBO, OWL, OBO-Graphs JSON, CSV, Entity JSONL, ...) or the embedded ``"hpo"``, parsed
    (and cached in the user cache, keyed by the file's content). ``format``: the file's format when its name
    does not tell; ``synonym_scopes``: which synonyms count as names (default EXACT and RELATED); ``fields``:
    which field of a JSONL or CSV record holds each Entity field (``--field``)."""
    return read_ontology(source, fmt=format, synonym_scopes=tuple(synonym_scopes or DEFAULT_SYNONYM_SCOPES),
                         fields=fields)


class Index:
    """A name index read back (``load_index``, ``build_index``): link mention strings or Mention records with it.

    ``loaded`` is the library's ``LoadedIndex`` (names, entities, the searchable index), for what this class does
    not wrap."""

    def __init__(self, loaded: LoadedIndex):
        self.loaded = loaded

    @property
    def directory(self) -> Path:
        return Path(self.loaded.directory)

    @property
    def manifest(self) -> dict[str, Any]:
        """What `ontolink index` recorded: the method, the encoder, the ontology's label and digest, counts."""
        return self.loaded.manifest

    def __len__(self) -> int:
        """How many names (and synonyms) the index holds."""
        return len(self.loaded)

    def __repr__(self) -> str:
        return f"Index({str(self.directory)!r}, {self.loaded.method}, {len(self)} names)"

    def link(self, mentions: Iterable[str | dict[str, Any]], *, top_k: int | None = None,
             ranker: str | Path | Ranker | None = None, reranker: str | Path | Reranker | None = None,
             no_ranker: bool = LinkOptions.no_ranker, annotate_ids: bool = LinkOptions.annotate_ids,
             device: str = AUTO_DEVICE, entities: Iterable[str] | None = None,
             where: Sequence[str] = LinkOptions.where) -> list[dict[str, Any]]:
        """Each mention with its ``candidates``, best first: the records `ontolink link` writes for the same
        input. A string is the Mention record ``{"id": "1", "mention": string}`` (ids count from 1, as for
        ``ontolink link PHRASE ...``); a dict is a Mention record, its other fields kept. ``top_k``: candidates per
        mention (default: as `ontolink link`); ``ranker`` / ``reranker``: a trained one's directory or the object
        (neither: the index's default ranker, as `ontolink link`; ``no_ranker``: the index's order);
        ``entities`` / ``where``: candidates among these ids / the entities of these types only
        (``["type=Chemical"]``: `link --entities / --where`)."""
        subset = EntitySubset(where=tuple(where), entity_ids=tuple(entities) if entities is not None else None)
        self.loaded.restrict(subset.choose(self.loaded.entity_ids, self.loaded.entity_types,
                                           f"the index {self.directory}"))
        try:
            return self._link(mentions, top_k, ranker, reranker, no_ranker, annotate_ids, device)
        finally:
            self.loaded.restrict(None)  # the next call searches every entity unless it asks otherwise

    def _link(self, mentions, top_k, ranker, reranker, no_ranker, annotate_ids, device):
        from ontolink.linking.link import link_mentions  # late: loads numpy

        records = []
        for number, mention in enumerate(mentions, 1):
            record = {"id": str(number), "mention": mention} if isinstance(mention, str) else dict(mention)
            validate_mention(record)
            records.append(record)
        if ranker is not None:
            from ontolink.ranking.ranker import Ranker  # late: loads numpy

            ranker = ranker if isinstance(ranker, Ranker) else Ranker(ranker)
        if reranker is not None:
            reranker = reranker if isinstance(reranker, Reranker) else load_reranker(reranker, device=device)
        if reranker is not None:
            reranker.check_index(self.loaded)
        by_default = ranker is None and reranker is None and not no_ranker
        if by_default:
            from ontolink.ranking.default import index_ranker  # late: loads numpy

            ranker = index_ranker(self.loaded)[0]
        return list(link_mentions(records, self.loaded, top_k=top_k, reranker=reranker, ranker=ranker,
                                  device=device, annotate_ids=annotate_ids, exact_first=by_default))


def load_index(directory: str | Path, *, ontology: Ontology | OntologySource | str | Path | None = None,
               device: str = AUTO_DEVICE) -> Index:
    """An index directory written by `ontolink index` (or ``build_index``); with ``ontology``, refused unless it
    was built for that ontology's content."""
    from ontolink.indexes.artifact import load_index as load  # late: loads numpy

    if isinstance(ontology, (str, Path)):
        ontology = OntologySource(str(ontology))
    return Index(load(directory, ontology=ontology, device=device))


def build_index(ontology: Ontology | OntologySource | str | Path, directory: str | Path, *,
                method: str = IndexOptions.method, model: str | None = None, device: str = AUTO_DEVICE,
                force: bool = IndexOptions.force, **options: Any) -> Index:
    """Index every name and synonym of ``ontology`` into ``directory`` (replaced only with ``force`` when it holds
    something else) and return it loaded. ``method``: dense (a sentence encoder, ``model``: default
    all-MiniLM-L6-v2 from its PyPI package, + FAISS), tfidf or multivector; ``options``: the other keywords
    of ``ontolink.indexes.build.build_index`` (faiss_type, precision, runtime, ...)."""
    from ontolink.indexes.build import build_index as build  # late: loads numpy
    from ontolink.linking.link import name_tables  # late: loads numpy

    options.setdefault("name_tables", name_tables())  # what `link` would make on every start, made once
    build(load_ontology(ontology), directory, method=method, model=model, device=device, force=force, **options)
    return load_index(directory, device=device)


def annotate(texts: Iterable[str | tuple[str, str]], ontology: Ontology | OntologySource | str | Path, *,
             roots: Sequence[str] | None = None, coordination: bool = AnnotateOptions.coordination,
             abbreviations: bool = AnnotateOptions.abbreviations,
             context_characters: int | None = AnnotateOptions.context_chars, entities: Iterable[str] | None = None,
             where: Sequence[str] = AnnotateOptions.where) -> list[dict[str, Any]]:
    """The mentions of ``ontology``'s names in ``texts``, as `ontolink annotate` finds them: Mention records for
    ``Index.link``. A text is a document (its id "1", "2", ... in order) or an ``(id, text)`` pair; ``roots``
    keeps the entities under these ids (e.g. ``["HP:0000118"]``, phenotypic abnormalities), ``entities`` those
    ids only and ``where`` the entities of some types (``["type=Disease"]``: `annotate --where`). Each mention
    keeps ``context_characters`` of context on each side (default: the command's window; 0: the whole text)."""
    loaded = load_ontology(ontology)
    documents = [(str(number), text) if isinstance(text, str) else tuple(text)
                 for number, text in enumerate(texts, 1)]
    subset = EntitySubset(where=tuple(where), entity_ids=tuple(entities) if entities is not None else None).choose(
        list(loaded.entities), types_of(loaded), f"the ontology {loaded.label}")
    matcher = ConceptMatcher(loaded, roots=list(roots) if roots else None, subset=subset)
    return list(annotate_documents(documents, matcher, coordination=coordination, abbreviations=abbreviations,
                                   context_characters=DEFAULT_CONTEXT if context_characters is None
                                   else context_characters))


def evaluate(files: Sequence[str | Path], *, ontology: Ontology | OntologySource | str | Path | None = None,
             gold: str | Path | None = None, spans: bool = EvalOptions.spans, labels: Sequence[str] | None = None,
             aggregate: bool | None = None, by: str | None = None) -> Evaluation:
    """Score Linked-mention files (`ontolink link` output with gold ids) as `ontolink eval` does: Recall@K, MRR,
    by overlap category and error class. ``evaluation.tables`` holds the numbers; ``evaluation.render("markdown")``
    the report as text (also "json", "tsv", "table"). Several files are one system's seeds (mean ± std) or
    different systems (side by side) as `eval` decides; ``aggregate`` True / False says so instead. ``by``
    splits every table by a record field (`eval --by`)."""
    from ontolink.evaluation.files import evaluate as score  # late: loads numpy

    if isinstance(ontology, (str, Path)):
        ontology = load_ontology(ontology)
    return score([str(path) for path in files], ontology, gold_path=str(gold) if gold else None, spans=spans,
                 labels=labels, aggregate=aggregate, by_field=by)


def train_ranker(index: Index | str | Path, directory: str | Path, *, pairs: str | Path | None = None,
                 force: bool = TrainRankerOptions.force, **options: Any) -> dict[str, Any]:
    """Fit a candidate ranker over ``index`` with no gold labels, as `ontolink train ranker` does (the ontology's
    synonyms searched without their own name, and the make-pairs records of the file ``pairs`` if given), write it
    to ``directory`` and return its manifest; ``Index.link(..., ranker=directory)`` applies it. ``options``: the
    other fields of ``ontolink.ranking.options.TrainRankerOptions`` (groups, prior, top_k, seed, ...)."""
    from ontolink.ranking.train import train_ranker_files  # late: loads numpy

    index_dir = index.directory if isinstance(index, Index) else index
    return train_ranker_files(TrainRankerOptions(directory=str(directory), index_dir=str(index_dir),
                                                 pairs_path=str(pairs) if pairs else None, force=force, **options))
