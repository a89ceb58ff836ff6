"""Progress bars on stderr, shown only when stderr is a terminal (tqdm)."""

import sys


def progress_bar(total=None, desc=None, unit="it"):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=not sys.stderr.isatty(),
                dynamic_ncols=True, leave=False)
