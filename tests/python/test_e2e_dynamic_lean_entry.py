"""End to end against the real daemon (CPU): the lean entry of symbolic plans
(TCCD_LEAN_SYMBOLIC_ENTRY, NativePlan.lean_symbolic_call).

A symbolic graph's forward and backward are called with its integer inputs (Dynamo's size
arguments, the SymInts the forward saved) before its tensors. With the knob on, the callable
backend._without_scalar_inputs returns for a native plan is the plan's own lean call, which
drops them, binds their symbols and appends the forward's SymInt outputs in one function,
cached per size. Checked here: the transformer block trained over sizes that come back in
another order (the per-size caches) matches eager at every size in both arms, the callables are
the lean ones only with the knob on, and a call the lean path does not take (another input
count) goes the general way and fails there as before.
"""


import pytest
import torch

import tccd
from tccd import backend
from test_e2e_dynamic_shapes import Block, train_ids_against_eager

SIZES = [(3, 12), (5, 7), (2, 20), (3, 12), (4, 5), (5, 7), (2, 31), (3, 12)]


@pytest.fixture
def wrapped(monkeypatch):
    """The callables backend._without_scalar_inputs returned in this test, each with the last
    argument list it was called with (`last_args`, a copy)."""
    calls = []
    real = backend._without_scalar_inputs

    def spy(plan, scalar_inputs):
        call = real(plan, scalar_inputs)
        calls.append(call)

        def recording(args):
            call.last_args = list(args)
            return call(args)

        recording._boxed_call = True
        recording.plan = call.plan
        return recording

    monkeypatch.setattr(backend, "_without_scalar_inputs", spy)
    return calls


@pytest.mark.parametrize("lean", ["1", "0"])
def test_symbolic_plans_take_the_lean_entry_and_match_eager(daemon_env, monkeypatch, wrapped, lean):
    monkeypatch.setenv("TCCD_LEAN_SYMBOLIC_ENTRY", lean)
    tccd.config.reload()
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    torch.manual_seed(0)
    model = Block(28)  # a width no other dynamic test uses (test_e2e_dynamic_shapes counts daemon compiles: 16, 24, 32)
    train_ids_against_eager(model, SIZES, 400)
    stats = tccd.last_compile_stats()
    assert all(s["fallback"] is None for s in stats), stats
    assert len(wrapped) >= 2, wrapped  # the dynamic graph's forward and backward
    names = [getattr(call, "__qualname__", "") for call in wrapped]
    if lean == "1":
        assert all("lean_symbolic_call" in n for n in names), names
    else:
        assert not any("lean_symbolic_call" in n for n in names), names


def test_a_call_the_lean_entry_does_not_take_goes_the_general_way(daemon_env, monkeypatch, wrapped):
    monkeypatch.setenv("TCCD_LEAN_SYMBOLIC_ENTRY", "1")
    tccd.config.reload()
    torch._dynamo.reset()
    torch.manual_seed(0)
    compiled = torch.compile(Block(28), backend="tccd", dynamic=True)
    for b, t in SIZES[:3]:
        compiled(torch.randint(0, 50, (b, t))).sum().backward()
    lean = [call for call in wrapped if "lean_symbolic_call" in getattr(call, "__qualname__", "")]
    assert lean, wrapped
    forward = next(call for call in lean if call.plan.name.endswith("forward"))
    args = forward.last_args[:-1]  # one tensor short
    with pytest.raises(RuntimeError, match=f"takes {forward.plan.num_inputs} inputs, got {forward.plan.num_inputs - 1}"):
        forward(args)
