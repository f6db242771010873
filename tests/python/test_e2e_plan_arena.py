"""The per-call arena of the native plan runtime (TCCD_PLAN_ARENA=1, tccd_plan_enable_arena): the
values a plan call allocates and frees within itself come from one buffer per dtype and device,
packed by lifetime at load; training matches eager, the runtime's per-call counts show the
allocations gone, and values that outlive the call or may be aliased stay out of it.

The training tests run the real daemon (CPU plans: kernels, C shims and dispatcher steps); the
CUDA side (segment workspaces in the arena) is tests/python/test_gpu_plan_arena.py."""

from __future__ import annotations

import re

import pytest
import torch

from tccd import native_plan
from tccd.v1 import tccd_pb2 as pb


class _Block(torch.nn.Module):
    """Conv, batch norm and relu twice with a residual add, then a linear head: CPU plans with
    kernels (relu, add), convolution C shims and dispatcher steps (the norms)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.c1, self.b1 = torch.nn.Conv2d(4, 8, 3, padding=1, bias=False), torch.nn.BatchNorm2d(8)
        self.c2, self.b2 = torch.nn.Conv2d(8, 8, 3, padding=1, bias=False), torch.nn.BatchNorm2d(8)
        self.head = torch.nn.Linear(8, 3)

    def forward(self, x):
        h = torch.relu(self.b1(self.c1(x)))
        h = torch.relu(self.b2(self.c2(h)) + h)
        return self.head(h.mean(dim=(2, 3)))


def _train(model, fn, steps=3):
    x = torch.randn(4, 4, 6, 6, generator=torch.Generator().manual_seed(1))
    for _ in range(steps):
        fn(x).square().sum().backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= 0.01 * p.grad
                p.grad = None
    return fn(x)


def _counts(report: str):
    """The report's per-call counts by plan kind ("forward", "backward") and name."""
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
def profiled(daemon_env, monkeypatch):
    # Read as each plan loads (native_plan.py and the runtime itself).
    monkeypatch.setenv("TCCD_PLAN_PROFILE", "1")
    native_plan._profiled.clear()
    yield
    native_plan._profiled.clear()


@pytest.mark.parametrize("arena", ["0", "1"])
def test_training_with_the_arena_matches_eager(profiled, monkeypatch, arena):
    monkeypatch.setenv("TCCD_PLAN_ARENA", arena)
    eager, compiled_model = _Block(), _Block()
    out = _train(compiled_model, torch.compile(compiled_model, backend="tccd"))
    torch.testing.assert_close(out, _train(eager, eager), rtol=1e-4, atol=1e-4)
    for a, b in zip(list(compiled_model.parameters()) + list(compiled_model.buffers()),
                    list(eager.parameters()) + list(eager.buffers())):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
    counts = _counts(native_plan.profile_report())
    assert set(counts) == {"forward", "backward"}, native_plan.profile_report()
    backward = counts["backward"]
    if arena == "1":
        # The backward's relu and add gradients die in the call (the norms' and convolutions'
        # backwards read them and return new tensors).
        assert backward["arena values"] >= 3, backward
        assert "(arena " in native_plan.profile_report()
    else:
        assert backward["arena values"] == 0, backward


def test_the_arena_takes_allocations_away(profiled, monkeypatch):
    allocations = {}
    for arena in ("0", "1"):
        monkeypatch.setenv("TCCD_PLAN_ARENA", arena)
        native_plan._profiled.clear()
        torch._dynamo.reset()
        model = _Block()
        _train(model, torch.compile(model, backend="tccd"))
        backward = _counts(native_plan.profile_report())["backward"]
        allocations[arena] = backward["allocations"]
        if arena == "1":
            # Each arena value was an allocation of its own; the arena is one (a single dtype).
            assert allocations["1"] == allocations["0"] - backward["arena values"] + 1, (allocations, backward)
    assert allocations["1"] < allocations["0"], allocations


def _ref(i):
    return pb.Value(ref=pb.ValueRef(node=i, output=0))


def test_values_that_escape_or_may_be_aliased_stay_out_of_the_arena():
    # v0 input; kernels define v1..v5; v2 is read by an alias step, v3 by an extern step that is
    # not fresh (a dispatcher view), v4 is a plan output, v5 is written into by nothing and read
    # only by a kernel and by a fresh extern (a C shim): only v1 and v5 qualify.
    plan = pb.Plan(num_inputs=1)
    plan.values.extend([pb.TensorMeta() for _ in range(8)])
    native = lambda ins, outs: pb.Step(native=pb.NativeCall(inputs=ins), outputs=outs)  # noqa: E731
    plan.steps.extend([
        native([0], [1]),
        native([1], [2, 3]),
        pb.Step(alias=pb.Alias(base=2), outputs=[6]),
        pb.Step(extern_call=pb.ExternCall(target="aten::t.default", args=[_ref(3)]), outputs=[7]),
        native([1], [4, 5]),
        pb.Step(extern_call=pb.ExternCall(target="aten::mm.default", args=[_ref(5), _ref(5)]), outputs=[8 - 1]),
    ])
    plan.outputs.extend([_ref(4)])
    assert native_plan.arena_values(plan, fresh_externs={5}) == [1, 5, 7]
    # Without the shim among the fresh steps its inputs may be kept, and its output is not ours.
    assert native_plan.arena_values(plan, fresh_externs=set()) == [1]
