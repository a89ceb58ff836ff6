from pathlib import Path

import click

from ontolink.cli.main import cli
from ontolink.cli.manpages import write_man_pages

MAN = Path(__file__).resolve().parents[1] / "man"


def page_names(command, prefix="ontolink"):
    names = {f"{prefix}.1"}
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            names |= page_names(sub, f"{prefix}-{name}")
    return names


def test_man_pages_are_current(tmp_path):
    fresh = {page.name: page.read_text() for page in write_man_pages(tmp_path)}
    committed = {page.name: page.read_text() for page in MAN.glob("*.1")}
    assert set(fresh) == page_names(cli)
    stale = sorted(name for name in fresh if committed.get(name) != fresh[name])
    extra = sorted(set(committed) - set(fresh))
    assert not stale and not extra, f"man/ is stale ({stale}, extra {extra}): run `python -m ontolink.cli.manpages`"


def test_pages_have_whole_names_exit_status_environment_see_also_and_unwrapped_examples():
    page = (MAN / "ontolink-link.1").read_text()
    assert "ontolink\\-link \\- Add the top-K entities to every Mention record.\n" in page
    for section in (".SH EXIT STATUS", ".SH ENVIRONMENT", ".SH SEE ALSO"):
        assert section in page
    assert ".nf\nExamples:\n  ontolink link --index idx/hpo" in page and "\n.fi\n" in page
    assert "METHODS.md" not in page and "CONTRACT.md" not in page
    assert all("METHODS" not in path.read_text() and "CONTRACT" not in path.read_text() for path in MAN.glob("*.1"))
