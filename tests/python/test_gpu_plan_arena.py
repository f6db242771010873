"""GPU end-to-end tests of the per-call arena (TCCD_PLAN_ARENA=1; skipped without CUDA): CUDA
plans take their short-lived values and every segment's workspace from one caching-allocator
block per dtype per call, train like eager (also under mode="reduce-overhead", where the
arena comes from the CUDA graph pool at recording), and make no workspace allocation of their
own. The CPU side and the choice of values: tests/python/test_e2e_plan_arena.py."""

import re

import pytest
import torch

import tccd
from tccd import native_plan
from test_gpu_training import TOLERANCES, _assert_all_graphed, graph_replays, train  # noqa: F401

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _counts(report: str):
    """The report's per-call counts by plan kind and name (as test_e2e_plan_arena._counts)."""
    counts, kind = {}, None
    for line in report.splitlines():
        m = re.match(r"tccd plan profile \S+ (\w+):", line)
        if m:
            kind = m.group(1)
        elif line.startswith("  per call: allocations") and kind:
            counts[kind] = dict((k.strip(), float(v))
                                for k, v in re.findall(r"([a-z ]+) ([\d.]+)", line.split("per call:")[1]))
    return counts


@pytest.fixture
def arena(daemon_env, monkeypatch):
    monkeypatch.setenv("TCCD_PLAN_ARENA", "1")
    monkeypatch.setenv("TCCD_PLAN_PROFILE", "1")  # read as each plan loads
    native_plan._profiled.clear()
    yield
    native_plan._profiled.clear()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("name", ["block", "cnn"])
def test_training_with_the_arena_matches_eager(arena, name, dtype):
    tccd.reset_compile_stats()
    eager_losses, eager_state = train(name, dtype)
    losses, state = train(name, dtype, backend="tccd")
    torch.testing.assert_close(losses, eager_losses, **TOLERANCES[dtype])
    for k in eager_state:
        torch.testing.assert_close(state[k], eager_state[k], **TOLERANCES[dtype], msg=k)
    counts = _counts(native_plan.profile_report())
    assert {"forward", "backward"} <= set(counts), native_plan.profile_report()
    # Segment workspaces and the backward's short-lived gradients come from the arena.
    assert counts["backward"]["arena values"] >= 1, counts
    for kind, c in counts.items():
        assert c["workspace allocations"] == 0, (kind, c)


def test_reduce_overhead_with_the_arena_replays_and_matches_eager(arena, graph_replays):
    tccd.reset_compile_stats()
    eager_losses, eager_state = train("block", torch.float32)
    steps = 5
    losses, state = train("block", torch.float32, backend="tccd", mode="reduce-overhead", steps=steps)
    torch.testing.assert_close(losses, eager_losses, **TOLERANCES[torch.float32])
    for k in eager_state:
        torch.testing.assert_close(state[k], eager_state[k], **TOLERANCES[torch.float32], msg=k)
    _assert_all_graphed(tccd.last_compile_stats(), {"forward", "backward"})
    assert graph_replays["replays"] >= 2 * (steps - 2), graph_replays
