"""Linked mentions as a TSV table: one row per (mention, rank), for reading without jq.

A mention without candidates (or marked NIL with none kept) still gets one row, with an empty rank.
"""

import csv

COLUMNS = ("mention_id", "mention", "rank", "id", "name", "score", "matched_name", "matched_kind", "matched_by")


class CandidateTSVWriter:
    """Rows to ``stream`` as records come (a header first); ``flush`` after each batch."""

    def __init__(self, stream):
        self.stream = stream
        self.rows = csv.writer(stream, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        self.rows.writerow(COLUMNS)
        self.count = 0  # mentions written

    def write(self, record):
        candidates = record.get("candidates") or [{}]
        for rank, candidate in enumerate(candidates, 1):
            self.rows.writerow([record.get("id", ""), record.get("mention", ""), rank if candidate else "",
                                *(_cell(candidate.get(column)) for column in COLUMNS[3:])])
        self.count += 1

    def flush(self):
        self.stream.flush()


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
