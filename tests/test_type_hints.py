"""The public surface carries type hints: the steps the commands call, the backend base classes and the
artifact loaders (every parameter and the return), so an editor or a type checker can follow them."""

import importlib
import inspect

import pytest

STEPS = {
    "annotate": ["annotate_documents"],
    "convert": ["parse_id_prefixes", "parse_ids", "document_mentions", "linked_documents", "write_linked"],
    "embed_kg": ["ontology_triples", "embed_kg"],
    "filter_aliases": ["filter_aliases"],
    "gen_aliases": ["parse_aliases", "generate_aliases"],
    "index": ["index_rows", "build_index", "build_multivector_index"],
    "link": ["link_mentions", "link_inputs"],
    "make_pairs": ["build_matcher", "concept_bridge", "make_pairs", "distinct_pairs"],
    "nil": ["calibrate_nil_threshold", "mark_nil", "resolve_nil_threshold", "nil_metrics"],
    "select_entities": ["select_entities"],
    "fine_tune_retriever": ["train_retriever"],
    "fine_tune_reranker": ["train_reranker"],
    "fine_tune_multivector": ["train_multivector"],
    "res_reranker": ["train_res_reranker"],
    "align": ["train_alignment", "retrieve", "resolve_entities", "cross_validate"],
    "eval": ["score_mentions", "score_file", "file_metrics", "aggregate"],
    "eval_files": ["evaluate", "evaluate_files", "write_errors"],
    "eval_plots": ["save_plots"],
    "eval_html": ["html_report"],
}
LOADERS = [("artifacts.index", "load_index"), ("artifacts.kg_embeddings", "load_kg_embeddings"),
           ("artifacts.reranker", "load_reranker"), ("artifacts.alignment", "load_alignment")]
BASES = [("backends.encoders.base", "Encoder"), ("backends.indexes", "NameIndex"), ("backends.kg", "KGEmbedder"),
         ("backends.llm.base", "LLMBackend"), ("backends.engines", "Engine"), ("formats", "DocumentFormat"),
         ("ontology.loaders", "OntologyFormat"), ("triples", "TripleFormat")]


def _unannotated(function):
    signature = inspect.signature(function)
    missing = [name for name, parameter in signature.parameters.items()
               if name not in ("self", "cls") and parameter.annotation is inspect.Parameter.empty]
    if signature.return_annotation is inspect.Signature.empty and function.__name__ != "__init__":
        missing.append("return")
    return missing


def _functions():
    for module, names in STEPS.items():
        for name in names:
            yield f"steps.{module}", name
    yield from LOADERS


@pytest.mark.parametrize("module, name", list(_functions()))
def test_step_functions_and_loaders_are_annotated(module, name):
    function = getattr(importlib.import_module(f"ontolink.{module}"), name)
    assert not _unannotated(function), f"ontolink.{module}.{name}: no type for {', '.join(_unannotated(function))}"


@pytest.mark.parametrize("module, name", BASES)
def test_base_class_methods_are_annotated(module, name):
    cls = getattr(importlib.import_module(f"ontolink.{module}"), name)
    methods = [(attribute, value) for attribute, value in vars(cls).items()
               if inspect.isfunction(value) and not (attribute.startswith("_") and attribute != "__init__")]
    methods += [(attribute, value.fget) for attribute, value in vars(cls).items() if isinstance(value, property)]
    assert methods
    missing = {attribute: _unannotated(value) for attribute, value in methods if _unannotated(value)}
    assert not missing, f"{name}: {missing}"
