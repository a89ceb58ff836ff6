import click

from ontolink.cli.options import quiet_option
from ontolink.cli.options import aliases_option, config_option, device_option, engine_options, input_options, \
    ontology_option, output_option, subset_options
from ontolink.recognition.matcher import NESTING_RULES, SHARED_NAMES
from ontolink.core.registry import LazyChoice
from ontolink.recognition.options import AnnotateOptions
from ontolink.formats import reader_names
from ontolink.recognition.annotate import annotate_files


def _readers():
    return reader_names()


@click.command("annotate")
@input_options(help_text="Documents: PubTator, BioC XML or JSON, or plain text (--from, else the file name)"
                          " ('-' is stdin; .gz is read transparently).")
@output_option(help_text="Mention records found, JSONL ('-' is stdout; .gz is compressed).")
@click.option("--from", "source_format", type=LazyChoice(_readers),
              help="Document format.  [default: from the file name; stdin: text]")
@ontology_option(required=True, help_text="Ontology whose names are looked for: a file or 'hpo'.")
@click.option("--roots", help="Comma-separated ids: only these entities and their descendants are looked for "
                              "(e.g. HP:0000118, HPO's phenotypic abnormalities).")
@subset_options
@click.option("--min-chars", type=click.IntRange(1), default=AnnotateOptions.min_chars, show_default=True,
              help="Names shorter than this (after folding) are not looked for.")
@click.option("--nesting", type=click.Choice(NESTING_RULES), default=AnnotateOptions.nesting, show_default=True,
              help="Names inside a longer match that are kept too: none, all, or those whose entity is the outer "
                   "entity or one of its ancestors (\"colitis\" in \"ulcerative colitis\", as GSC+ annotates).")
@click.option("--nested", is_flag=True, help="Same as --nesting all.")
@click.option("--any-order/--in-order", default=AnnotateOptions.any_order, show_default=True,
              help="Match a name's content words in any order (\"absence of speech\" for \"Absent speech\").")
@click.option("--word-forms/--no-word-forms", default=AnnotateOptions.word_forms, show_default=True,
              help="Join a word's inflections and derivations (Snowball stems, then ending alternations learned "
                   "from the ontology's synonyms: \"dysplastic\" for \"dysplasia\"); --no-word-forms: "
                   "stems only.")
@click.option("--max-gaps", type=click.IntRange(0), default=AnnotateOptions.max_gaps, show_default=True,
              help="Other content words allowed between a name's words.")
@click.option("--optional-modifiers/--no-optional-modifiers", default=AnnotateOptions.optional_modifiers,
              show_default=True,
              help="Also find a name without its modifiers (words that, added to a parent's name, make the "
                   "child's name in 25 entities or more: \"vertical talus\" for Congenital vertical talus), where "
                   "no other name has the words left.")
@click.option("--equivalent-words/--no-equivalent-words", default=AnnotateOptions.equivalent_words, show_default=True,
              help="Also find a name with one word replaced by one the ontology uses for it: two names of one "
                   "entity that differ in that one word, in 15 entities or more (\"anomaly\" for "
                   "\"abnormality\", \"renal\" for \"kidney\").")
@click.option("--wordnet", "wordnet_dir", type=click.Path(), envvar="ONTOLINK_WORDNET",
              help="A WordNet database, a directory or a zip holding data.adj and data.noun (/usr/share/wordnet "
                   "of Debian's wordnet-base; NLTK's corpora/wordnet.zip): its pertainyms are equivalent words "
                   "too (\"otic\" for \"ear\").  [env: ONTOLINK_WORDNET]")
@aliases_option
@click.option("--shared-names", type=click.Choice(SHARED_NAMES), default=AnnotateOptions.shared_names,
              show_default=True,
              help="A name (once keyed) of an entity and of one of its ancestors: 'general' finds the ancestor only "
                   "(\"ear anomalies\": Abnormality of the ear, not also Abnormality of the outer ear); 'all' "
                   "finds both.")
@click.option("--coordination/--no-coordination", default=AnnotateOptions.coordination, show_default=True,
              help="Also the names a coordination abbreviates (\"palmar and plantar pits\": Palmar pits on the "
                   "whole phrase, \"expansion\": \"palmar pits\"), as GSC+ annotates them.")
@click.option("--abbreviations/--no-abbreviations", default=AnnotateOptions.abbreviations, show_default=True,
              help="Also each occurrence of a short form defined in the document (\"brachydactyly type C (BDC)\") "
                   "whose long form is a name.")
@click.option("--text-field", default=AnnotateOptions.text_field, show_default=True,
              help="With --from jsonl (JSON Lines documents, {\"id\", \"text\"}): the field holding the text.")
@click.option("--type", "entity_type",
              help="The \"type\" of every mention.  [default: its entity's type in the ontology (a type column or "
                   "field), else Entity]")
@click.option("--index", "index_dir", type=click.Path(file_okay=False),
              help="Also ask this index about word n-grams the dictionary missed.")
@click.option("--dense-threshold", type=float, default=AnnotateOptions.dense_threshold, show_default=True,
              help="With --index: an n-gram is a mention when its best name scores at least this.")
@click.option("--span-scorer", "span_scorer_dir", type=click.Path(file_okay=False),
              help="With --index: a span scorer from `ontolink train span-scorer`; only the n-grams it passes are "
                   "asked about (a sixth of them on abstracts: the index encodes that much less).")
@click.option("--max-words", type=click.IntRange(1), default=AnnotateOptions.max_words, show_default=True,
              help="With --index: longest n-gram asked about.")
@click.option("--context-chars", type=click.IntRange(0), default=AnnotateOptions.context_chars, show_default=True,
              help="Context kept on each side of a mention: a window, so the output grows with the mentions (an "
                   "abstract fits whole). 0: the whole document for every mention (its length times its mentions).")
@click.option("--batch-size", type=click.IntRange(1), default=AnnotateOptions.batch_size, show_default=True,
              help="With --engine ray: documents per batch sent to a worker.")
@device_option
@engine_options
@quiet_option
@config_option
def command(**options):
    """Find mentions of an ontology's names in documents: Mention JSONL for `link`.

    Reads plain text (one document per line, 'ID<TAB>text' or just text),
    JSON Lines documents (--from jsonl, {"id", "text"}; --text-field), PubTator
    or BioC documents (their annotations are ignored) and writes a
    Mention record per name found: {"id": "DOC:START-END", "doc_id",
    "start", "end", "mention", "context_left", "context_right", "type",
    "matched_by", "matched_ids"}, and for a name expanded from a
    coordination "expansion", the name written out ("palmar pits" for
    "palmar and plantar pits"), which `link` searches (for a short form,
    its long form). A name or synonym
    is found where its content words (function words such as "of" and
    "the" dropped) occur
    together inside one clause, in any order and in any word form
    ("malformations of the kidneys" for "Kidney malformation"); a one-word
    name only in its own plural or spelling variants; short all-capital
    abbreviations exactly. Overlapping matches keep the one covering more
    words, then the more specific name; --nesting says which names inside
    it are kept too. With --index, word
    n-grams the dictionary missed become mentions when their best name
    scores at least --dense-threshold; with --span-scorer, only the
    n-grams a scorer fitted by `ontolink train span-scorer` passes. --entities
    and --where limit the entities looked for (on top of --roots: an
    ontology without a hierarchy has its type column). A mention's "type"
    is its entity's type when the ontology has a type field. Documents
    stream: output pipes into `ontolink link`.

    \b
    Examples:
      ontolink annotate --ontology hpo --roots HP:0000118 -i abstracts.txt | ontolink link --index idx/hpo
      ontolink annotate --ontology entities.tsv --field id=1,name=2,type=3 --where type=Disease -i abstracts.txt
      ontolink annotate --ontology hpo -i corpus.pubtator --from pubtator -o mentions.jsonl
      ontolink annotate --ontology hpo --from jsonl --text-field abstract < docs.jsonl > mentions.jsonl
      ontolink annotate --ontology hpo -i abstracts.txt --engine ray --workers 4 -o mentions.jsonl
      ontolink annotate --ontology hpo --index idx/hpo --dense-threshold 0.92 -i abstracts.txt
      ontolink annotate --ontology hpo --aliases kept.jsonl -i abstracts.txt | ontolink link --index idx/hpo-aliases
    """
    annotate_files(AnnotateOptions(**options))
