import click

from ontolink.aliases.options import MakePairsOptions
from ontolink.cli.options import quiet_option, seed_option
from ontolink.cli.options import config_option, input_options, ontology_option, output_option
from ontolink.aliases.pairs import make_pairs_files


@click.command("make-pairs")
@ontology_option()
@click.option("--mentions", "mentions_path", type=click.Path(dir_okay=False, allow_dash=True),
              help="The unlabeled Mention JSONL to pair (the corpus given to select-entities); every source but "
                   "ontology reads it.")
@input_options(help_text="Filtered-aliases records, JSONL (from filter) ('-' is stdin; .gz is read transparently).")
@output_option(help_text="Pair records, JSONL ('-' is stdout; .gz is compressed).")
@click.option("--sources", default=MakePairsOptions.sources, show_default=True,
              help="Pair sources: name (P1, m = an entity's name), alias (P2, m = a kept alias), synonym "
                   "(P_Syn, m = a curated synonym). name,alias is P_Gen; add synonym for P_Gen ∪ P_Syn. "
                   "concept: mentions labeled in another vocabulary (their gold ids), bridged to the entity "
                   "their concept's name-matching mentions agree on. ontology: no corpus, each synonym of the "
                   "ontology a mention of its entity (self-alignment pairs for train retriever).")
@click.option("--concept-min-votes", type=click.IntRange(min=1), default=MakePairsOptions.concept_min_votes,
              show_default=True,
              help="With --sources concept: mentions of a concept that must name the entity it is bridged to "
                   "(and 4x as many as name any other).")
@click.option("--distinct", is_flag=True,
              help="One pair per (normalised mention, entity), the first: a repeated mention is one query.")
@click.option("--ambiguous", "ambiguous_path", type=click.Path(dir_okay=False),
              help="Write the dropped ambiguous mentions here (JSONL with the entities they matched).")
@click.option("--ontology-pairs", type=click.IntRange(min=1),
              help="With --sources ontology: at most this many of them, a sample drawn with --seed (default: "
                   "all; on a CPU, train retriever takes about 20 pairs a second).")
@seed_option
@quiet_option
@config_option
def command(**options):
    """Pair unlabeled mentions with entities by exact (normalised) match.

    Reads Filtered-aliases records (from filter; not needed with
    --sources name,synonym: pass -i /dev/null) and streams --mentions,
    writing a Pair record per matched mention: the Mention fields plus
    "entity_id", "source" (name, synonym or alias, in that precedence) and
    "alias" (the matched string). Matching lowercases, trims and collapses
    whitespace. A mention whose text matches several entities through the
    same source is ambiguous: it is counted, reported and dropped.

    --sources concept reads a corpus labeled in another vocabulary (e.g.
    BC5CDR's MeSH ids, from `ontolink convert`): a concept whose mentions
    that are one entity's name or synonym agree on that entity
    (--concept-min-votes, and 4x any other) lends it every mention it has,
    "source": "concept", "alias": the bridging name. It pairs what no other
    chosen source paired, and reads --mentions whole (two passes).

    --sources ontology needs no corpus: each synonym of the ontology (of
    --synonym-scopes) is written as a mention of its entity, "source":
    "ontology", after any corpus pairs. A synonym that also names another
    entity is ambiguous and dropped. These are the pairs SapBERT learns from:
    `train retriever` on them learns how the ontology names its entities.

    \b
    Examples:
      ontolink make-pairs --ontology hpo --mentions mentions.jsonl -i filtered.jsonl > pairs.jsonl
      ontolink make-pairs --ontology hpo --mentions mentions.jsonl --sources name,alias,synonym < filtered.jsonl
      ontolink make-pairs --ontology hpo --mentions mentions.jsonl --sources synonym -i /dev/null
      ontolink make-pairs --ontology hpo --mentions cdr.jsonl --sources concept --distinct -i /dev/null
      ontolink make-pairs --ontology lpt.json --sources ontology -i /dev/null > synonym-pairs.jsonl
    """
    make_pairs_files(MakePairsOptions(**options))
