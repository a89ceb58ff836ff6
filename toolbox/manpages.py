"""Write man/ from the click command definitions (click-man), so the pages cannot drift.

    python -m toolbox.manpages [DIRECTORY]

tests/test_man.py regenerates the pages and fails when man/ is stale.
"""

import sys
from pathlib import Path

# A fixed date keeps the pages byte-identical between runs; bump it with the version.
MAN_DATE = "2026-11-29"


def write_man_pages(directory):
    from click_man.core import write_man_pages as click_man_write

    from toolbox import __version__
    from toolbox.cli import cli

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    click_man_write("ontolink", cli, version=__version__, target_dir=str(directory), date=MAN_DATE)
    return sorted(directory.glob("*.1"))


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "man"
    for page in write_man_pages(target):
        print(page)
