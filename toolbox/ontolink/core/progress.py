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


def process_seconds():
    """Wall seconds since this process started (Linux: its start in /proc, so interpreter start-up and
    imports count), or None where that is not known: what a step reports as its start-up."""
    import os
    import time

    try:
        with open("/proc/self/stat", encoding="ascii") as handle:
            # the fields after the command name, which is in parentheses and may hold spaces
            fields = handle.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime", encoding="ascii") as handle:
            uptime = float(handle.read().split()[0])
        return max(0.0, uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None
