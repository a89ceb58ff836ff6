from pathlib import Path

from toolbox.cli import cli
from toolbox.manpages import write_man_pages

MAN = Path(__file__).resolve().parents[1] / "man"


def test_man_pages_are_current(tmp_path):
    fresh = {page.name: page.read_text() for page in write_man_pages(tmp_path)}
    committed = {page.name: page.read_text() for page in MAN.glob("*.1")}
    assert set(fresh) == {"ontolink.1"} | {f"ontolink-{name}.1" for name in cli.commands}
    stale = sorted(name for name in fresh if committed.get(name) != fresh[name])
    extra = sorted(set(committed) - set(fresh))
    assert not stale and not extra, f"man/ is stale ({stale}, extra {extra}): run `python -m toolbox.manpages`"
