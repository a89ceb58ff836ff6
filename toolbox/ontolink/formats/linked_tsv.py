"""Linked mentions as a TSV table: one row per (mention, rank), for reading without jq.

The columns are the mention's fields (``id`` headed ``mention_id``, so as not to be read as the entity's),
``rank``, then the candidate's fields; `link --fields` / `--candidate-fields` choose them. A mention without
candidates (or marked NIL with none kept) still gets one row, with an empty rank.
"""

import json

from ontolink.formats.tab_rows import TabSeparatedRows

MENTION_COLUMNS = ("id", "mention")
CANDIDATE_COLUMNS = ("id", "name", "score", "matched_name", "matched_kind", "matched_by")
COLUMNS = ("mention_id", "mention", "rank", *CANDIDATE_COLUMNS)  # the default header


class CandidateTSVWriter:
    """Rows to ``stream`` as records come (a header first); ``flush`` after each batch.

    ``mention_columns``: fields of the Mention record before ``rank`` ("candidates" is skipped: the candidates
    are the rows); ``candidate_columns``: fields of each candidate after it.
    """

    def __init__(self, stream, mention_columns=None, candidate_columns=None):
        self.stream = stream
        self.mention_columns = tuple(column for column in (mention_columns or MENTION_COLUMNS)
                                     if column != "candidates")
        self.candidate_columns = tuple(candidate_columns or CANDIDATE_COLUMNS)
        self.rows = TabSeparatedRows(stream)
        self.rows.writerow([("mention_id" if column == "id" else column) for column in self.mention_columns]
                           + ["rank", *self.candidate_columns])
        self.count = 0  # mentions written

    def write(self, record):
        mention = [_cell(record.get(column)) for column in self.mention_columns]
        candidates = record.get("candidates") or [{}]
        for rank, candidate in enumerate(candidates, 1):
            self.rows.writerow([*mention, rank if candidate else "",
                                *(_cell(candidate.get(column)) for column in self.candidate_columns)])
        self.count += 1

    def flush(self):
        self.stream.flush()


def _cell(value):
    """A TSV cell: empty for a missing value, six significant digits for a score, JSON for a list or mapping."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
