"""The man pages are installed with the package, into <prefix>/share/man/man1 where `man` finds them beside
a virtual environment's bin/ (`man ontolink-link`)."""

import glob
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

REPO = Path(__file__).resolve().parents[1]


def test_every_man_page_is_a_data_file_of_the_package():
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = setuptools["data-files"]["share/man/man1"]
    installed = {Path(path).name for pattern in patterns for path in glob.glob(str(REPO / pattern))}
    pages = {path.name for path in (REPO / "man").glob("*.1")}
    assert pages and installed == pages
    assert "ontolink-link.1" in installed and "ontolink.1" in installed
