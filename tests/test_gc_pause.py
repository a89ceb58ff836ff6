"""ontolink.core.gc_pause: the collector paused while tables are built, as it was afterwards."""

import gc

import pytest

from ontolink.core.gc_pause import collection_paused


def test_collection_paused_restores_the_collector_nested_and_on_error():
    assert gc.isenabled()
    with collection_paused():
        assert not gc.isenabled()
        with collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block leaves the outer pause alone
    assert gc.isenabled()
    with pytest.raises(ValueError):
        with collection_paused():
            raise ValueError("a load that fails")
    assert gc.isenabled()
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled()  # a caller's own pause is kept
    finally:
        gc.enable()


def test_freeze_only_in_the_ontolink_program(monkeypatch):
    import ontolink.core.gc_pause as gc_pause

    before = gc.get_freeze_count()
    with collection_paused(freeze=True):  # a library caller or test runner: nothing frozen
        tables = [[number] for number in range(1000)]
    assert gc.get_freeze_count() == before
    monkeypatch.setattr(gc_pause, "_one_command", True)  # as `ontolink`'s main() sets it
    try:
        with collection_paused(freeze=True):
            tables += [[number] for number in range(1000)]
        assert gc.get_freeze_count() >= before + len(tables)
    finally:
        gc.unfreeze()  # this test process goes on: let the collector see these again
