"""End to end against the real daemon (CPU): a forward's constant factory that is saved for the
backward is handed out shared, not cloned per call (TCCD_SHARED_SAVED_CONSTANTS,
NativePlan.share_saved_constants).

GPT-2's and the dynamic-shapes bench's position ids, `arange(t)`, feed the position embedding
and are saved for its gradient: the static forward plan's arange step is a constant factory
(native_plan.constant_factory) that was cloned on every call because a plan output returns it
(36-44 us of host time per forward call on the H200, dyn13's profile). The recipe's runtime
knows which outputs are saved tensors and rebinds the step to an alias of the load-time tensor.
Checked here: training steps at several lengths match eager in both arms, the forward's step is
rebound only with the knob on, and a constant a user output returns stays a clone.
"""

import copy

import pytest
import torch
import torch.nn as nn

import tccd
from tccd import native_plan

LENGTHS = [6, 11, 17]


class PositionBlock(nn.Module):
    def __init__(self, d=20, vocab=50):
        super().__init__()
        self.embed, self.pos = nn.Embedding(vocab, d), nn.Embedding(64, d)
        self.ln, self.fc = nn.LayerNorm(d), nn.Linear(d, d)

    def forward(self, ids):
        x = self.embed(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        return self.fc(self.ln(x))


class PositionIdsView(PositionBlock):
    """GPT-2's form: position_ids = arange(t).unsqueeze(0), saved as that view."""

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        return self.fc(self.ln(self.embed(ids) + self.pos(positions)))


class PositionsReturned(PositionBlock):
    """The position ids are a user output too: they must stay a fresh tensor per call."""

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device)
        return self.fc(self.ln(self.embed(ids) + self.pos(positions))), positions


@pytest.fixture
def shared(monkeypatch):
    """(plan, steps rebound) per share_saved_constants call in this test."""
    calls = []
    real = native_plan.NativePlan.share_saved_constants

    def spy(self, saved):
        n = real(self, saved)
        calls.append((self, n))
        return n

    monkeypatch.setattr(native_plan.NativePlan, "share_saved_constants", spy)
    return calls


def _train(model_cls, steps=3):
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    torch.manual_seed(0)
    model = model_cls()
    eager = copy.deepcopy(model)
    compiled = torch.compile(model, backend="tccd", dynamic=False)
    for t in LENGTHS:
        for step in range(steps):
            ids = torch.randint(0, 50, (3, t), generator=torch.Generator().manual_seed(100 * t + step))
            out, ref = compiled(ids), eager(ids)
            if isinstance(out, tuple):
                torch.testing.assert_close(out[1], ref[1], rtol=0, atol=0)
                out, ref = out[0], ref[0]
            torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5, msg=f"forward at {t}, step {step}")
            weights = torch.linspace(0.5, 1.5, out.numel()).reshape(out.shape)
            (out * weights).sum().backward()
            (ref * weights).sum().backward()
            for (name, p), q in zip(model.named_parameters(), eager.parameters()):
                torch.testing.assert_close(p.grad, q.grad, rtol=1e-5, atol=1e-5, msg=f"{name} at {t}, step {step}")
                p.grad = q.grad = None
    stats = tccd.last_compile_stats()
    assert all(s["fallback"] is None for s in stats), stats


@pytest.mark.parametrize("model_cls", [PositionBlock, PositionIdsView])
@pytest.mark.parametrize("knob", ["1", "0"])
def test_saved_position_ids_are_shared_and_training_matches_eager(daemon_env, monkeypatch, shared, knob, model_cls):
    monkeypatch.setenv("TCCD_SHARED_SAVED_CONSTANTS", knob)
    tccd.config.reload()
    _train(model_cls)
    if knob == "0":
        assert shared == [], shared
        return
    # One forward plan per length, its arange rebound once the recipe's runtime took it.
    assert len(shared) >= len(LENGTHS), shared
    for plan, rebound in shared:
        assert rebound == 1, (plan.name, plan._extern_ops)
        labels = [op for op in plan._extern_ops.values() if op.startswith("aten::arange")]
        assert labels == ["aten::arange.default [shared constant, saved]"], plan._extern_ops
        assert plan._cloned_constants == {}, plan._cloned_constants  # nothing left to rebind


def test_position_ids_a_user_output_returns_stay_a_clone(daemon_env, monkeypatch, shared):
    monkeypatch.setenv("TCCD_SHARED_SAVED_CONSTANTS", "1")
    tccd.config.reload()
    _train(PositionsReturned)
    assert len(shared) >= len(LENGTHS), shared
    assert all(rebound == 0 for _, rebound in shared), shared
