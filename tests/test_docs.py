"""The documentation holds together: the README stays a short user document whose headline numbers come
from results files the benchmark scripts wrote, every docs/ page is reachable from it, every relative link
resolves, and no page points at notes outside the repository."""

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DOCS = REPO / "docs"
RESULTS = REPO / "benchmarks" / "results"
HEADLINE = "## Quality and speed against the peers"
NUMBER = re.compile(r"(?<![\w.@])\d[\d,]*(?:\.\d+)*")  # a count, a score, a version; not the 1 of R@1
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
ANCHORED_LINK = re.compile(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)")


def pages():
    return [README, *sorted(DOCS.glob("*.md"))]


def headline_rows():
    """The data rows of the first table under the headline section, as lists of cells."""
    text = README.read_text(encoding="utf-8")
    assert HEADLINE in text, f"README has no {HEADLINE!r} section"
    section = text.split(HEADLINE, 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    assert len(lines) > 2, "the headline section has no table"
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


def test_readme_is_a_short_user_document():
    size = len(README.read_bytes())
    assert size <= 12 * 1024, f"README.md is {size:,} bytes; the limit is 12,288 (move detail to docs/)"


def test_every_headline_number_was_written_by_a_benchmark_script():
    results = {path.name: path.read_text(encoding="utf-8") for path in sorted(RESULTS.glob("*.md"))}
    assert results, "benchmarks/results/ holds no results file"
    assert all(text.startswith("# ") and "- commit: " in text and "- command: `python benchmarks/" in text
               for text in results.values()), "a results file lacks the header benchmarks/results_file.py writes"
    missing = []
    for row in headline_rows():
        for cell in row[1:]:  # the first cell names the system; the others are measured
            for number in NUMBER.findall(cell):
                pattern = re.compile(r"(?<![\d.,])" + re.escape(number) + r"(?![\d]|[.,]\d)")
                if not any(pattern.search(text) for text in results.values()):
                    missing.append(f"{number} ({row[0]})")
    assert not missing, "README headline numbers found in no benchmarks/results/*.md: " + ", ".join(missing)


def test_every_docs_page_is_reachable_from_the_readme():
    """Linked from the README, or from a docs page that is (a new page is linked from its topic's page)."""
    reached, todo = set(), [README]
    while todo:
        page = todo.pop()
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            linked = (page.parent / target).resolve()
            if linked.parent == DOCS and linked.suffix == ".md" and linked.exists() and linked not in reached:
                reached.add(linked)
                todo.append(linked)
    unreached = [page.name for page in DOCS.glob("*.md") if page.resolve() not in reached]
    assert not unreached, f"docs pages no link leads to from the README: {', '.join(sorted(unreached))}"


def anchors(page):
    """The anchors GitHub gives a page's headings: lowercased, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


@pytest.mark.parametrize("page", pages(), ids=lambda page: page.name)
def test_relative_links_resolve(page):
    broken = []
    for target, anchor in ANCHORED_LINK.findall(page.read_text(encoding="utf-8")):
        if "://" in target or target.startswith("mailto:"):
            continue
        linked = page.parent / target if target else page
        if not linked.exists() or (anchor and linked.suffix == ".md" and anchor not in anchors(linked)):
            broken.append(f"{target}#{anchor}" if anchor else target)
    assert not broken, f"{page.relative_to(REPO)} has broken links: {', '.join(broken)}"


@pytest.mark.parametrize("page", pages(), ids=lambda page: page.name)
def test_pages_stand_alone(page):
    text = page.read_text(encoding="utf-8")
    found = [word for word in ("METHODS.md", "CONTRACT.md", "this round", "rerun") if word in text]
    found += re.findall(r"\bsession \d+", text)
    found += [word for word in re.findall(r"\b[0-9a-f]{7,12}\b", text)  # a commit hash
              if re.search(r"\d", word) and re.search(r"[a-f]", word)]
    assert not found, f"{page.relative_to(REPO)} mentions {', '.join(found)}: notes outside the repository " \
                      "or a lab notebook's words (results and their history belong in benchmarks/results/ and git)"
