"""GPU end-to-end tests of the per-call arena (TCCD_PLAN_ARENA=1; skipped without CUDA): CUDA
plans take their short-lived values and segment workspaces from one caching-allocator block per
dtype per call, train like eager (also under mode="reduce-overhead", where the arena comes from
the CUDA graph pool at recording) with fewer allocations per call. The CPU side and the choice
of values: tests/python/test_e2e_plan_arena.py."""

import re

import pytest
import torch

import tccd
from tccd import native_plan
from test_gpu_training import TOLERANCES, _assert_all_graphed, graph_replays  # noqa: F401

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


class DeepCnn(torch.nn.Module):
    """Three conv + batch norm + relu blocks with residual adds: the backward's gradients pass
    from segments to convolution_backward's C shim and die there (short-lived values), and every
    block has a segment workspace. (The one-block models of test_gpu_training leave at most one
    value per dtype, which is no arena.)"""

    def __init__(self, c: int = 8, blocks: int = 3) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList(
            torch.nn.Sequential(torch.nn.Conv2d(c, c, 3, padding=1, bias=False), torch.nn.BatchNorm2d(c))
            for _ in range(blocks))
        self.head = torch.nn.Linear(c, 10)

    def forward(self, x):
        for block in self.blocks:
            x = torch.relu(x + block(x))
        return self.head(x.mean(dim=(2, 3)))


def _train_deep(backend=None, mode=None, steps=5):
    torch.manual_seed(0)
    model = DeepCnn().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    fn = torch.compile(model, backend=backend, mode=mode) if backend else model
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(16, 8, 12, 12, device="cuda", generator=g)
    y = torch.randint(0, 10, (16,), device="cuda", generator=g)
    losses = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(fn(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return torch.stack(losses).cpu(), {k: v.detach().cpu() for k, v in model.state_dict().items()}


@pytest.fixture
def profiled(daemon_env, monkeypatch):
    monkeypatch.setenv("TCCD_PLAN_PROFILE", "1")  # read as each plan loads
    native_plan._profiled.clear()
    yield monkeypatch
    native_plan._profiled.clear()


def test_training_with_the_arena_matches_eager_and_allocates_less(profiled):
    eager_losses, eager_state = _train_deep()
    totals = {}
    for arena in ("0", "1"):
        profiled.setenv("TCCD_PLAN_ARENA", arena)
        native_plan._profiled.clear()
        torch._dynamo.reset()  # new plans, loaded with this setting (read at load)
        losses, state = _train_deep(backend="tccd")
        torch.testing.assert_close(losses, eager_losses, **TOLERANCES[torch.float32])
        for k in eager_state:
            torch.testing.assert_close(state[k], eager_state[k], **TOLERANCES[torch.float32], msg=k)
        counts = _counts(native_plan.profile_report())
        assert {"forward", "backward"} <= set(counts), native_plan.profile_report()
        # Summed over the forward and the backward plan.
        totals[arena] = {k: counts["forward"][k] + counts["backward"][k]
                         for k in ("allocations", "workspace allocations", "arena values")}
    assert totals["0"]["arena values"] == 0, totals
    # Short-lived values (the backward's gradients between segments and the norms' and
    # convolutions' backwards) and segment workspaces come from the arena: fewer allocations.
    assert totals["1"]["arena values"] >= 2, totals
    assert totals["1"]["allocations"] + totals["1"]["workspace allocations"] < (
        totals["0"]["allocations"] + totals["0"]["workspace allocations"]), totals


def test_reduce_overhead_with_the_arena_replays_and_matches_eager(profiled, graph_replays):
    profiled.setenv("TCCD_PLAN_ARENA", "1")
    tccd.reset_compile_stats()
    eager_losses, eager_state = _train_deep()
    steps = 5
    losses, state = _train_deep(backend="tccd", mode="reduce-overhead", steps=steps)
    torch.testing.assert_close(losses, eager_losses, **TOLERANCES[torch.float32])
    for k in eager_state:
        torch.testing.assert_close(state[k], eager_state[k], **TOLERANCES[torch.float32], msg=k)
    _assert_all_graphed(tccd.last_compile_stats(), {"forward", "backward"})
    assert graph_replays["replays"] >= 2 * (steps - 2), graph_replays
