"""`filter` (aliases/filter.py): the tau threshold, drift to a neighbour, siblings, the counts, and the
command. The library tests use the session's default encoder (all-MiniLM-L6-v2, ONNX int8: a text gets the same
vector in any batch), so a threshold can be set exactly at a similarity the test computed itself."""

import numpy as np
import pytest

from conftest import jsonl, parse_jsonl, run
from ontolink.core.errors import InputError
from ontolink.ontology import load_ontology
from ontolink.aliases.filter import FilterStats, filter_aliases

SEIZURE = "HP:0001250"
ALIASES = ["Seizures", "seizure", "epileptic fits", "Abnormality of the eye"]


@pytest.fixture(scope="module")
def slice_ontology(small_ontology_path):
    return load_ontology(small_ontology_path)


def similarities(ontology, encoder, entity_id, aliases, with_siblings=True):
    """(s_anchor, s_drift, drift_to) of each alias, computed as the filter defines them, from the same texts in
    the same order as the filter encodes them for a one-record batch."""
    neighbours = ontology.neighbours(entity_id, with_siblings=with_siblings)
    names = [ontology[entity_id].name] + [ontology[neighbour].name for neighbour in neighbours]
    vectors = dict(zip(names + aliases, encoder.encode(names + aliases)))
    alias_vectors = np.stack([vectors[alias] for alias in aliases])
    anchors = alias_vectors @ vectors[names[0]]
    to_neighbours = alias_vectors @ np.stack([vectors[name] for name in names[1:]]).T
    return anchors, to_neighbours.max(axis=1), [neighbours[column] for column in to_neighbours.argmax(axis=1)]


def filtered(ontology, encoder, aliases, tau, entity_id=SEIZURE, **options):
    stats = FilterStats()
    (record,) = filter_aliases([{"id": entity_id, "aliases": aliases}], ontology, encoder, tau=tau, stats=stats,
                               **options)
    return record, stats


def test_decisions_report_anchor_and_drift_similarities(slice_ontology, default_encoder):
    anchors, drifts, targets = similarities(slice_ontology, default_encoder, SEIZURE, ALIASES)
    record, stats = filtered(slice_ontology, default_encoder, [*ALIASES, "  ", "Seizures"], tau=0.5)
    assert [decision["alias"] for decision in record["decisions"]] == ALIASES  # blanks and repeats are no decision
    for decision, anchor, drift, target in zip(record["decisions"], anchors, drifts, targets):
        assert decision["s_anchor"] == pytest.approx(anchor, abs=1e-6)
        assert decision["s_drift"] == pytest.approx(drift, abs=1e-6)
        assert decision["drift_to"] == target
        assert decision["kept"] == bool(anchor >= drift and anchor >= 0.5)
    # an unrelated phenotype's name is nearer a neighbour than the entity: dropped, whatever tau
    eye = record["decisions"][3]
    assert eye["drift_to"] in slice_ontology.neighbours(SEIZURE) and eye["s_drift"] > eye["s_anchor"]
    assert not eye["kept"]
    assert record["aliases"] == [decision["alias"] for decision in record["decisions"] if decision["kept"]]
    assert (stats.entities, stats.aliases, stats.kept + stats.drifted + stats.below_tau) == (1, 4, 4)


def test_tau_keeps_an_alias_at_the_threshold_and_drops_it_just_above(slice_ontology, default_encoder):
    """s_anchor >= tau: an alias whose similarity equals tau is kept; a hair more and it is below tau (not drift)."""
    kept = 0
    for alias in ALIASES:
        # one alias per run, so that its similarity here is computed exactly as in the filter's own batch
        (anchor,), (drift,), _ = similarities(slice_ontology, default_encoder, SEIZURE, [alias])
        if anchor < drift:
            continue
        kept += 1
        at_threshold, stats = filtered(slice_ontology, default_encoder, [alias], tau=float(anchor))
        assert at_threshold["aliases"] == [alias] and stats.kept == 1, (alias, float(anchor))
        above = float(np.nextafter(anchor, np.float32(2)))
        dropped, stats = filtered(slice_ontology, default_encoder, [alias], tau=above)
        assert dropped["aliases"] == [] and not dropped["decisions"][0]["kept"], (alias, float(anchor), above)
        assert (stats.kept, stats.below_tau, stats.drifted) == (0, 1, 0), alias
        below, _ = filtered(slice_ontology, default_encoder, [alias], tau=float(anchor) - 1e-3)
        assert below["aliases"] == [alias]
    assert kept >= 2  # the name's plural and its own spelling stay nearest their entity


def test_tau_between_two_aliases_keeps_the_closer_one(slice_ontology, default_encoder):
    anchors, drifts, _ = similarities(slice_ontology, default_encoder, SEIZURE, ALIASES)
    anchored = [position for position in range(len(ALIASES)) if anchors[position] >= drifts[position]]
    drifting = [ALIASES[position] for position in range(len(ALIASES)) if position not in anchored]
    assert len(anchored) >= 2 and drifting
    closer, farther = max(anchored, key=lambda position: anchors[position]), min(anchored,
                                                                                 key=lambda position: anchors[position])
    assert anchors[closer] - anchors[farther] > 0.02
    tau = float(anchors[closer] + anchors[farther]) / 2
    record, stats = filtered(slice_ontology, default_encoder, ALIASES, tau=tau)
    assert ALIASES[closer] in record["aliases"] and ALIASES[farther] not in record["aliases"]
    assert stats.below_tau == sum(anchors[position] < tau for position in anchored)
    assert stats.drifted == len(drifting) and stats.kept == len(record["aliases"])
    # tau = -1 keeps every alias its entity holds closest; drift still drops the others
    everything, stats = filtered(slice_ontology, default_encoder, ALIASES, tau=-1.0)
    assert everything["aliases"] == [ALIASES[position] for position in anchored]
    assert (stats.kept, stats.drifted, stats.below_tau) == (len(anchored), len(drifting), 0)


def test_siblings_count_as_neighbours_only_with_n_plus(slice_ontology, default_encoder):
    with_siblings = slice_ontology.neighbours(SEIZURE, with_siblings=True)
    without = slice_ontology.neighbours(SEIZURE, with_siblings=False)
    sibling = next(entity_id for entity_id in with_siblings if entity_id not in without)
    name = slice_ontology[sibling].name
    record, stats = filtered(slice_ontology, default_encoder, [name], tau=-1.0)
    assert record["decisions"][0]["drift_to"] == sibling and stats.drifted == 1
    record, stats = filtered(slice_ontology, default_encoder, [name], tau=-1.0, with_siblings=False)
    assert record["decisions"][0]["drift_to"] in without and record["decisions"][0]["drift_to"] != sibling


def test_same_decisions_at_any_batch_size(slice_ontology, default_encoder):
    records = [{"id": entity_id, "aliases": ALIASES} for entity_id in (SEIZURE, "HP:0000478", "HP:0000545")]
    outputs = [list(filter_aliases(records, slice_ontology, default_encoder, tau=0.7, batch_size=size))
               for size in (1, 2, 64)]
    assert outputs[0] == outputs[1] == outputs[2]


def test_an_entity_missing_from_the_ontology_is_bad_input(slice_ontology, default_encoder):
    with pytest.raises(InputError, match="HP:9999999"):
        list(filter_aliases([{"id": "HP:9999999", "aliases": ["x"]}], slice_ontology, default_encoder))


def test_filter_command_passes_fields_through_and_summarises(small_ontology_path, slice_ontology):
    record = {**slice_ontology[SEIZURE].to_record(), "aliases": ALIASES, "llm": {"model": "test"}}
    result = run("filter", "--ontology", small_ontology_path, "--device", "cpu", "--tau", "0.5", input=jsonl([record]))
    assert result.exit_code == 0, result.stderr
    (out,) = parse_jsonl(result.stdout)
    assert out["llm"] == {"model": "test"} and out["name"] == "Seizure"
    assert "Abnormality of the eye" not in out["aliases"] and "seizure" in out["aliases"]
    assert result.stderr.strip().splitlines()[-1].endswith("filter: 1 entities, 4 aliases: 2 kept, 2 drifted to a neighbour, 0 below tau")
    result = run("filter", "--ontology", small_ontology_path, input=jsonl([{"id": "HP:9999999", "aliases": ["x"]}]))
    assert result.exit_code == 2 and "HP:9999999" in result.stderr and "Traceback" not in result.stderr


def test_filter_aliases_files_takes_the_options_object(small_ontology_path, slice_ontology, tmp_path):
    """filter's library function, as a Python caller calls it: the same decisions as the command's."""
    from ontolink.aliases.filter import filter_aliases_files
    from ontolink.aliases.options import FilterOptions
    from ontolink.ontology import OntologySource

    source = tmp_path / "aliases.jsonl"
    source.write_text(jsonl([{"id": SEIZURE, "aliases": ALIASES}]))
    options = FilterOptions(ontology=OntologySource(str(small_ontology_path)), input_path=str(source),
                            output_path=str(tmp_path / "kept.jsonl"), tau=0.5, device="cpu")
    stats = filter_aliases_files(options)
    (out,) = parse_jsonl((tmp_path / "kept.jsonl").read_text())
    assert "Abnormality of the eye" not in out["aliases"] and "seizure" in out["aliases"]
    assert (stats.aliases, stats.kept, stats.drifted) == (4, 2, 2)
    assert FilterOptions.tau == 0.9 and options.neighbours == "n-plus" and options.precision == "fp32"
