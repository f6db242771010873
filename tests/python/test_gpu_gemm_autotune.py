"""GPU: with the daemon's TCCD_GEMM_AUTOTUNE=n (default 0: the heuristic's first algorithm),
matmuls time n of cuBLASLt's candidate algorithms when their plan loads and keep the fastest
(codegen/cuda_host/runtime/tccd_cuda_tune.h). Whatever algorithm a load keeps, the results must
match eager: a ConvNeXt-like MLP block (bias epilogues forward, long-k weight gradients backward,
the shapes whose heuristic pick was slow), f32 with a bias, and a batched f16 bmm, each against
eager, untuned (the session daemon), tuned, and tuned with the swapped formulation allowed
(TCCD_GEMM_AUTOTUNE_SWAP=1; daemons of their own).
"""

import shutil

import pytest
import torch

import tccd
from conftest import TCCD_BINARY, Daemon, short_tempdir

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


class Mlp(torch.nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.fc1 = torch.nn.Linear(d, h)
        self.fc2 = torch.nn.Linear(h, d)

    def forward(self, x):
        return self.fc2(torch.nn.functional.gelu(self.fc1(x)))


def _mlp_step(backend):
    """Output and every gradient of one bf16-autocast training step of ConvNeXt-T stage 1's MLP
    at batch 4 (4 * 56 * 56 tokens x 96 -> 384 -> 96)."""
    torch.manual_seed(0)
    model = Mlp(96, 384).cuda()
    x = torch.randn(4 * 56 * 56, 96, device="cuda", requires_grad=True)
    fn = model if backend is None else torch.compile(model, backend=backend, dynamic=False)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = fn(x)
    out.float().square().mean().backward()
    grads = [x.grad] + [p.grad for p in model.parameters()]
    return [out.float()] + [g.float() for g in grads]


def _linear_f32(x, w, b):
    return torch.nn.functional.linear(x, w, b).relu()


def _bmm_f16(a, b):
    return torch.bmm(a, b) * 0.5


def _check_against_eager():
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    expected, got = _mlp_step(None), _mlp_step("tccd")
    for e, g in zip(expected, got):
        # bf16 sums of up to 12544 terms in another order (split-k or not): relative 2e-2.
        torch.testing.assert_close(g, e, rtol=2e-2, atol=2e-2 * e.abs().max().item())

    torch.manual_seed(1)
    args = (torch.randn(512, 256, device="cuda"), torch.randn(320, 256, device="cuda"),
            torch.randn(320, device="cuda"))
    compiled = torch.compile(_linear_f32, backend="tccd", dynamic=False)
    torch.testing.assert_close(compiled(*args), _linear_f32(*args), rtol=1e-3, atol=1e-3)

    args = (torch.randn(12, 128, 64, device="cuda", dtype=torch.float16),
            torch.randn(12, 64, 96, device="cuda", dtype=torch.float16))
    compiled = torch.compile(_bmm_f16, backend="tccd", dynamic=False)
    torch.testing.assert_close(compiled(*args), _bmm_f16(*args), rtol=1e-2, atol=1e-2)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats


def test_untuned_matmuls_match_eager(daemon_env):
    _check_against_eager()


@pytest.fixture(params=[{"TCCD_GEMM_AUTOTUNE": "8"},
                        {"TCCD_GEMM_AUTOTUNE": "8", "TCCD_GEMM_AUTOTUNE_SWAP": "1"}],
                ids=["tuned", "swap"])
def knob_daemon(monkeypatch, tmp_path, request):
    """A daemon with TCCD_GEMM_AUTOTUNE=8, and with TCCD_GEMM_AUTOTUNE_SWAP=1 (weight
    gradients may run as D^T = B^T A^T, row-ordered)."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    for name, value in request.param.items():
        monkeypatch.setenv(name, value)
    root = short_tempdir("tccd-knob-")
    d = Daemon(TCCD_BINARY, root)
    d.start()
    monkeypatch.setenv("TCCD_ADDRESS", d.address)
    monkeypatch.setenv("TCCD_NO_AUTOSTART", "1")
    monkeypatch.setenv("TCCD_CACHE_DIR", str(tmp_path / "client-cache"))
    monkeypatch.setenv("TCCD_AOT_SHARE", "0")
    from tccd import config

    config.reload()
    yield d
    try:
        if d.alive():
            assert d.stop() == 0, d.log_tail()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_tuned_and_swapped_matmuls_match_eager(knob_daemon):
    _check_against_eager()
