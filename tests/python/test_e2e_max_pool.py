"""End to end against the real daemon (CPU): max pooling and its backward as generated index kernels
(codegen/passes/max_pool_kernels.h) instead of ATen extern steps, with results against eager's:
forward values and indices equal (ties take the first point in window order; a NaN wins; padding
is never chosen), gradients equal in f32 (the same terms summed in the same order) and within a
rounding of eager's in bf16/f16; NCHW and channels-last, odd sizes, padding, 3-D inputs. Each case
checks the new ops are in the plan's kernels (KernelInfo.ops), so a rewrite that silently stops
applying fails here; ceil_mode and dilation stay ATen ops. tests/python/test_gpu_max_pool.py runs
the same cases on a GPU. The CPU keeps the backward ATen's op by default (max_pool_kernels.h);
the backward cases run against a daemon of their own with TCCD_DISABLE_PASSES=
cpu-max-pool-backward-extern, which gives the CPU the gather kernel the GPU runs.
"""

import shutil

import pytest
import torch
import torch.nn.functional as F

import tccd
from conftest import TCCD_BINARY, Daemon, short_tempdir

_VALUES = "tccd::max_pool2d_values.default"
_OFFSETS = "tccd::max_pool2d_offsets.default"
_BACKWARD = "tccd::max_pool2d_gather_backward.default"

# (input shape, kernel, stride, padding)
CASES = [
    ((2, 3, 9, 7), 3, 2, 1),  # the ResNet stem's pool, odd sizes
    ((2, 5, 8, 8), 2, 2, 0),
    ((1, 4, 7, 10), (3, 2), (1, 2), (1, 0)),
    ((3, 6, 11), 3, 1, 1),  # 3-D (C, H, W)
    ((2, 3, 5, 6), 3, 3, 1),
]


@pytest.fixture(scope="module")
def gather_daemon():
    """A daemon whose CPU plans take the max-pool backward as the gather kernel."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-pool-")
    d = Daemon(TCCD_BINARY, root, env={"TCCD_DISABLE_PASSES": "cpu-max-pool-backward-extern"})
    d.start()
    yield d
    d.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def gather_env(daemon_env, gather_daemon, monkeypatch):
    monkeypatch.setenv("TCCD_ADDRESS", gather_daemon.address)
    tccd.config.reload()
    return dict(daemon_env, TCCD_ADDRESS=gather_daemon.address)


def _kernel_ops():
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    return {op for s in stats for k in s["kernels"] for op in k["ops"]}


def _input(shape, dtype, channels_last, ties, gen):
    if ties:  # few distinct values: windows with several maxima
        x = torch.randint(0, 3, shape, generator=gen).to(dtype)
    else:
        x = torch.randn(shape, generator=gen).to(dtype)
    if channels_last and x.dim() == 4:
        x = x.to(memory_format=torch.channels_last)
    return x


def _pool(x, kernel, stride, padding):
    return F.max_pool2d(x, kernel, stride, padding, return_indices=True)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("ties", [False, True])
def test_forward_equals_eager(daemon_env, case, channels_last, ties):
    shape, kernel, stride, padding = case
    x = _input(shape, torch.float32, channels_last, ties, torch.Generator().manual_seed(0))

    def fn(x):
        v, i = _pool(torch.relu(x) * 2, kernel, stride, padding)
        return v + 1, i

    ev, ei = fn(x)
    gv, gi = torch.compile(fn, backend="tccd", dynamic=False)(x)
    assert torch.equal(gv, ev) and torch.equal(gi, ei)
    ops = _kernel_ops()
    assert _VALUES in ops and _OFFSETS in ops, ops


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("channels_last", [False, True])
def test_backward_against_eager(gather_env, case, dtype, channels_last):
    shape, kernel, stride, padding = case
    gen = torch.Generator().manual_seed(1)
    x0 = _input(shape, dtype, channels_last, True, gen)
    w = torch.randn(_pool(x0, kernel, stride, padding)[0].shape, generator=gen).to(dtype)

    def fn(x, w):
        # The gradient reaching the pool's backward is a sum (a residual's two branches).
        v, _ = _pool(torch.relu(x), kernel, stride, padding)
        return (v * w).sum() + (v * v).sum()

    x = x0.clone().requires_grad_()
    fn(x, w).backward()
    xc = x0.clone().requires_grad_()
    torch.compile(fn, backend="tccd", dynamic=False)(xc, w).backward()
    assert xc.grad.stride() == x.grad.stride() or not channels_last
    if dtype == torch.float32:
        torch.testing.assert_close(xc.grad, x.grad, rtol=1e-6, atol=1e-6)
    else:
        torch.testing.assert_close(xc.grad.float(), x.grad.float(), rtol=2e-2, atol=2e-2)
    ops = _kernel_ops()
    assert _BACKWARD in ops and "aten::threshold_backward.default" in ops, ops


@pytest.mark.parametrize("channels_last", [False, True])
def test_cpu_backward_stays_aten_by_default(daemon_env, channels_last):
    """The CPU's default: the forward's kernels, ATen's backward reading their indices (the
    gather kernel is ~18x ATen's scatter there; max_pool_kernels.h), gradients eager's."""
    gen = torch.Generator().manual_seed(2)
    x0 = _input((2, 3, 9, 7), torch.float32, channels_last, True, gen)
    w = torch.randn(_pool(x0, 3, 2, 1)[0].shape, generator=gen)

    def fn(x, w):
        v, _ = _pool(torch.relu(x), 3, 2, 1)
        return (v * w).sum()

    x = x0.clone().requires_grad_()
    fn(x, w).backward()
    xc = x0.clone().requires_grad_()
    torch.compile(fn, backend="tccd", dynamic=False)(xc, w).backward()
    torch.testing.assert_close(xc.grad, x.grad, rtol=1e-6, atol=1e-6)
    ops = _kernel_ops()
    assert _VALUES in ops and _OFFSETS in ops and _BACKWARD not in ops, ops


def test_nan_wins_and_minus_inf_windows_keep_their_first_index(daemon_env):
    x = torch.randn(1, 2, 6, 6)
    x[0, 0, 1, 1] = float("nan")
    x[0, 1, :3, :3] = float("-inf")

    def fn(x):
        return _pool(x, 3, 2, 1)

    ev, ei = fn(x)
    gv, gi = torch.compile(fn, backend="tccd", dynamic=False)(x)
    torch.testing.assert_close(gv, ev, equal_nan=True, rtol=0, atol=0)
    assert torch.equal(gi, ei)
    assert _OFFSETS in _kernel_ops()


@pytest.mark.parametrize("kwargs", [dict(ceil_mode=True), dict(dilation=2)])
def test_ceil_mode_and_dilation_stay_aten(daemon_env, kwargs):
    x = torch.randn(2, 3, 9, 9)

    def fn(x):
        return F.max_pool2d(torch.relu(x), 3, 2, 1, return_indices=True, **kwargs)

    ev, ei = fn(x)
    gv, gi = torch.compile(fn, backend="tccd", dynamic=False)(x)
    assert torch.equal(gv, ev) and torch.equal(gi, ei)
    assert _VALUES not in _kernel_ops()
