"""Progress bars on stderr, shown only when stderr is a terminal (tqdm)."""

import sys


def progress_bar(total=None, desc=None, unit="it"):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=not sys.stderr.isatty(),
                dynamic_ncols=True, leave=False)


def counting(items, desc, unit="record", total=None):
    """``items`` unchanged, counted on a progress bar (count and rate; on a terminal only)."""
    with progress_bar(total=total, desc=desc, unit=unit) as progress:
        for item in items:
            yield item
            progress.update()
