"""eval over several files: different systems side by side and one system's seeds as mean ± std; Recall@K
past a file's depth as not available; every gold mention on the table's face (not in the ontology, NIL);
--by FIELD; the misses named without is_a; the HTML page's capped misses. Real GSC+ mentions linked by real
indexes over the HPO slice."""

import json
import re
import shutil
import subprocess

import pytest
from conftest import jsonl, run, shared_path

EYE = "HP:0000478"  # the slice's two subtrees: Abnormality of the eye, and Seizure
SEIZURE = "HP:0001250"


def gscplus():
    return [json.loads(line) for line in shared_path("gscplus", "mentions.jsonl").read_text().splitlines()]


def link(tmp_path, name, mentions, *options):
    linked = run("link", *options, input=jsonl(mentions))
    assert linked.exit_code == 0, linked.stderr
    path = tmp_path / name
    path.write_text(linked.stdout)
    return path


def eval_json(*args):
    result = run("eval", *args, "--format", "json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def in_slice(small_ontology_path):
    """The GSC+ mentions whose gold lies in the HPO slice, each with the slice's subtree it belongs to as its
    "type" (eye or seizure): a real split of real mentions, as a corpus's Disease / Chemical is."""
    from ontolink.ontology import load_ontology

    ontology = load_ontology(small_ontology_path)
    chosen = []
    for record in gscplus():
        if not all(gold in ontology for gold in record["gold"]):
            continue
        ancestors = set()
        for gold in record["gold"]:
            frontier = [gold]
            while frontier:
                entity = frontier.pop()
                if entity not in ancestors:
                    ancestors.add(entity)
                    frontier.extend(ontology[entity].parents)
        chosen.append(record | {"type": "eye" if EYE in ancestors else "seizure"})
    assert len({record["type"] for record in chosen}) == 2
    return chosen[:60]


@pytest.fixture(scope="module")
def systems(in_slice, tfidf_index, hashed_index, tmp_path_factory):
    """Three systems on the same mentions: the TF-IDF index with its ranker (10 candidates), without it (16)
    and the hashed dense index (16)."""
    directory = tmp_path_factory.mktemp("systems")
    return [link(directory, "ranked.jsonl", in_slice, "--index", tfidf_index, "--top-k", 10),
            link(directory, "plain.jsonl", in_slice, "--index", tfidf_index, "--top-k", 16, "--no-ranker"),
            link(directory, "hashed.jsonl", in_slice, "--index", hashed_index, "--top-k", 16)]


def test_which_files_are_one_systems_seeds():
    from ontolink.evaluation.combine import combination, differ_in_one_number
    from ontolink.evaluation.report import MEAN, SIDE

    assert differ_in_one_number(["seed0.jsonl", "seed42.jsonl", "seed52313.jsonl"])
    assert differ_in_one_number(["out/linked/sci-zsel__pc-pos__0.jsonl.gz", "out/linked/sci-zsel__pc-pos__42.jsonl.gz"])
    assert differ_in_one_number(["s1/linked.jsonl", "s2/linked.jsonl"]) and differ_in_one_number(["a.jsonl"] * 2)
    assert not differ_in_one_number(["frozen.jsonl", "ranker.jsonl"])
    assert not differ_in_one_number(["model1_seed0.jsonl", "model2_seed1.jsonl"])  # two numbers differ
    assert not differ_in_one_number(["run0.jsonl", "run0b.jsonl"])
    assert combination(["seed0.jsonl", "seed1.jsonl"]).mode == MEAN
    assert combination(["frozen.jsonl", "ranker.jsonl"]).mode == SIDE
    assert combination(["seed0.jsonl", "seed1.jsonl"], aggregate=False).mode == SIDE
    assert combination(["frozen.jsonl", "ranker.jsonl"], aggregate=True).mode == MEAN
    assert combination(["fold-a.jsonl", "fold-b.jsonl"], folds=True).mode == MEAN
    assert combination(["a/x.jsonl", "b/x.jsonl"]).labels == ("a/x.jsonl", "b/x.jsonl")  # the names collide
    assert combination(["out/frozen.jsonl.gz", "ranker.jsonl"]).labels == ("frozen", "ranker")


def test_different_systems_are_side_by_side_not_a_mean(systems, small_ontology_path, tmp_path):
    labels = ["--label", "ranked", "--label", "plain", "--label", "hashed"]
    table = run("eval", *systems, "--ontology", small_ontology_path, *labels, "--format", "markdown").stdout
    assert "±" not in table.replace("--aggregate gives mean ± std", "")
    report = eval_json(*systems, "--ontology", small_ontology_path, *labels)
    assert report["combined"] == "side by side" and report["labels"] == ["ranked", "plain", "hashed"]
    for path, label in zip(systems, ("ranked", "plain", "hashed")):
        alone = eval_json(path, "--ontology", small_ontology_path, "--ks", "1,5,10,16")["metrics"]
        for group in ("all", "HO", "LO", "NO"):
            for metric in ("n", "R@1", "R@5", "MRR"):
                assert report["metrics"][group][metric][label] == alone[group][metric]
    r1 = {label: report["metrics"]["all"]["R@1"][label] for label in ("ranked", "plain", "hashed")}
    assert len(set(r1.values())) > 1  # three systems that differ: a mean of them would mean nothing
    rows = [line.split("|")[1:3] for line in table.splitlines() if line.startswith("| all ")]
    assert [label.strip() for _, label in rows] == ["ranked", "plain", "hashed"]
    assert "3 files side by side (different systems" in table
    page = tmp_path / "report.html"
    assert run("eval", *systems, "--ontology", small_ontology_path, *labels, "--format", "html", "-o",
               page).exit_code == 0
    text = page.read_text()
    assert "<title>ontolink eval: ranked, plain, hashed</title>" in text and "mean ± std over" not in text
    assert text.count("<td>all</td><td>") == 3
    tsv = run("eval", *systems, "--ontology", small_ontology_path, "--format", "tsv").stdout.splitlines()
    assert tsv[0].split("\t")[:2] == ["mentions", "file"] and tsv[1].split("\t")[:2] == ["all", "ranked"]
    # asked for: mean ± std over the three all the same
    aggregated = eval_json(*systems, "--ontology", small_ontology_path, "--aggregate")["metrics"]["all"]["R@1"]
    assert aggregated["mean"] == pytest.approx(sum(r1.values()) / 3)


def test_seeds_of_one_system_get_mean_and_std(systems, small_ontology_path, tmp_path):
    seeds = []
    for seed, path in enumerate(systems[1:]):  # two runs written as seeds of one system would be named
        seeds.append(tmp_path / f"run__{seed}.jsonl")
        seeds[-1].write_text(path.read_text())
    report = eval_json(*seeds, "--ontology", small_ontology_path)
    assert report["combined"] == "mean ± std" and set(report["metrics"]["all"]["R@1"]) == {"mean", "std"}
    assert report["metrics"]["all"]["n"] == {"mean": 60, "std": 0.0}  # a count stays an integer
    assert '"mean": 60,' in run("eval", *seeds, "--ontology", small_ontology_path, "--format", "json").stdout
    table = run("eval", *seeds, "--ontology", small_ontology_path, "--format", "markdown").stdout
    assert "mean ± std over 2 files (seeds of one system" in table and " ± " in table
    side = eval_json(*seeds, "--ontology", small_ontology_path, "--side-by-side")
    assert set(side["metrics"]["all"]["R@1"]) == {"run__0", "run__1"}


def test_recall_past_a_files_depth_is_not_available(systems, small_ontology_path):
    from ontolink.evaluation.files import evaluate
    from ontolink.evaluation.plots import linked_figure

    ranked, plain = systems[0], systems[1]  # 10 and 16 candidates
    report = eval_json(ranked, plain, "--ontology", small_ontology_path)
    assert report["metrics"]["all"]["R@16"] == {"ranked": None, "plain": report["metrics"]["all"]["R@16"]["plain"]}
    assert report["metrics"]["all"]["R@16"]["plain"] is not None
    assert "R@10" in report["metrics"]["all"]  # each file's depth is a K: compared at 10 as well
    markdown = run("eval", ranked, plain, "--ontology", small_ontology_path, "--format", "markdown").stdout
    header = [cell.strip() for cell in markdown.splitlines()[0].split("|")]
    ranked_row = [cell.strip() for cell in markdown.splitlines()[2].split("|")]
    assert ranked_row[2] == "ranked" and ranked_row[header.index("R@16")] == "n/a"
    assert "n/a: R@K past the candidates a file holds" in markdown
    # the Recall@K curve of each file stops at its depth
    evaluation = evaluate([str(ranked), str(plain)], small_ontology_path)
    curve = linked_figure(evaluation).axes[0]
    assert [max(line.get_xdata()) for line in curve.lines] == [10, 16]
    # mean ± std over seeds of different depths: only the Ks every seed reaches
    aggregated = eval_json(ranked, plain, "--ontology", small_ontology_path, "--aggregate")["metrics"]["all"]
    assert aggregated["R@16"] is None and aggregated["R@10"]["mean"] is not None


def test_every_gold_mention_is_on_the_tables_face(tfidf_index, small_ontology_path, in_slice, tmp_path):
    from ontolink.ontology import load_ontology

    ontology = load_ontology(small_ontology_path)
    outside = [record for record in gscplus() if not any(gold in ontology for gold in record["gold"])][:7]
    nil = [record | {"id": record["id"] + ":nil", "gold": []} for record in outside[:3]]  # mentions gold calls NIL
    linked = link(tmp_path, "linked.jsonl", in_slice[:20] + outside + nil, "--index", tfidf_index)
    metrics = eval_json(linked, "--ontology", small_ontology_path)
    parts = [metrics["metrics"][group]["n"] for group in ("HO", "LO", "NO", "not-in-ontology")]
    assert sum(parts) == metrics["metrics"]["all"]["n"] == 27 and parts[3] == 7
    assert metrics["metrics"]["not-in-ontology"]["R@1"] == 0.0
    assert metrics["metrics"]["NIL"]["n"] == 3 and metrics["metrics"]["NIL"]["R@1"] is None
    assert all(isinstance(metrics["metrics"][group]["n"], int) for group in metrics["metrics"])
    assert "nil" not in metrics  # no prediction carries a NIL decision, none asked for
    table = run("eval", linked, "--ontology", small_ontology_path, "--format", "table").stdout
    assert re.search(r"^not-in-ontology +7 ", table, re.M) and re.search(r"^NIL +3 +n/a", table, re.M)
    assert "nil\n" not in table
    asked = eval_json(linked, "--ontology", small_ontology_path, "--nil-table")
    assert asked["nil"]["NIL"]["nil_gold"] == 3 and isinstance(asked["nil"]["NIL"]["nil_gold"], int)
    decided = link(tmp_path, "decided.jsonl", in_slice[:20] + outside + nil, "--index", tfidf_index,
                   "--nil-threshold", "0.8")
    assert json.loads(decided.read_text().splitlines()[0])["nil"] in (True, False)
    assert eval_json(decided, "--ontology", small_ontology_path)["nil"]["NIL"]["nil_gold"] == 3


def test_by_field_splits_every_table(systems, in_slice, small_ontology_path, tmp_path):
    ranked = systems[0]
    report = eval_json(ranked, "--ontology", small_ontology_path, "--by", "type")
    metrics, errors = report["metrics"], report["errors"]
    assert metrics["type=eye"]["n"] + metrics["type=seizure"]["n"] == metrics["all"]["n"] == len(in_slice)
    for value in ("eye", "seizure"):  # each value's rows are eval of that value's records alone
        alone_path = tmp_path / f"{value}.jsonl"
        alone_path.write_text("".join(line + "\n" for line in ranked.read_text().splitlines()
                                      if json.loads(line)["type"] == value))
        alone = eval_json(alone_path, "--ontology", small_ontology_path, "--ks", "1,5,10")
        for group in ("all", "HO", "LO", "NO"):
            row = f"type={value}" if group == "all" else f"type={value} {group}"
            for metric in ("n", "R@1", "R@10", "MRR", "lenient_R@1"):
                assert metrics[row][metric] == alone["metrics"][group][metric], (row, metric)
        for name in ("too-general", "too-specific", "unrelated"):
            assert errors[f"type={value} {name}"]["count"] == alone["errors"][name]["count"]
    assert sum(errors[f"type={value} unrelated"]["count"] for value in ("eye", "seizure")) == \
        errors["unrelated"]["count"]
    misses = tmp_path / "misses.jsonl"
    assert run("eval", ranked, "--ontology", small_ontology_path, "--by", "type", "--errors", misses).exit_code == 0
    assert {json.loads(line)["type"] for line in misses.read_text().splitlines()} == {"eye", "seizure"}
    refused = run("eval", ranked, "--spans", "--gold", ranked, "--by", "type")
    assert refused.exit_code == 2 and "--by" in refused.stderr
    # a field no record has (a typo) splits nothing: said on stderr, the report as with one "(none)" value
    misspelt = run("eval", ranked, "--ontology", small_ontology_path, "--by", "tpye")
    assert misspelt.exit_code == 0 and "no mention has a 'tpye' field" in misspelt.stderr
    assert "no mention has" not in run("eval", ranked, "--ontology", small_ontology_path, "--by", "type").stderr


@pytest.fixture(scope="module")
def flat(small_ontology_path, tmp_path_factory):
    """The HPO slice as a names-only ontology (parents dropped), and a TF-IDF index of it."""
    from ontolink.indexes.build import build_index
    from ontolink.ontology import load_ontology

    directory = tmp_path_factory.mktemp("flat")
    path = directory / "flat.jsonl"
    path.write_text("".join(json.dumps({key: value for key, value in json.loads(line).items() if key != "parents"})
                            + "\n" for line in small_ontology_path.read_text().splitlines()))
    build_index(load_ontology(path), directory / "idx", method="tfidf")
    return path, directory / "idx"


def test_misses_are_named_without_is_a(flat, in_slice, tmp_path):
    from ontolink.ontology import load_ontology

    path, index = flat
    ontology = load_ontology(path)
    linked = link(tmp_path, "linked.jsonl", in_slice, "--index", index, "--candidate-fields", "id,score")
    misses = tmp_path / "misses.jsonl"
    result = run("eval", linked, "--ontology", path, "--errors", misses, "--format", "json")
    assert result.exit_code == 0, result.stderr
    records = [json.loads(line) for line in misses.read_text().splitlines()]
    assert len(records) >= 5 and "errors" not in json.loads(result.stdout)
    for record in records:  # named from the ontology: the candidates carry no names here
        assert record["gold_name"] == "; ".join(ontology[gold].name for gold in record["gold"])
        assert record["predicted_name"] == ontology[record["predicted"]].name
    page = tmp_path / "report.html"
    assert run("eval", linked, "--ontology", path, "--format", "html", "-o", page).exit_code == 0
    text = page.read_text()
    assert "has no is_a relations" in text and "no error class" in text
    head = text[text.index('id="misses"'):text.index("</thead>", text.index('id="misses"'))]
    assert re.findall(r"<th>([^<]*)</th>", head) == ["file", "mention", "context", "gold", "predicted",
                                                     "rank of gold", "score"]
    first = records[0]
    assert f"{first['gold'][0]} {first['gold_name']}" in text


def test_no_plot_slot_is_left_empty(flat, systems, in_slice, small_ontology_path, tmp_path):
    from ontolink.evaluation.files import evaluate
    from ontolink.evaluation.plots import linked_figure

    path, index = flat
    linked = [str(link(tmp_path, f"{name}.jsonl", in_slice, "--index", index, *options))
              for name, options in (("a", ["--top-k", 5]), ("b", ["--no-ranker"]), ("c", ["--top-k", 3]))]
    for files, ontology, panels in ((linked, path, 5), (linked[:1], path, 3), ([str(p) for p in systems],
                                                                              small_ontology_path, 6)):
        figure = linked_figure(evaluate(files, ontology))
        grid = figure.axes[0].get_subplotspec().get_gridspec()
        rows, columns = grid.get_geometry()
        assert len(figure.axes) == panels and rows * columns - panels < columns  # only the last row has gaps
        assert rows * columns - panels <= 1


def test_a_large_misses_table_is_capped_with_the_count(tfidf_index, small_ontology_path, tmp_path):
    from ontolink.evaluation.html import MISSES_SHOWN

    linked = link(tmp_path, "all.jsonl", gscplus(), "--index", tfidf_index, "--top-k", 3)
    misses = tmp_path / "misses.jsonl"
    page = tmp_path / "report.html"
    result = run("eval", linked, "--ontology", small_ontology_path, "--format", "html", "-o", page,
                 "--errors", misses)
    assert result.exit_code == 0, result.stderr
    total = len(misses.read_text().splitlines())
    assert total > MISSES_SHOWN
    text = page.read_text()
    body = text[text.index('id="misses"'):]
    assert body.count("<tr>") - 1 == MISSES_SHOWN  # the header row, then the misses shown
    assert f"Misses (top-1 wrong): {total:,}</h2>" in text
    assert f"{MISSES_SHOWN:,} of {total:,} shown" in text and "--errors FILE.jsonl" in text


BROWSER = next((shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome", "chrome")
                if shutil.which(name)), None)


@pytest.mark.skipif(BROWSER is None, reason="no Chromium (chromium, chromium-browser or google-chrome) on PATH")
def test_the_report_of_three_systems_renders_in_chromium(systems, small_ontology_path, tmp_path):
    """The side-by-side page as a reader sees it: Chromium (headless) draws it, and the screenshot is a page with
    content (tables and plots), not a blank or an error page's few colours."""
    from PIL import Image

    page, shot = tmp_path / "report.html", tmp_path / "report.png"
    labels = ["--label", "ranked", "--label", "plain", "--label", "hashed"]
    assert run("eval", *systems, "--ontology", small_ontology_path, *labels, "--format", "html", "-o",
               page).exit_code == 0
    drawn = subprocess.run([BROWSER, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
                            "--window-size=1280,2400", f"--screenshot={shot}", page.as_uri()],
                           capture_output=True, text=True, timeout=120, check=False)
    assert drawn.returncode == 0 and shot.exists(), drawn.stderr[-2000:]
    image = Image.open(shot).convert("L")
    assert image.size == (1280, 2400)
    # text and plots give many grey levels down the whole page; a blank or error page gives a handful
    assert len(set(image.getdata())) > 32
    bands = [image.crop((0, top, 1280, top + 400)) for top in range(0, 1200, 400)]
    assert all(band.getextrema()[0] < 128 for band in bands)  # dark ink (text, axes) in each of the top bands
