"""TCCD_PLAN_ZERO_TANGENTS (default mode, aot_runtime._zero_tangents), end to end on the CPU.

A model that returns its loss and its logits, trained on the loss alone (as the zoo steps a
transformers model compiled whole): autograd would materialise the logits' gradient as zeros and
hold them in its `grads` tuple for the whole backward. In the recipe runtime those zeros are
made by the runtime and handed to the backward plan as its own argument, so the plan has freed
them when it returns; training is unchanged. The same under CUDA graphs is in test_cudagraphs.py.
"""

import weakref

import pytest
import torch

import tccd
from tccd import native_plan, runtime


class _LossAndLogits(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(16, 32), torch.nn.Linear(32, 8)

    def forward(self, x, y):
        logits = self.b(torch.relu(self.a(x)))
        return torch.nn.functional.cross_entropy(logits, y), logits


def _train(steps=4):
    torch.manual_seed(0)
    model = _LossAndLogits()
    gen = torch.Generator().manual_seed(1)
    batches = [(torch.randn(8, 16, generator=gen), torch.randint(0, 8, (8,), generator=gen)) for _ in range(steps)]
    fn = torch.compile(model, backend="tccd", dynamic=False)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for x, y in batches:
        opt.zero_grad(set_to_none=True)
        loss, _ = fn(x, y)
        loss.backward()
        opt.step()
        losses.append(loss.detach().clone())
    return torch.stack(losses), {k: v.detach().clone() for k, v in model.state_dict().items()}


@pytest.fixture
def logits_tangent_after_the_plan(monkeypatch):
    """Per backward plan call: whether its last argument (the logits' gradient, f32 [8, 8]) was
    still alive when the plan returned, and whether it was all zeros."""
    seen = []

    def watched(call, args):
        last = args[-1] if args else None
        if not (isinstance(last, torch.Tensor) and last.shape == (8, 8) and last.is_floating_point()):
            return call(args)
        zeros = bool((last == 0).all())
        ref = weakref.ref(last)
        del last
        out = call(args)
        seen.append((zeros, ref() is not None))
        return out

    for cls in (native_plan.NativePlan, runtime.LoadedPlan):
        real = cls.__call__

        def spy(self, args, *rest, _real=real, **kwargs):
            return watched(lambda a: _real(self, a, *rest, **kwargs), args)

        monkeypatch.setattr(cls, "__call__", spy)
    # TCCD_LEAN_ENTRY: the runtime calls a native plan through the closure lean_call returns.
    real_lean = native_plan.NativePlan.lean_call

    def lean_spy(self):
        call = real_lean(self)
        return None if call is None else (lambda args: watched(call, args))

    monkeypatch.setattr(native_plan.NativePlan, "lean_call", lean_spy)
    return seen


@pytest.mark.parametrize("knob", ["1", "0"])
def test_unused_logits_zeros_are_the_plans_to_free(daemon_env, monkeypatch, logits_tangent_after_the_plan, knob):
    monkeypatch.setenv("TCCD_PLAN_ZERO_TANGENTS", "0")
    tccd.config.reload()
    reference_losses, reference_state = _train()
    torch._dynamo.reset()
    logits_tangent_after_the_plan.clear()
    monkeypatch.setenv("TCCD_PLAN_ZERO_TANGENTS", knob)
    tccd.config.reload()
    losses, state = _train()
    assert torch.equal(losses, reference_losses)
    for k in reference_state:
        assert torch.equal(state[k], reference_state[k]), k
    # The reference run stored the graph's AOT recipe, so every step here runs the recipe's
    # runtime: with the knob its own zeros, freed by the plan; without, autograd's, which its
    # grads tuple holds past the plan's return.
    expected = (True, False) if knob == "1" else (True, True)
    assert logits_tangent_after_the_plan == [expected] * 4, logits_tangent_after_the_plan
