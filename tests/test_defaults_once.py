"""Every default lives once (issue 42): a command's options dataclass holds the defaults `--help` shows, and the
library functions the command calls take the same ones (``def train_reranker(..., top_k: int =
TrainRerankerOptions.top_k)``), so the command line and the Python API cannot drift apart. For each command's call
path, every keyword parameter that shares a name with an options field (or is listed as that field's other name)
must default to the field's default, and name it rather than write the value out again."""

import ast
import dataclasses
import importlib
import inspect
import textwrap

import pytest

from ontolink.aliases.options import FilterOptions, GenAliasesOptions, MakePairsOptions, SelectEntitiesOptions
from ontolink.evaluation.options import EvalOptions
from ontolink.formats.options import ConvertOptions
from ontolink.indexes.options import IndexOptions
from ontolink.kg.options import AlignCvOptions, AlignEncoderOptions, AlignFitOptions, AlignRetrieveOptions, \
    EmbedKgOptions
from ontolink.linking.options import LinkOptions
from ontolink.ranking.options import TrainRankerOptions
from ontolink.recognition.options import AnnotateOptions
from ontolink.reranking.options import TrainRerankerOptions
from ontolink.training.options import TrainMultivectorOptions, TrainRetrieverOptions, TrainSpanScorerOptions

# (options class, "module:qualname" of a library function on the command's call path, {parameter: field} for a
# parameter that takes a field under another name, parameters not compared: {parameter: why})
CALL_PATHS = [
    (IndexOptions, "ontolink.indexes.build:build_index", {}, {}),
    (IndexOptions, "ontolink.indexes.build:build_multivector_index", {}, {}),
    (IndexOptions, "ontolink.indexes.dense:DenseNameIndex.build", {}, {}),
    (IndexOptions, "ontolink.indexes.dense:make_faiss_index", {"ivf_nlist": "nlist"}, {}),
    (IndexOptions, "ontolink.indexes.multivector:MultiVectorNameIndex.build", {}, {}),
    (IndexOptions, "ontolink.indexes.multivector:MultiVectorNameIndex", {}, {}),
    (IndexOptions, "ontolink.indexes.tfidf:TfidfNameIndex.build", {}, {}),
    (IndexOptions, "ontolink.indexes.tfidf:char_trigram_vectorizer", {}, {}),
    (IndexOptions, "ontolink.api:build_index", {}, {}),
    (IndexOptions, "ontolink.encoders:load_encoder", {}, {}),
    # the index step fits the index's default ranker (ontolink.ranking.default) with its --seed
    (IndexOptions, "ontolink.ranking.default:add_ranker", {"choice": "ranker"}, {}),
    (IndexOptions, "ontolink.ranking.default:choose_ranker", {}, {}),
    (IndexOptions, "ontolink.ranking.default:split_by_entity", {}, {}),
    (IndexOptions, "ontolink.ranking.default:held_out_entity", {}, {}),
    (LinkOptions, "ontolink.linking.link:link_mentions", {}, {}),
    (LinkOptions, "ontolink.linking.link:LinkBatches", {}, {}),
    (LinkOptions, "ontolink.api:Index.link", {}, {}),
    (LinkOptions, "ontolink.api:load_index", {}, {}),
    (LinkOptions, "ontolink.indexes.artifact:load_index", {}, {}),
    (LinkOptions, "ontolink.reranking.base:load_reranker", {}, {}),
    (LinkOptions, "ontolink.engines:open_engine", {}, {}),
    (LinkOptions, "ontolink.reranking.base:Reranker", {}, {}),
    (LinkOptions, "ontolink.reranking.architectures.blink:CrossEncoderReranker", {}, {}),
    (LinkOptions, "ontolink.reranking.architectures.res:ResReranker", {}, {}),
    (LinkOptions, "ontolink.ranking.ranker:Ranker.bind", {}, {
        "top_k": "the depth a ranker was fitted at (FITTING_DEPTH); link passes its own --top-k"}),
    (AnnotateOptions, "ontolink.recognition.annotate:annotate_documents", {"context_characters": "context_chars"}, {}),
    (AnnotateOptions, "ontolink.recognition.annotate:AnnotateBatches", {}, {}),
    (AnnotateOptions, "ontolink.recognition.matcher:ConceptMatcher",
     {"min_characters": "min_chars", "equivalents": "equivalent_words"}, {}),
    (AnnotateOptions, "ontolink.recognition.ngrams:candidate_spans", {}, {}),
    (AnnotateOptions, "ontolink.recognition.matcher:ConceptMatcher.spans", {}, {
        "nesting": "the matcher's primitive keeps every match unless asked (annotate_documents passes --nesting)"}),
    (AnnotateOptions, "ontolink.recognition.matcher:ConceptMatcher.matches", {}, {
        "nesting": "the matcher's primitive keeps every match unless asked (annotate_documents passes --nesting)"}),
    (AnnotateOptions, "ontolink.api:annotate", {"context_characters": "context_chars"}, {}),
    (TrainRankerOptions, "ontolink.ranking.train:train_ranker", {}, {
        "second_encoder": "takes the resolved spec (second_encoder_spec(options.second_encoder)); None: none",
        "gate_coverage": "takes `options.gate_coverage or None`; None: no gate"}),
    (TrainRankerOptions, "ontolink.ranking.train:ranker_queries", {"synonym_count": "synonym_queries"}, {}),
    (TrainRankerOptions, "ontolink.ranking.fit:fit_ranker", {}, {
        "gate_coverage": "takes `options.gate_coverage or None`; None: no gate"}),
    (TrainRankerOptions, "ontolink.ranking.fit:fit_conditional_logit", {}, {}),
    (TrainRankerOptions, "ontolink.ranking.queries:synonym_queries", {}, {}),
    (TrainRankerOptions, "ontolink.ranking.queries:pair_queries", {"hold_out_fraction": "hold_out"}, {}),
    (TrainRankerOptions, "ontolink.ranking.features:CandidateFeatures", {}, {}),
    (TrainRankerOptions, "ontolink.ranking.ranker:Ranker.bind", {}, {}),
    (TrainRankerOptions, "ontolink.api:train_ranker", {}, {}),
    (TrainRerankerOptions, "ontolink.reranking.train_cross_encoder:train_reranker", {}, {}),
    (TrainRerankerOptions, "ontolink.reranking.train_read_and_select:train_res_reranker",
     {"width": "select_width", "layers": "select_layers", "heads": "select_heads", "dropout": "select_dropout"}, {}),
    (TrainRetrieverOptions, "ontolink.training.retriever:train_retriever", {}, {}),
    (TrainRetrieverOptions, "ontolink.training.retriever:build_model", {}, {}),
    (TrainRetrieverOptions, "ontolink.training.retriever:encode_batch", {}, {}),
    (TrainMultivectorOptions, "ontolink.training.multivector:train_multivector", {}, {}),
    (TrainMultivectorOptions, "ontolink.indexes.token_encoder:TokenEncoder", {}, {
        "device": "takes a resolved device (the trainer resolves auto first)"}),
    (TrainSpanScorerOptions, "ontolink.recognition.train_span_scorer:train_span_scorer", {}, {}),
    (TrainSpanScorerOptions, "ontolink.recognition.span_scorer:fit_span_scorer", {}, {}),
    (TrainSpanScorerOptions, "ontolink.recognition.span_scorer:training_texts", {}, {}),
    (FilterOptions, "ontolink.aliases.filter:filter_aliases", {}, {}),
    (GenAliasesOptions, "ontolink.aliases.generate:generate_aliases", {}, {}),
    (GenAliasesOptions, "ontolink.aliases.generate:build_messages", {}, {}),
    (GenAliasesOptions, "ontolink.aliases.generate:ExamplePool", {}, {}),
    (GenAliasesOptions, "ontolink.aliases.llm.base:LLMBackend", {}, {}),
    (GenAliasesOptions, "ontolink.aliases.llm.transformers_local:TransformersBackend", {}, {}),
    (GenAliasesOptions, "ontolink.aliases.llm.vllm_offline:VLLMBackend", {}, {}),
    (GenAliasesOptions, "ontolink.aliases.llm.openai_http:OpenAIBackend", {}, {}),
    (SelectEntitiesOptions, "ontolink.aliases.select:select_entities", {}, {}),
    (SelectEntitiesOptions, "ontolink.aliases.select:BestEntities", {}, {}),
    (MakePairsOptions, "ontolink.aliases.pairs:concept_bridge", {"min_votes": "concept_min_votes"}, {}),
    (EvalOptions, "ontolink.evaluation.files:evaluate", {}, {
        "labels": "None and () both mean: labels from the file names"}),
    (EvalOptions, "ontolink.evaluation.files:evaluate_files", {"table": "table_name"}, {
        "labels": "None and () both mean: labels from the file names",
        "fmt": "returns the report as text, json unless asked (eval's None picks table on a terminal)"}),
    (EvalOptions, "ontolink.api:evaluate", {"gold": "gold_path", "by": "by_field"}, {
        "labels": "None and () both mean: labels from the file names"}),
    (ConvertOptions, "ontolink.formats.sssom:SSSOMWriter", {}, {}),
    (ConvertOptions, "ontolink.formats.convert:document_mentions", {"context_characters": "context_chars"}, {}),
    (ConvertOptions, "ontolink.formats.convert:IdRewriter", {}, {}),
    (ConvertOptions, "ontolink.formats.convert:write_linked", {}, {}),
    (EmbedKgOptions, "ontolink.kg.embed:embed_kg", {}, {}),
    (EmbedKgOptions, "ontolink.kg.embedders:KGEmbedder.fit", {}, {}),
    (EmbedKgOptions, "ontolink.kg.embedders.rdf2vec:RDF2Vec.fit", {}, {}),
    (EmbedKgOptions, "ontolink.kg.embedders.pykeen_kg:PyKEENEmbedder.fit", {}, {}),
    (AlignFitOptions, "ontolink.kg.alignment.workflows:train_alignment", {"normalize": "kg_normalize"}, {}),
    (AlignFitOptions, "ontolink.kg.alignment.fit_heads:TrainOptions", {}, {}),
    (AlignFitOptions, "ontolink.kg.alignment.fit_heads:train_alignment_model", {}, {
        "device": "takes a resolved device (train_alignment resolves auto first)"}),
    (AlignFitOptions, "ontolink.kg.alignment.model:alignment_model", {}, {
        "combine": "None: a model without a hybrid text block (train_alignment passes combine for hybrid only)"}),
    (AlignFitOptions, "ontolink.kg.alignment.heads:make_head", {}, {}),
    (AlignFitOptions, "ontolink.kg.alignment.heads:MLPHead", {}, {}),
    (AlignFitOptions, "ontolink.kg.alignment.heads:CrossAttentionHead", {}, {}),
    (AlignFitOptions, "ontolink.kg.alignment.model:_module().__init__", {}, {
        "combine": "None: a model without a hybrid text block (train_alignment passes combine for hybrid only)"}),
    (AlignFitOptions, "ontolink.kg.alignment.compose:Composer", {"normalize": "kg_normalize"}, {
        "device": "takes a resolved device (train_alignment resolves auto first)"}),
    (AlignFitOptions, "ontolink.kg.alignment.cv:grouped_holdout", {"fraction": "validation_fraction"}, {}),
    (AlignFitOptions, "ontolink.kg.alignment.encoding:triple_encoding", {"normalize": "kg_normalize"}, {
        "device": "takes a resolved device (train_alignment resolves auto first)"}),
    (AlignCvOptions, "ontolink.kg.alignment.workflows:cross_validate", {"normalize": "kg_normalize"}, {}),
    (AlignCvOptions, "ontolink.kg.alignment.cv:grouped_folds", {}, {}),
    (AlignEncoderOptions, "ontolink.kg.alignment.text:TextEmbedder", {"model": "encoder"}, {}),
    (AlignRetrieveOptions, "ontolink.kg.alignment.workflows:retrieve", {}, {}),
    (AlignRetrieveOptions, "ontolink.kg.alignment.retrieve:rank_queries", {}, {}),
    (AlignRetrieveOptions, "ontolink.kg.alignment.retrieve:retrieved_records", {}, {}),
    (AlignRetrieveOptions, "ontolink.kg.alignment:load_alignment", {}, {}),
]


def _function(spec):
    module, qualname = spec.split(":")
    found = importlib.import_module(module)
    for part in qualname.split("."):
        # "_module()": a class made when first asked (its module imports torch only then)
        found = getattr(found, part[:-2])() if part.endswith("()") else getattr(found, part)
    return found


def mismatches(options, function, renamed=None, skipped=()):
    """``(parameter, field, library default, options default)`` for each keyword of ``function`` whose default
    differs from its options field's, and the number of parameters compared. An options field defaulting to None
    leaves the choice to the library (``batch_size=None``: the step's own), so it is compared only with None."""
    fields = {field.name: field.default for field in dataclasses.fields(options)
              if field.default is not dataclasses.MISSING}
    renamed = renamed or {}
    compared, wrong = 0, []
    for name, parameter in inspect.signature(function).parameters.items():
        field = renamed.get(name, name)
        if parameter.default is inspect.Parameter.empty or field not in fields or name in skipped:
            continue
        expected = fields[field]
        if expected is None and parameter.default is not None:
            continue
        compared += 1
        if parameter.default != expected or type(parameter.default) is not type(expected):
            wrong.append((name, field, parameter.default, expected))
    return wrong, compared


@pytest.mark.parametrize("options, spec, renamed, skipped", CALL_PATHS,
                         ids=[f"{row[0].__name__}-{row[1].split(':')[1]}" for row in CALL_PATHS])
def test_library_defaults_are_the_options_defaults(options, spec, renamed, skipped):
    function = _function(spec)
    assert set(renamed) <= set(inspect.signature(function).parameters), f"{spec} has no parameter of {renamed}"
    assert set(skipped) <= set(inspect.signature(function).parameters), f"{spec} has no parameter of {skipped}"
    wrong, compared = mismatches(options, function, renamed, skipped)
    assert compared, f"{spec} shares no defaulted keyword with {options.__name__}: drop it from CALL_PATHS"
    assert not wrong, "\n".join(f"{spec}({name}={value!r}) but {options.__name__}.{field} = {expected!r}"
                                for name, field, value, expected in wrong)


def literal_copies(options, function, renamed=None, skipped=()):
    """The parameters of ``function`` compared with ``options`` whose default is written out as a literal (other
    than None) instead of naming its source: equal today, free to drift tomorrow."""
    # a field defaulting to None leaves the value to the library (as in mismatches): its literal is its own
    fields = {field.name for field in dataclasses.fields(options)
              if field.default is not dataclasses.MISSING and field.default is not None}
    renamed = renamed or {}
    source = textwrap.dedent(inspect.getsource(function.__init__ if inspect.isclass(function) else function))
    node = next(node for node in ast.walk(ast.parse(source))
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))
    arguments = node.args.posonlyargs + node.args.args
    pairs = list(zip(arguments[len(arguments) - len(node.args.defaults):], node.args.defaults))
    pairs += [(argument, default) for argument, default in zip(node.args.kwonlyargs, node.args.kw_defaults)
              if default is not None]
    copies = []
    for argument, default in pairs:
        if renamed.get(argument.arg, argument.arg) not in fields or argument.arg in skipped:
            continue
        try:
            value = ast.literal_eval(default)
        except ValueError:
            continue  # a name: the options field, a constant both read, AUTO_DEVICE...
        if value is not None:
            copies.append(f"{argument.arg}={ast.unparse(default)}")
    return copies


@pytest.mark.parametrize("options, spec, renamed, skipped",
                         [row for row in CALL_PATHS if not dataclasses.is_dataclass(_function(row[1]))],
                         ids=[f"{row[0].__name__}-{row[1].split(':')[1]}" for row in CALL_PATHS
                              if not dataclasses.is_dataclass(_function(row[1]))])
def test_library_defaults_name_their_source(options, spec, renamed, skipped):
    """A default written out again (``top_k: int = 64`` beside ``top_k: int = 64`` in the options) passes the
    check above until one of them changes; each names its source instead."""
    copies = literal_copies(options, _function(spec), renamed, skipped)
    assert not copies, f"{spec}: {', '.join(copies)} repeat {options.__name__}'s defaults: name them " \
                       f"({options.__name__}.FIELD, AUTO_DEVICE, DEFAULT_SEED or a constant both read)"


def test_make_pairs_sources_default_is_the_commands():
    """build_matcher takes --sources as a sequence; its default is the command's comma-separated one."""
    from ontolink.aliases.pairs import build_matcher

    default = inspect.signature(build_matcher).parameters["sources"].default
    assert tuple(default) == tuple(MakePairsOptions.sources.split(",")) == ("name", "alias")


def test_a_changed_default_is_found():
    """The check above fails when one side changes: a library keyword one off its options field, and one of
    another type (64.0 for 64)."""
    def drifted(top_k=TrainRerankerOptions.top_k + 1, negatives=float(TrainRerankerOptions.negatives),
                epochs=TrainRerankerOptions.epochs):
        return top_k, negatives, epochs

    wrong, compared = mismatches(TrainRerankerOptions, drifted)
    assert compared == 3
    assert [name for name, *_ in wrong] == ["top_k", "negatives"]
    # and a default that equals its field's but is written out again
    assert literal_copies(TrainRerankerOptions, drifted) == []

    def copied(top_k=64, epochs=TrainRerankerOptions.epochs, backbone=None):
        return top_k, epochs, backbone
    assert literal_copies(TrainRerankerOptions, copied) == ["top_k=64"]
