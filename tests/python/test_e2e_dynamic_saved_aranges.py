"""End to end, CPU: a symbolic forward's saved position ids kept per size by the plan runtime
(NativePlan.share_saved_sized_aranges, tccd_plan_cache_sized_output) match eager at every size.

The dynamic-shapes bench's forward computes its position ids with a sized arange kernel per call
(symbolic_kernels.h) and returns them as a saved tensor for the position embedding's gradient.
A sized kernel without inputs is a function of the call's sizes, and only kernels, views and the
saved outputs read the ids, so the runtime keeps one tensor per (sizes, device, stream), up to
eight, and hands it to every later call at that size: no launch and no allocation. Here the
block trains on the CPU (the CPU plans have the same arange kernel) over sizes that repeat out of
order, against eager, with TCCD_SYMBOLIC_SAVED_ARANGES on and off: on, the forward plan keeps one
tensor per sequence length seen; off, none.
"""

import gc
import shutil

import pytest
import torch

import tccd
from tccd import config
from tccd.native_plan import NativePlan
from conftest import TCCD_BINARY, Daemon, short_tempdir
from test_e2e_dynamic_shapes import Block, train_ids_against_eager

# (batch, length): lengths 12, 7, 20 and 5, repeated with other batches (the key is every size
# of the kernel, its length only: a repeat of the length is a hit whatever the batch).
SIZES = [(3, 12), (2, 7), (5, 20), (4, 12), (2, 7), (6, 5), (3, 20), (1, 12)]


@pytest.fixture
def daemon_for_arange(monkeypatch, tmp_path, request):
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-dynar-")
    d = Daemon(TCCD_BINARY, root)
    d.start()
    monkeypatch.setenv("TCCD_ADDRESS", d.address)
    monkeypatch.setenv("TCCD_NO_AUTOSTART", "1")
    monkeypatch.setenv("TCCD_CACHE_DIR", str(tmp_path / "client-cache"))
    monkeypatch.setenv("TCCD_AOT_SHARE", "0")
    yield d
    try:
        if d.alive():
            assert d.stop() == 0, d.log_tail()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _symbolic_forward_plans():
    plans = []
    for o in gc.get_objects():
        try:
            if type(o) is NativePlan and o.symbolic and o._sized_aranges:
                plans.append(o)
        except ReferenceError:  # a dead weak proxy among the objects
            continue
    return plans


@pytest.mark.parametrize("cached", [True, False])
def test_saved_position_ids_kept_per_size_match_eager(daemon_for_arange, monkeypatch, cached):
    import torch._dynamo

    monkeypatch.setenv("TCCD_SYMBOLIC_SAVED_ARANGES", "1" if cached else "0")
    config.reload()
    tccd.reset_compile_stats()
    torch._dynamo.reset()
    gc.collect()
    torch.manual_seed(0)
    model = Block(16)
    train_ids_against_eager(model, SIZES, 400)
    stats = tccd.last_compile_stats()
    assert all(s["fallback"] is None for s in stats), stats
    plans = _symbolic_forward_plans()
    assert plans, "no symbolic forward plan with an arange kernel"
    if cached:
        # The dynamic plan's forward: one kept tensor per sequence length seen after it was
        # built (Dynamo's first, static graph takes the first size).
        assert any(p.cached_sized_aranges == 1 for p in plans), [p.cached_sized_aranges for p in plans]
        entries = [n for p in plans for n in p.sized_cache_entries()]
        assert entries and max(entries) == len({t for _, t in SIZES[1:]}), entries
    else:
        assert all(p.cached_sized_aranges == 0 for p in plans)
        assert all(p.sized_cache_entries() == [] for p in plans)
