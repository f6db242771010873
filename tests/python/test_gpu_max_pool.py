"""GPU tests of max pooling as generated index kernels (codegen/passes/max_pool_kernels.h: the
forward's values and indices, the backward in gather form, in place of ATen's max_pool2d kernels).
Skipped without CUDA; run with tests/run_gpu.sh BUNDLE -k max_pool.

- Forward values and indices equal eager's (f32, bf16; NCHW and channels-last; ties; the
  ResNet stem's 3x3 / 2 / 1 and odd sizes), and the plan launches no ATen max_pool kernel.
- Gradients against eager's: f32 equal to rounding (the same terms in the same order; ATen's CUDA
  backward accumulates in f32 too), 16-bit within a rounding.
- A ResNet stem under bf16 autocast trains like eager, the pool backward a kernel of its own
  (the batch norm's backward sums read its gradient too).
- Over channels-last maps both pool kernels launch their dense entry (`_contig`, the gathered
  map's strides fixed at compile time: codegen/cuda_host/entry_points.h), not `_strided`. tests/python/test_e2e_max_pool.py runs the same cases on the CPU.
"""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import tccd
from tccd_testlib import kernel_launches

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

_VALUES = "tccd::max_pool2d_values.default"
_OFFSETS = "tccd::max_pool2d_offsets.default"
_BACKWARD = "tccd::max_pool2d_gather_backward.default"

CASES = [
    ((8, 64, 112, 112), 3, 2, 1),  # ResNet-50's stem at batch 8
    ((2, 3, 9, 7), 3, 2, 1),
    ((1, 4, 7, 10), (3, 2), (1, 2), (1, 0)),
]


def _aten_max_pool(launched):
    """ATen's max pooling among profiled events (its CUDA kernels and its op ranges)."""
    return [k for k in launched if "max_pool_forward" in k or "max_pool_backward" in k
            or k.startswith("aten::max_pool2d")]


def _kernel_ops():
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    return {op for s in stats for k in s["kernels"] for op in k["ops"]}


def _input(shape, dtype, channels_last, ties):
    g = torch.Generator(device="cuda").manual_seed(0)
    if ties:
        x = torch.randint(0, 3, shape, device="cuda", generator=g).to(dtype)
    else:
        x = torch.randn(shape, device="cuda", generator=g).to(dtype)
    return x.to(memory_format=torch.channels_last) if channels_last else x


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("channels_last", [False, True])
def test_forward_equals_eager(daemon_env, case, dtype, channels_last):
    shape, kernel, stride, padding = case
    x = _input(shape, dtype, channels_last, ties=dtype != torch.float32)

    def fn(x):
        return F.max_pool2d(torch.relu(x), kernel, stride, padding, return_indices=True)

    ev, ei = fn(x)
    compiled = torch.compile(fn, backend="tccd", dynamic=False)
    gv, gi = compiled(x)
    assert torch.equal(gv, ev) and torch.equal(gi, ei)
    assert gv.stride() == ev.stride() and gi.stride() == ei.stride()
    ops = _kernel_ops()
    assert _VALUES in ops and _OFFSETS in ops, ops
    launched = kernel_launches(lambda: compiled(x))
    assert not _aten_max_pool(launched), launched


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("channels_last", [False, True])
def test_backward_against_eager(daemon_env, case, dtype, channels_last):
    shape, kernel, stride, padding = case
    x0 = _input(shape, dtype, channels_last, ties=True)
    w = torch.randn(F.max_pool2d(x0, kernel, stride, padding).shape, device="cuda").to(dtype)

    def fn(x, w):
        v = F.max_pool2d(torch.relu(x), kernel, stride, padding)
        return (v * w).sum() + (v * v).sum()

    x = x0.clone().requires_grad_()
    fn(x, w).backward()
    xc = x0.clone().requires_grad_()
    torch.compile(fn, backend="tccd", dynamic=False)(xc, w).backward()
    if dtype == torch.float32:
        torch.testing.assert_close(xc.grad, x.grad, rtol=1e-5, atol=1e-5)
    else:
        torch.testing.assert_close(xc.grad.float(), x.grad.float(), rtol=2e-2, atol=2e-2)
    assert _BACKWARD in _kernel_ops()


class Stem(nn.Module):
    def __init__(self, c=64):
        super().__init__()
        self.conv, self.bn = nn.Conv2d(3, c, 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(c)
        self.c1, self.b1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.head = nn.Linear(c, 10)

    def forward(self, x):
        h = F.max_pool2d(torch.relu(self.bn(self.conv(x))), 3, 2, 1)
        h = torch.relu(h + self.b1(self.c1(h)))  # the pool's gradient arrives as a sum
        return self.head(h.mean(dim=(2, 3)))


def _train(backend, steps=4):
    torch.manual_seed(0)
    model = Stem().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    fn = torch.compile(model, backend=backend) if backend else model
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(16, 3, 128, 128, device="cuda", generator=g)
    y = torch.randint(0, 10, (16,), device="cuda", generator=g)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(fn(x).float(), y)
        loss.backward()
        opt.step()
        return loss.detach()

    losses = torch.stack([step() for _ in range(steps)]).cpu()
    return losses, {k: v.detach().float().cpu() for k, v in model.state_dict().items()}, step


def test_resnet_stem_trains_like_eager(daemon_env):
    eager_losses, eager_state, _ = _train(None)
    losses, state, step = _train("tccd")
    torch.testing.assert_close(losses, eager_losses, rtol=3e-2, atol=3e-2)
    for k in eager_state:
        torch.testing.assert_close(state[k], eager_state[k], rtol=3e-2, atol=3e-2, msg=k)
    stats = tccd.last_compile_stats()
    kernels = [set(k["ops"]) for s in stats for k in s["kernels"]]
    # The batch norm's backward sums read the pool's gradient too: the gather kernel stays alone
    # (FusionOptions::max_pool_backward_alone) and writes only the bf16 gradient.
    assert any(ops == {_BACKWARD} for ops in kernels), kernels
    launched = kernel_launches(step)
    assert not _aten_max_pool(launched), launched


def test_channels_last_pool_kernels_take_the_dense_entry(daemon_env):
    """entry_points.h, index kernels: the plan declares one layout for the stem's pool kernels,
    so they launch the dense entry compiled for it (8 bf16 lanes, constant strides)."""
    x0 = _input((8, 64, 112, 112), torch.bfloat16, True, ties=False)

    def fn(x):
        return F.max_pool2d(torch.relu(x), 3, 2, 1).float().square().sum()

    x = x0.clone().requires_grad_()
    fn(x).backward()
    xc = x0.clone().requires_grad_()
    compiled = torch.compile(fn, backend="tccd", dynamic=False)
    compiled(xc).backward()
    torch.testing.assert_close(xc.grad.float(), x.grad.float(), rtol=2e-2, atol=2e-2)

    def step():
        xc.grad = None
        compiled(xc).backward()

    launched = kernel_launches(step)
    pools = [k for k in launched if "max_pool2d" in k and k.startswith("tccd_")]
    assert any("gather_backward" in k for k in pools), launched
    assert any("max_pool2d_values" in k or "max_pool2d_offsets" in k for k in pools), launched
    assert all(k.endswith("_contig") for k in pools), pools
