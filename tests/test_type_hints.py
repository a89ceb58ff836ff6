"""The public surface carries type hints: the library functions the commands call, the backend base classes and the
artifact loaders (every parameter and the return), so an editor or a type checker can follow them."""

import importlib
import inspect

import pytest

FUNCTIONS = {
    "recognition.annotate": ["annotate_documents"],
    "formats.convert": ["parse_id_prefixes", "parse_ids", "document_mentions", "linked_documents", "write_linked"],
    "kg.embed": ["ontology_triples", "embed_kg"],
    "aliases.filter": ["filter_aliases"],
    "aliases.generate": ["parse_aliases", "generate_aliases"],
    "indexes.build": ["index_rows", "build_index", "build_multivector_index"],
    "linking.link": ["link_mentions", "link_inputs"],
    "aliases.pairs": ["build_matcher", "concept_bridge", "make_pairs", "distinct_pairs"],
    "linking.nil": ["calibrate_nil_threshold", "mark_nil", "resolve_nil_threshold", "nil_metrics"],
    "aliases.select": ["select_entities", "select_entities_files"],
    "training.retriever": ["train_retriever"],
    "reranking.train_cross_encoder": ["train_reranker"],
    "training.multivector": ["train_multivector"],
    "reranking.train_read_and_select": ["train_res_reranker"],
    "kg.alignment.workflows": ["train_alignment", "retrieve", "resolve_entities", "cross_validate"],
    "evaluation.evaluate": ["score_mentions", "score_file", "file_metrics", "aggregate"],
    "evaluation.files": ["evaluate", "evaluate_files", "write_errors"],
    "evaluation.plots": ["save_plots"],
    "evaluation.html": ["html_report"],
}
LOADERS = [("indexes.artifact", "load_index"), ("kg.embeddings", "load_kg_embeddings"),
           ("reranking.base", "load_reranker"), ("kg.alignment", "load_alignment")]
BASES = [("encoders.base", "Encoder"), ("indexes", "NameIndex"), ("kg.embedders", "KGEmbedder"),
         ("aliases.llm.base", "LLMBackend"), ("engines", "Engine"), ("formats", "DocumentFormat"),
         ("ontology.loaders", "OntologyFormat"), ("formats.triples", "TripleFormat"), ("reranking.base", "Reranker")]


def _unannotated(function):
    signature = inspect.signature(function)
    missing = [name for name, parameter in signature.parameters.items()
               if name not in ("self", "cls") and parameter.annotation is inspect.Parameter.empty]
    if signature.return_annotation is inspect.Signature.empty and function.__name__ != "__init__":
        missing.append("return")
    return missing


def _functions():
    for module, names in FUNCTIONS.items():
        for name in names:
            yield module, name
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
