"""End to end against the real daemon: tensors AOTAutograd lifts into graph attributes
(`_tensor_constant0`, e.g. a `torch.tensor(...)` made inside forward, as transformers' decoder
masks are) travel in the request as Graph.constants instead of sending the whole graph to eager."""

import pytest
import torch

import tccd


class _WithConstants(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.scale = scale

    def forward(self, x):
        mask = torch.tensor([True, False, True])
        y = torch.relu(self.lin(x)).masked_fill(mask, -2.0)
        return y * torch.tensor(self.scale) + torch.tensor(0.5, dtype=torch.bfloat16).float()


def _train(model, backend, steps=3):
    fn = torch.compile(model, backend=backend) if backend else model
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, 3, generator=torch.Generator().manual_seed(1))
    losses = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = (fn(x) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return torch.stack(losses), {k: v.detach().clone() for k, v in model.state_dict().items()}


def _model(scale):
    torch.manual_seed(0)
    return _WithConstants(scale)


def test_lifted_constants_compile_and_train_like_eager(daemon_env):
    eager_losses, eager_state = _train(_model([1.0, 2.0, 3.0]), None)
    tccd.reset_compile_stats()
    losses, state = _train(_model([1.0, 2.0, 3.0]), "tccd")
    torch.testing.assert_close(losses, eager_losses, rtol=1e-5, atol=1e-6)
    for k in eager_state:
        torch.testing.assert_close(state[k], eager_state[k], rtol=1e-5, atol=1e-6)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    assert any(s["native_kernels"] for s in stats), stats


def test_constant_bytes_are_part_of_the_key(daemon_env):
    def forward_key(scale):
        torch._dynamo.reset()
        tccd.reset_compile_stats()
        model = _model(scale)
        torch.compile(model, backend="tccd")(torch.randn(2, 3))
        (forward,) = [s for s in tccd.last_compile_stats() if s["kind"] in ("forward", "inference")]
        assert forward["fallback"] is None, forward
        return forward["key"]

    a = forward_key([1.0, 2.0, 3.0])
    assert forward_key([1.0, 2.0, 3.0]) == a
    assert forward_key([1.0, 2.0, 4.0]) != a


def test_constants_over_the_limit_are_refused_clearly(daemon_env, monkeypatch):
    monkeypatch.setenv("TCCD_MAX_CONSTANT_MB", "0.000001")  # about one byte
    tccd.config.reload()
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    with pytest.warns(tccd.TccdFallbackWarning, match="TCCD_MAX_CONSTANT_MB"):
        torch.compile(_model([1.0, 2.0, 3.0]), backend="tccd")(torch.randn(2, 3))
    (forward,) = [s for s in tccd.last_compile_stats() if s["kind"] in ("forward", "inference")]
    assert "over the limit" in forward["fallback"], forward
