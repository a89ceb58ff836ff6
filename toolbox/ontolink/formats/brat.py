"""brat standoff (https://brat.nlplab.org/standoff.html): ``NAME.ann`` annotates ``NAME.txt`` beside it.

Text-bound lines ``T1<TAB>Disease 10 25;30 34<TAB>text`` become annotations (one location per
fragment) and normalisation lines ``N1<TAB>Reference T1 MESH:D003920<TAB>name`` their ids;
relations, events, attributes and notes are not mentions and are passed over. The document id is
the file's stem, its one passage the whole ``.txt`` (brat offsets count characters of that text).
A directory is read as every ``.ann`` in it, in name order.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bioc import BioCAnnotation, BioCLocation

from ontolink.core.errors import InputError
from ontolink.formats import DOCUMENT_FORMATS, DocumentFormat, decoded_lines, one_passage_document
from ontolink.core.io import display_name, open_input

if TYPE_CHECKING:
    from bioc import BioCDocument

    from ontolink.formats import Problems

PASSED_OVER = ("R", "E", "A", "M", "#", "*")  # relations, events, attributes, modifiers, notes, equivalences


def _fragments(spans: str, name: str, number: int, problems: Problems) -> list[BioCLocation] | None:
    locations = []
    for fragment in spans.split(";"):
        start, _, end = fragment.strip().partition(" ")
        if not (start.isdigit() and end.isdigit()) or int(end) <= int(start):
            problems.report(f"text-bound offsets must be 'START END' with START < END, got {fragment.strip()!r}",
                            name, number)
            return None
        locations.append(BioCLocation(int(start), int(end) - int(start)))
    return locations


def read_brat_file(path: str | Path, problems: Problems) -> BioCDocument | None:
    """The document of one ``.ann`` file and the ``.txt`` beside it."""
    path = Path(path)
    name = display_name(path)
    text_path = path.with_suffix(".txt")
    if not text_path.exists():
        raise InputError(f"brat annotations need their text beside them: {text_path.name} is missing", name)
    # the reader every input goes through: line limit, UTF-8 named with the .txt's line; "\r\n" kept, as brat
    # counts it in its offsets
    with open_input(text_path, newline="") as handle:
        text = handle.read()
    document = one_passage_document(path.stem, text, (name, None))
    passage = document.passages[0]
    by_id: dict[str, Any] = {}
    ids: dict[str, Any] = {}
    for number, line in decoded_lines(path, problems):
        if not line.strip() or line.startswith(PASSED_OVER):
            continue
        columns = line.split("\t")
        if line.startswith("T") and len(columns) >= 3:
            kind, _, spans = columns[1].partition(" ")
            locations = _fragments(spans, name, number, problems)
            if locations is None:
                continue
            annotation = BioCAnnotation()
            annotation.id = columns[0]
            annotation.infons["type"] = kind
            annotation.text = columns[2]
            for location in locations:
                annotation.add_location(location)
            annotation.source = (name, number)
            by_id[columns[0]] = annotation
            passage.add_annotation(annotation)
        elif line.startswith("N") and len(columns) >= 2:
            parts = columns[1].split(" ")
            if len(parts) != 3 or parts[1] not in by_id:
                problems.report("normalisation line needs 'Reference T<n> DB:ID' naming an earlier text-bound "
                                "annotation", name, number)
                continue
            ids.setdefault(parts[1], []).append(parts[2])
        else:
            problems.report("not a brat standoff line: expected T (text-bound), N (normalisation), "
                            "R, E, A, M, # or *", name, number)
    for key, values in ids.items():
        by_id[key].infons["identifier"] = ",".join(values)
    return document


@DOCUMENT_FORMATS.register("brat")
class BratFormat(DocumentFormat):
    summary = "brat standoff: NAME.ann beside the NAME.txt it annotates (or a directory of them)"
    suffixes = (".ann",)

    def read(self, path: str | Path, problems: Problems) -> Iterator[BioCDocument]:
        if path in (None, "-"):
            raise InputError("brat standoff cannot be read from stdin: give the .ann file or its directory")
        path = Path(path)
        files = sorted(path.glob("*.ann")) if path.is_dir() else [path]
        if not files:
            raise InputError("no .ann files in this directory", display_name(path))
        return (read_brat_file(file, problems) for file in files)
