"""full_gc.deferred (TCCD_DEFER_FULL_GC): threshold2 raised inside tccd's backend call where
torch does not defer full collections over its compile itself, restored after, reentrant."""

import gc

import pytest

from tccd import full_gc


@pytest.fixture
def thresholds():
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


@pytest.fixture
def torch_without_deferral(monkeypatch):
    # As torch < 2.14 (no gc_gen2_threshold_during_compile), or 2.14+ with it at 0. Not by
    # patching torch's config module: its entries do not survive monkeypatch's undo.
    monkeypatch.setattr(full_gc, "_torch_defers", lambda: False)


def test_torch_defers_reads_dynamos_config():
    import torch._dynamo.config as dynamo_config

    want = getattr(dynamo_config, "gc_gen2_threshold_during_compile", None) is not None
    assert full_gc._torch_defers() == want


def test_raised_inside_restored_after(thresholds, torch_without_deferral):
    with full_gc.deferred(True):
        assert gc.get_threshold() == (700, 10, full_gc.GEN2_THRESHOLD)
        with full_gc.deferred(True):  # a nested backend call shares the adjustment
            assert gc.get_threshold()[2] == full_gc.GEN2_THRESHOLD
        assert gc.get_threshold()[2] == full_gc.GEN2_THRESHOLD
    assert gc.get_threshold() == (700, 10, 10)


def test_restored_when_the_block_raises(thresholds, torch_without_deferral):
    with pytest.raises(RuntimeError), full_gc.deferred(True):
        raise RuntimeError("compile failed")
    assert gc.get_threshold() == (700, 10, 10)


def test_a_higher_threshold_of_the_caller_is_kept(thresholds, torch_without_deferral):
    gc.set_threshold(700, 10, 50000)
    with full_gc.deferred(True):
        assert gc.get_threshold()[2] == 50000
    assert gc.get_threshold() == (700, 10, 50000)


def test_nothing_done_when_off_or_when_torch_defers(thresholds, monkeypatch):
    monkeypatch.setattr(full_gc, "_torch_defers", lambda: False)
    with full_gc.deferred(False):
        assert gc.get_threshold() == (700, 10, 10)
    monkeypatch.setattr(full_gc, "_torch_defers", lambda: True)
    with full_gc.deferred(True):
        assert gc.get_threshold() == (700, 10, 10)  # Dynamo's own deferral covers the call


def test_the_backend_call_runs_inside_it(thresholds, torch_without_deferral, monkeypatch):
    from tccd import backend, config

    seen = []
    monkeypatch.setattr(backend, "_traced_and_compiled", lambda gm, inputs, **kw: seen.append(gc.get_threshold()))
    backend.tccd(None, [])
    monkeypatch.setenv("TCCD_DEFER_FULL_GC", "0")
    config.reload()
    backend.tccd(None, [])
    assert seen == [(700, 10, full_gc.GEN2_THRESHOLD), (700, 10, 10)], seen
