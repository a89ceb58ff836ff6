"""How `ontolink eval` shows several files: mean ± std, or side by side.

Mean ± std means something only over runs of one system that differ by chance (seeds, folds); over
different systems it is a number nobody can use. Linked records carry nothing that names the system
that made them, so the decision rests on what is known of every run, in this order:

1. ``--aggregate`` asks for mean ± std, ``--side-by-side`` for one row per file;
2. Retrieved records from `align cv` carry their ``fold``: folds of one run, mean ± std;
3. otherwise the file paths: files whose paths are the same once one run of digits is set aside
   (``seed0.jsonl seed42.jsonl``, ``out/run__0.jsonl.gz out/run__42.jsonl.gz``, ``s1/linked.jsonl
   s2/linked.jsonl``) are one system's seeds: mean ± std; any other difference (``frozen.jsonl
   ranker.jsonl``) makes them different systems, shown side by side.

The footer of the tables says which was chosen and why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

from ontolink.core.io import display_name
from ontolink.evaluation.report import MEAN, SIDE

_DIGITS = re.compile(r"(\d+)")


def differ_in_one_number(paths: Sequence[str]) -> bool:
    """True when the paths are the same text once one run of digits (the same place in each) is set aside:
    seed0.jsonl / seed42.jsonl, yes; frozen.jsonl / ranker.jsonl or a1b1 / a2b2, no."""
    parts = [_DIGITS.split(str(path)) for path in paths]
    if len({len(split) for split in parts}) != 1:
        return False
    varying = [position for position in range(len(parts[0])) if len({split[position] for split in parts}) > 1]
    return len(varying) <= 1 and all(position % 2 == 1 for position in varying)  # odd places hold the digits


@dataclass(frozen=True)
class Combination:
    """How several files are shown: ``mode`` is None (one file), report.MEAN or report.SIDE; ``labels`` name
    the files; ``reason`` says why (the footer of the tables)."""

    mode: str | None
    labels: tuple[str, ...]
    reason: str = ""


def short_name(path: str) -> str:
    """A file's name without its folders and its .jsonl / .json / .gz endings: out/linked/frozen.jsonl.gz -> frozen."""
    if path in (None, "-"):
        return display_name(path)
    name = PurePath(str(path)).name
    for ending in (".gz", ".jsonl", ".json"):
        name = name.removesuffix(ending)
    return name or str(path)


def unique_labels(files: Sequence[str], labels: Sequence[str] | None = None) -> tuple[str, ...]:
    """--label values in order, else the files' short names (the paths as given when two share a name); a
    name given twice gets #2, #3 after it so no two files share a row."""
    names = [short_name(path) for path in files]
    if len(set(names)) < len(names):
        names = [display_name(path) for path in files]
    if labels:
        names = list(labels)
    seen: dict[str, int] = {}
    unique = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name} #{seen[name]}")
    return tuple(unique)


def combination(files: Sequence[str], labels: Sequence[str] | None = None, aggregate: bool | None = None,
                folds: bool = False) -> Combination:
    """The Combination of ``files`` (module docstring): ``aggregate`` True / False is --aggregate /
    --side-by-side, None decides; ``folds`` is True for `align cv` records."""
    names = unique_labels(files, labels)
    if len(files) <= 1:
        return Combination(None, names)
    if aggregate is not None:
        return Combination(MEAN if aggregate else SIDE, names, "--aggregate" if aggregate else "--side-by-side")
    if folds:
        return Combination(MEAN, names, "folds of `align cv`")
    if differ_in_one_number(files):
        return Combination(MEAN, names, "seeds of one system: the paths differ only in a number; "
                                        "--side-by-side shows each")
    return Combination(SIDE, names, "different systems: the paths differ in more than a number; "
                                    "--aggregate gives mean ± std")
