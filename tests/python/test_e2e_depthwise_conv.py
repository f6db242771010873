"""End to end against the real daemon (CPU): depthwise convolutions and their input gradients
as generated index kernels (codegen/passes/depthwise_conv_kernels.h) instead of ATen extern steps,
with results against eager's: forward (with and without bias), input gradient (the flipped
window), the weight gradient (partial sums over row blocks, then a sum) and the bias gradient
that stays ATen's, at several C/H/W/k, f32 and bf16, NCHW
and channels-last; a small ConvNeXt-like block trained a few steps matches eager. Each case
checks that the new op is in the plan's kernels (KernelInfo.ops), so a rewrite that silently
stops applying fails here; the default and TCCD_DISABLE_PASSES=depthwise-conv-kernels keep ATen's.
tests/python/test_gpu_depthwise_conv.py runs the channels-last cases on a GPU. The rewrite is
opt-in (TCCD_DEPTHWISE_KERNELS=1 in the daemon's environment): the cases run against a daemon of
their own with it; the session daemon (the default) keeps ATen's convolutions.
"""

import shutil

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import tccd
from conftest import TCCD_BINARY, Daemon, short_tempdir

_DEPTHWISE = "tccd::depthwise_conv2d.default"
_PARTIALS = "tccd::depthwise_conv2d_weight_partials.default"

# (N, C, H, W, kh, kw)
CASES = [
    (2, 8, 9, 7, 7, 7),  # ConvNeXt's 7x7 window
    (2, 16, 5, 6, 7, 7),  # a map smaller than the window (stage 4's 7x7 at small inputs)
    (1, 5, 8, 11, 3, 3),
    (3, 4, 6, 6, 5, 3),
    (1, 3, 4, 4, 1, 1),
]


@pytest.fixture(scope="module")
def depthwise_daemon():
    """A daemon whose plans take the depthwise kernels (TCCD_DEPTHWISE_KERNELS=1)."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-dw-")
    d = Daemon(TCCD_BINARY, root, env={"TCCD_DEPTHWISE_KERNELS": "1"})
    d.start()
    yield d
    d.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def dw_env(daemon_env, depthwise_daemon, monkeypatch):
    monkeypatch.setenv("TCCD_ADDRESS", depthwise_daemon.address)
    tccd.config.reload()
    return dict(daemon_env, TCCD_ADDRESS=depthwise_daemon.address)


def _kernel_ops():
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    return {op for s in stats for k in s["kernels"] for op in k["ops"]}


def _depthwise_kernels():
    """How many kernels of the last compile's graphs (forward and backward) run the new op."""
    stats = tccd.last_compile_stats()
    return sum(_DEPTHWISE in k["ops"] for s in stats for k in s["kernels"])


def _tensors(case, dtype, channels_last, gen):
    n, c, h, w, kh, kw = case
    x = torch.randn(n, c, h, w, generator=gen).to(dtype)
    if channels_last:
        x = x.to(memory_format=torch.channels_last)
    weight = (torch.randn(c, 1, kh, kw, generator=gen) / (kh * kw) ** 0.5).to(dtype)
    bias = torch.randn(c, generator=gen).to(dtype)
    return x, weight, bias


def _conv(x, weight, bias):
    return F.conv2d(x, weight, bias, 1, (weight.shape[2] // 2, weight.shape[3] // 2), 1, x.shape[1])


def _tolerance(dtype):
    return dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
def test_forward_against_eager(dw_env, case, dtype, channels_last, with_bias):
    x, weight, bias = _tensors(case, dtype, channels_last, torch.Generator().manual_seed(0))
    b = bias if with_bias else None

    def fn(x, weight, b):
        return _conv(torch.relu(x), weight, b) * 2

    expected = fn(x, weight, b)
    got = torch.compile(fn, backend="tccd", dynamic=False)(x, weight, b)
    assert got.stride() == expected.stride()
    torch.testing.assert_close(got.float(), expected.float(), **_tolerance(dtype))
    assert _DEPTHWISE in _kernel_ops()


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("channels_last", [False, True])
def test_gradients_against_eager(dw_env, case, dtype, channels_last):
    gen = torch.Generator().manual_seed(1)
    x0, w0, b0 = _tensors(case, dtype, channels_last, gen)
    g = torch.randn(x0.shape, generator=gen).to(dtype)

    def fn(x, weight, bias, g):
        return (_conv(x, weight, bias) * g).sum()

    leaves = [t.clone().requires_grad_() for t in (x0, w0, b0)]
    fn(*leaves, g).backward()
    compiled = [t.clone().requires_grad_() for t in (x0, w0, b0)]
    torch.compile(fn, backend="tccd", dynamic=False)(*compiled, g).backward()
    for e, c in zip(leaves, compiled):
        assert c.grad.stride() == e.grad.stride()
        torch.testing.assert_close(c.grad.float(), e.grad.float(), **_tolerance(dtype))
    assert _depthwise_kernels() == 2  # the forward's and the input gradient's
    assert _PARTIALS in _kernel_ops()  # the weight gradient's partial sums


class _Block(nn.Module):
    """ConvNeXt's block (timm's layout: the depthwise convolution, then channels-last layer
    norm and MLP through a permute, a residual)."""

    def __init__(self, dim):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        y = self.dwconv(x).permute(0, 2, 3, 1)
        y = self.fc2(F.gelu(self.fc1(self.norm(y))))
        return x + y.permute(0, 3, 1, 2)


@pytest.mark.parametrize("channels_last", [False, True])
def test_convnext_block_trains_like_eager(dw_env, channels_last):
    torch.manual_seed(0)
    eager = nn.Sequential(_Block(16), _Block(16))
    model = nn.Sequential(_Block(16), _Block(16))
    model.load_state_dict(eager.state_dict())
    compiled = torch.compile(model, backend="tccd", dynamic=False)
    opt_e = torch.optim.SGD(eager.parameters(), lr=0.1)
    opt_c = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(3)
    for _ in range(3):
        x = torch.randn(2, 16, 10, 10, generator=gen)
        if channels_last:
            x = x.to(memory_format=torch.channels_last)
        for net, opt in ((eager, opt_e), (compiled, opt_c)):
            opt.zero_grad()
            net(x).square().mean().backward()
            opt.step()
    for (name, pe), pc in zip(eager.named_parameters(), model.parameters()):
        torch.testing.assert_close(pc, pe, rtol=1e-4, atol=1e-5, msg=name)
    # Two forwards and the second block's input gradient (the first one's input needs none).
    assert _depthwise_kernels() == 3
    assert _PARTIALS in _kernel_ops()


def _one_conv_ops():
    x, weight, bias = _tensors(CASES[0], torch.float32, True, torch.Generator().manual_seed(4))

    def fn(x, weight, bias):
        return _conv(x, weight, bias) + 1

    got = torch.compile(fn, backend="tccd", dynamic=False)(x, weight, bias)
    torch.testing.assert_close(got, fn(x, weight, bias))
    return _kernel_ops()


def test_default_keeps_aten(daemon_env):
    """Without TCCD_DEPTHWISE_KERNELS=1 (the session daemon): ATen's convolution."""
    assert not {_DEPTHWISE, _PARTIALS} & _one_conv_ops()


def test_disabled_pass_keeps_aten(daemon_env, monkeypatch):
    """TCCD_DEPTHWISE_KERNELS=1 with TCCD_DISABLE_PASSES=depthwise-conv-kernels: ATen's."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-dw-")
    d = Daemon(TCCD_BINARY, root, env={"TCCD_DEPTHWISE_KERNELS": "1",
                                       "TCCD_DISABLE_PASSES": "depthwise-conv-kernels"})
    d.start()
    try:
        monkeypatch.setenv("TCCD_ADDRESS", d.address)
        tccd.config.reload()
        assert not {_DEPTHWISE, _PARTIALS} & _one_conv_ops()
    finally:
        d.stop()
        shutil.rmtree(root, ignore_errors=True)
