"""The options of `ontolink convert`, one typed object with each default given here once: the command line shows
these defaults and passes the object to ``ontolink.formats.convert.convert_files``. Cheap to import: `--help`
reads it without loading what the command runs."""

from __future__ import annotations

from dataclasses import dataclass

from ontolink.formats.sssom import AUTO, OBJECT_PREFIX, TOP_N
from ontolink.core.options import STDIO


@dataclass(frozen=True)
class ConvertOptions:
    """Everything `ontolink convert` is asked, each default given here once."""

    input_path: str = STDIO
    skip_invalid: bool = False
    output_path: str = STDIO
    source_format: str | None = None  # None: from the file name; stdin: jsonl unless the target is mentions
    target_format: str | None = None  # None: mentions for documents, else from the output file name
    types: str | None = None  # comma-separated entity types to keep; None: all
    id_prefix: str | None = None  # PREFIX or TYPE=PREFIX,...: given to bare ids (gold ids read, candidate ids written)
    strip_prefix: str | None = None  # PREFIX or TYPE=PREFIX,...: taken off the ids that have it (before id_prefix)
    context_chars: int = 0  # context kept on each side of a mention; 0: the whole document text
    documents_path: str | None = None  # to a document format: the documents the mentions came from
    documents_format: str | None = None  # None: from the documents' file name
    keep_annotations: bool = False
    # SSSOM
    mapping_set_id: str = "https://w3id.org/ontolink/mappings/linked"
    license_url: str = "https://creativecommons.org/publicdomain/zero/1.0/"
    justification: str = AUTO
    predicate: str = AUTO
    top_n: int = TOP_N
    exact_min: float | None = None  # skos:exactMatch only for a best candidate scoring at least this; None: any
    close_min: float | None = None  # below it, skos:relatedMatch instead of skos:closeMatch; None: never
    object_prefix: str = OBJECT_PREFIX
    curie_map: str | None = None  # PREFIX=URI,... added to or overriding the known expansions
