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


def test_a_hold_keeps_the_threshold_raised_past_the_block_until_released(thresholds, torch_without_deferral):
    with full_gc.deferred(True):
        release = full_gc.hold(True)
    assert gc.get_threshold()[2] == full_gc.GEN2_THRESHOLD
    with full_gc.deferred(True):  # a later backend call while held shares the adjustment
        pass
    assert gc.get_threshold()[2] == full_gc.GEN2_THRESHOLD
    release()
    assert gc.get_threshold() == (700, 10, 10)
    release()  # a second release does nothing (it would end someone else's hold)
    with full_gc.deferred(True):
        assert gc.get_threshold()[2] == full_gc.GEN2_THRESHOLD
    assert gc.get_threshold() == (700, 10, 10)


def test_no_hold_outside_a_raising_block(thresholds, monkeypatch):
    monkeypatch.setattr(full_gc, "_torch_defers", lambda: False)
    full_gc.hold(True)()  # outside any block: nothing to keep
    with full_gc.deferred(True):
        full_gc.hold(False)()  # off
    monkeypatch.setattr(full_gc, "_torch_defers", lambda: True)
    with full_gc.deferred(True):  # torch's deferral: ours raised nothing
        release = full_gc.hold(True)
    assert gc.get_threshold() == (700, 10, 10)
    release()
    assert gc.get_threshold() == (700, 10, 10)


def _young_collections(n):
    # Counted by generation 2: one per collection of generation 1 since the last full one.
    for _ in range(n):
        gc.collect(1)


def test_collects_while_waiting_only_when_a_full_collection_is_due(thresholds, torch_without_deferral):
    gc.collect()
    before = full_gc.waited_collections()
    _young_collections(3)
    assert not full_gc.collect_while_waiting(lambda: False, True)  # 3 < threshold2 10: not due
    _young_collections(8)
    assert not full_gc.collect_while_waiting(lambda: True, True)  # the compile is done: no wait
    assert not full_gc.collect_while_waiting(lambda: False, False)  # TCCD_WAIT_FULL_GC=0
    assert full_gc.collect_while_waiting(lambda: False, True)
    assert gc.get_count()[2] == 0
    count, seconds = full_gc.waited_collections()
    assert count == before[0] + 1 and seconds >= before[1]


def test_due_is_judged_by_the_callers_threshold_while_held(thresholds, torch_without_deferral):
    gc.collect()
    with full_gc.deferred(True):
        release = full_gc.hold(True)
    _young_collections(11)  # over the caller's 10, far below the held 1000
    try:
        assert full_gc.collect_while_waiting(lambda: False, True)
    finally:
        release()


def _threshold_seen_by_a_backend():
    import torch

    seen = []

    def backend(gm, example_inputs):
        seen.append(gc.get_threshold())
        return gm.forward

    torch._dynamo.reset()  # clears every compile callback: the tccd backend puts its own back
    full_gc.install_compile_deferral(lambda: True)
    torch.compile(lambda x: torch.sin(x) + 1, backend=backend)(torch.ones(4))
    return seen


@pytest.mark.parametrize("on", ["1", "0"])
def test_the_raise_covers_a_whole_dynamo_compile_of_any_backend(thresholds, monkeypatch, on):
    """TCCD_DEFER_FULL_GC_COMPILE on a torch without its own deferral: raised from the frame
    compile's start (before any backend runs: here a plain one) to its end, restored after."""
    import torch

    from tccd import backend, config  # noqa: F401  (loading the backend installs the callbacks)

    monkeypatch.setenv("TCCD_DEFER_FULL_GC_COMPILE", on)
    config.reload()
    import contextlib

    import torch._dynamo.config as dynamo_config

    own = (dynamo_config.patch(gc_gen2_threshold_during_compile=None)
           if hasattr(dynamo_config, "gc_gen2_threshold_during_compile") else contextlib.nullcontext())  # < 2.14
    with own:
        seen = _threshold_seen_by_a_backend()
    assert seen == [(700, 10, full_gc.GEN2_THRESHOLD if on == "1" else 10)], seen
    assert gc.get_threshold() == (700, 10, 10)


def test_the_backend_puts_the_compile_callbacks_back_after_a_reset():
    import torch
    from torch._dynamo.callback import callback_handler

    from tccd import backend

    torch._dynamo.reset()
    start, end = full_gc._callbacks
    assert start not in callback_handler.start_callbacks
    backend._install_compile_gc_deferral()  # what each backend call does first
    assert start in callback_handler.start_callbacks and end in callback_handler.end_callbacks
    backend._install_compile_gc_deferral()
    assert callback_handler.start_callbacks.count(start) == 1
