"""End to end against the real daemon (CPU): kernels of transcendental-heavy training graphs (GELU
and its backward, SiLU, tanh, sigmoid) give eager's results with the CPU kernels' vector width of
either setting: the default (512-bit vectors on an AVX-512 CPU, CpuTarget::wide_vectors) and a
daemon of its own started with TCCD_DISABLE_PASSES=cpu-512-bit-vectors (256-bit, as before). Odd
sizes make the vectorised loops' remainders run. The IR side (which vector type each setting
gives) is tests/codegen/cpu/cpu_backend_test.cc's.
"""

import shutil

import pytest
import torch
import torch.nn as nn

import tccd
from conftest import TCCD_BINARY, Daemon, short_tempdir


@pytest.fixture(scope="module")
def narrow_daemon():
    """A daemon whose CPU kernels use 256-bit vectors."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-vec-")
    d = Daemon(TCCD_BINARY, root, env={"TCCD_DISABLE_PASSES": "cpu-512-bit-vectors"})
    d.start()
    yield d
    d.stop()
    shutil.rmtree(root, ignore_errors=True)


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(37, 61)
        self.b = nn.Linear(61, 29)

    def forward(self, x):
        h = nn.functional.gelu(self.a(x))
        h = h * torch.sigmoid(h) + torch.tanh(h)  # SiLU-like, and tanh
        return nn.functional.gelu(self.b(h))


def _train(model, x, steps=3):
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return torch.stack(losses), [p.detach().clone() for p in model.parameters()]


@pytest.mark.parametrize("width", ["default", "256-bit"])
def test_transcendental_training_matches_eager(width, daemon_env, narrow_daemon, monkeypatch):
    if width == "256-bit":
        monkeypatch.setenv("TCCD_ADDRESS", narrow_daemon.address)
        tccd.config.reload()
    torch.manual_seed(0)
    x = torch.randn(13, 37) * 3  # erf's both branches, tanh/sigmoid saturating
    eager = _Net()
    compiled_model = _Net()
    compiled_model.load_state_dict(eager.state_dict())
    want_losses, want_params = _train(eager, x)
    got_losses, got_params = _train(torch.compile(compiled_model, backend="tccd", dynamic=False), x)

    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    assert any(k["ops"] for s in stats for k in s["kernels"]), "no generated kernels"
    torch.testing.assert_close(got_losses, want_losses, rtol=2e-5, atol=1e-6)
    for got, want in zip(got_params, want_params):
        torch.testing.assert_close(got, want, rtol=2e-5, atol=1e-6)
