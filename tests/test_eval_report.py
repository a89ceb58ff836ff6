"""eval's pictures and page: --plot (PNG, SVG) of three systems on real GSC+ mentions, the HTML report in
a real headless Chromium, and no matplotlib import unless asked for."""

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest
from conftest import jsonl, run, shared_path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def three_runs(small_ontology_path, dense_index, tfidf_index, tmp_path_factory):
    """GSC+ mentions whose gold lies in the HPO slice (at most 40), linked by the frozen dense index, a
    ranker over it and the TF-IDF index."""
    from ontolink.ontology import load_ontology

    ontology = load_ontology(small_ontology_path)
    records = [json.loads(line) for line in shared_path("gscplus", "mentions.jsonl").read_text().splitlines()]
    mentions = [record for record in records if all(gold in ontology for gold in record["gold"])][:40]
    directory = tmp_path_factory.mktemp("three")
    trained = run("train", "ranker", "--index", dense_index, "--synonym-queries", 100, "--features", "dense,lexical",
                  "--prior", "none", directory / "ranker")
    assert trained.exit_code == 0, trained.stderr
    files = []
    for label, options in (("frozen", ["--index", dense_index]),
                           ("ranker", ["--index", dense_index, "--ranker", directory / "ranker"]),
                           ("tfidf", ["--index", tfidf_index])):
        linked = run("link", *options, "--top-k", 16, input=jsonl(mentions))
        assert linked.exit_code == 0, linked.stderr
        path = directory / f"{label}.jsonl"
        path.write_text(linked.stdout)
        files.append(path)
    return files


def _labels():
    return ["--label", "frozen", "--label", "ranker", "--label", "tfidf"]


def test_plot_of_three_systems_writes_png_and_svg(three_runs, small_ontology_path, tmp_path):
    from PIL import Image

    for suffix in ("png", "svg"):
        result = run("eval", *three_runs, "--ontology", small_ontology_path, "--plot", tmp_path / f"plot.{suffix}",
                     *_labels(), "--format", "json")
        assert result.exit_code == 0, result.stderr
    with Image.open(tmp_path / "plot.png") as image:
        assert image.width >= 1000 and image.height >= 600
        low, high = image.convert("L").getextrema()
        assert high - low > 100  # drawn on, not a blank page
        assert len(image.convert("RGB").getcolors(1 << 20)) > 50
    root = ElementTree.parse(tmp_path / "plot.svg").getroot()
    assert root.tag.endswith("svg")
    text = (tmp_path / "plot.svg").read_text()
    for expected in ("frozen", "ranker", "tfidf", "Recall@K", "too-specific", "top-1 wrong"):
        assert expected in text
    refused = run("eval", *three_runs, "--plot", tmp_path / "plot.gif")
    assert refused.exit_code == 2 and ".svg, .png or .pdf" in refused.stderr
    wrong_labels = run("eval", *three_runs, "--plot", tmp_path / "plot.svg", "--label", "one")
    assert wrong_labels.exit_code == 2 and "--label" in wrong_labels.stderr


# Clicks the misses table's "score" header twice, as a reader would, and writes what each click did.
_PROBE = """<script>window.addEventListener("load", function () {
  var header = Array.prototype.find.call(document.querySelectorAll("#misses th"),
                                         function (th) { return th.textContent === "score"; });
  var column = Array.prototype.indexOf.call(header.parentNode.children, header);
  function scores() {
    return Array.prototype.map.call(document.querySelectorAll("#misses tbody tr"),
                                    function (row) { return Number(row.cells[column].getAttribute("data-sort")); });
  }
  var before = scores();
  header.click(); var ascending = scores();
  header.click(); var descending = scores();
  var out = document.createElement("pre"); out.id = "probe";
  out.textContent = JSON.stringify({before: before, ascending: ascending, descending: descending});
  document.body.appendChild(out);
});</script>"""


@pytest.mark.skipif(CHROMIUM is None, reason="needs a Chromium browser on PATH (Debian: apt-get install chromium)")
def test_html_report_loads_without_console_errors_and_sorts_in_chromium(three_runs, small_ontology_path, tmp_path):
    report = tmp_path / "report.html"
    result = run("eval", *three_runs, "--ontology", small_ontology_path, "--format", "html", "-o", report, *_labels())
    assert result.exit_code == 0, result.stderr
    page = report.read_text()
    assert "<svg" in page and 'id="misses"' in page and "too-specific" in page
    for fetching in ("<link", " src=", "url(http", "@import", "https://", "href=\"http"):  # everything is embedded
        assert fetching not in page, fetching
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", _PROBE + "</body>"))
    browser = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                              "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000", "--dump-dom",
                              probed.as_uri()], capture_output=True, text=True, timeout=120)
    assert browser.returncode == 0, browser.stderr[-2000:]
    console = [line for line in browser.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []  # the page logged nothing: no script error, no failed load
    dom = browser.stdout
    probe = json.loads(dom[dom.index('<pre id="probe">') + len('<pre id="probe">'):dom.index("</pre>",
                                                                                        dom.index('id="probe"'))])
    assert len(probe["ascending"]) == len(probe["before"]) > 3
    assert probe["ascending"] == sorted(probe["before"]) and probe["descending"] == sorted(probe["before"], reverse=True)
    assert probe["before"] != probe["ascending"]  # the click changed the order


def test_eval_imports_no_matplotlib_unless_asked(three_runs, small_ontology_path):
    from conftest import REPO

    environment = {**os.environ, "PYTHONPATH": str(REPO / "toolbox")}
    for arguments in (["eval", "--help"], ["eval", str(three_runs[0]), "--format", "json"]):
        result = subprocess.run([sys.executable, "-X", "importtime", "-m", "ontolink", *arguments],
                                capture_output=True, text=True, timeout=300, env=environment)
        assert result.returncode == 0, result.stderr[-2000:]
        assert "matplotlib" not in result.stderr
