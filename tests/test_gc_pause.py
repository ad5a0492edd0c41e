"""pellucid's callbacks run with the cyclic collector paused, and always restore it."""
import gc

import pytest

from pellucid.dynamo.gc_pause import collector_paused


def test_collector_paused_inside_and_restored_after():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_collector_restored_when_the_block_raises():
    with pytest.raises(KeyError):
        with collector_paused():
            raise KeyError("x")
    assert gc.isenabled()


def test_collector_left_off_when_the_program_had_it_off():
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_nested_pauses_restore_once():
    with collector_paused():
        with collector_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
