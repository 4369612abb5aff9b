"""The collector pause around a migration: nested blocks share one pause, and the collector's
state before the first block is what it comes back to."""

import gc

from tfmigrate.engine import transform_source
from tfmigrate.gcpause import cyclic_gc_paused


def test_nested_pauses_restore_an_enabled_collector_after_the_outermost():
    assert gc.isenabled()
    with cyclic_gc_paused():
        assert not gc.isenabled()
        with cyclic_gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_disabled_by_the_caller_stays_disabled():
    gc.disable()
    try:
        with cyclic_gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_migration_leaves_the_collector_on_even_when_it_fails():
    result = transform_source("import tensorflow as tf\ndef f(:\n")
    assert result.error is not None
    assert gc.isenabled()
    transform_source("import tensorflow as tf\ntf.gfile.Exists('x')\n")
    assert gc.isenabled()
