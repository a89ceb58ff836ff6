"""Tab-separated rows for readers of TSV: csv.writer, with a bare carriage return quoted too.

csv quotes a field holding the delimiter, the quote character or a character of its line terminator ("\n"
here), not a lone "\r": a mention from text with old Mac line ends split its row for Python's csv reader,
pandas and the sssom package, which dropped the mapping.
"""

import csv
import re

# what ends a line for str.splitlines (and so for readers of line-based text), and with a tab what ends a TSV field
LINE_BREAKS = re.compile(r"[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
FIELD_BREAKS = re.compile(r"[\t\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


class TabSeparatedRows:
    """``writerow`` as csv.writer's (tab-delimited, "\n"-terminated, quoted where needed) on ``stream``."""

    def __init__(self, stream):
        self._minimal = csv.writer(stream, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        # a row with a bare CR is written with every field quoted: the one writer setting that quotes it
        self._quoted = csv.writer(stream, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_ALL)

    def writerow(self, row):
        cells = list(row)
        writer = self._quoted if any(isinstance(cell, str) and "\r" in cell for cell in cells) else self._minimal
        writer.writerow(cells)
