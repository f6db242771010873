"""GPU tests of depthwise convolutions as generated index kernels
(codegen/passes/depthwise_conv_kernels.h: the forward, the input gradient and the weight
gradient's partial sums in place of cuDNN's depthwise engine). Skipped without CUDA; run with
tests/run_gpu.sh BUNDLE -k depthwise.

- Forward and gradients against eager's (cuDNN's): channels-last maps, ConvNeXt's 7x7 and a 3x3,
  f32 and bf16, with and without bias; the plan's steady step launches no cuDNN depthwise kernel
  (`conv2d_c1_k1_nhwc`, `dgrad2d_c1_k1_nhwc`, `wgrad2d_c1_k1_nhwc`), and ours are the CUDA backend's depthwise templates (`_dw`, cuda_depthwise_emitter.h; session 18's
  index form, `_contig`, with TCCD_DEPTHWISE_TEMPLATES=0, bit-identical forward and input
  gradient).
- A two-block ConvNeXt stage under bf16 autocast trains like eager.
tests/python/test_e2e_depthwise_conv.py runs the CPU cases (both layouts). The rewrite is opt-in
(TCCD_DEPTHWISE_KERNELS=1 in the daemon's environment): these tests start a daemon with it.
"""

import shutil

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import tccd
from conftest import TCCD_BINARY, Daemon, short_tempdir
from tccd_testlib import kernel_launches
# The daemon with the depthwise kernels on, and the client pointed at it: the CPU tests' fixtures.
from test_e2e_depthwise_conv import depthwise_daemon, dw_env  # noqa: F401

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

_DEPTHWISE = "tccd::depthwise_conv2d.default"

# (N, C, H, W, k)
CASES = [
    pytest.param((8, 96, 56, 56, 7), id="stage1"),  # ConvNeXt-T's stage 1 at batch 8
    pytest.param((4, 768, 7, 7, 7), id="stage4"),  # the window covers the map
    pytest.param((2, 40, 9, 11, 3), id="3x3"),
]




def _cudnn_depthwise(launched):
    """cuDNN's depthwise kernels (forward, dgrad, wgrad) among the launches."""
    return [k for k in launched if "2d_c1_k1_nhwc" in k]


def _depthwise_kernels():
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    return sum(_DEPTHWISE in k["ops"] for s in stats for k in s["kernels"])


def _tensors(case, dtype):
    n, c, h, w, k = case
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(n, c, h, w, device="cuda", generator=g).to(dtype)
    weight = (torch.randn(c, 1, k, k, device="cuda", generator=g) / k).to(dtype)
    bias = torch.randn(c, device="cuda", generator=g).to(dtype)
    go = torch.randn(n, c, h, w, device="cuda", generator=g).to(dtype)
    cl = torch.channels_last
    return x.to(memory_format=cl), weight, bias, go.to(memory_format=cl)


def _tolerance(dtype):
    # f32: against an f64 reference (test_gradients_against_eager); bf16: against eager's bf16.
    return dict(rtol=2e-3, atol=2e-3) if dtype == torch.float32 else dict(rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
@pytest.mark.parametrize("with_bias", [False, True])
def test_gradients_against_eager(dw_env, case, dtype, with_bias):
    x0, w0, b0, go = _tensors(case, dtype)
    k = case[4]

    def fn(x, weight, bias, go):
        # The loss in f32 from the convolution's output on: the gradient reaching the backward is
        # then channels-last, as in a model (a bf16 product's gradient would come from a
        # contiguous cast of the sum's expand, and an NCHW gradient stays cuDNN's on CUDA).
        return (F.conv2d(x, weight, bias, 1, k // 2, 1, x.shape[1]).float() * go.float()).sum()

    # The f32 reference in f64: eager's cuDNN takes TF32 (allow_tf32 is on by default), whose
    # error over a weight gradient's 25,088 products (stage1) reaches ~0.15, far past the
    # tolerance; ours accumulates in f32 (session 19's GPU suite caught the f32 reference).
    ref = torch.float64 if dtype == torch.float32 else dtype
    leaves = [t.to(ref).clone().requires_grad_() for t in (x0, w0, b0)]
    if not with_bias:
        leaves[2] = None
    fn(*leaves, go.to(ref)).backward()
    compiled_leaves = [t.clone().requires_grad_() for t in (x0, w0, b0)]
    if not with_bias:
        compiled_leaves[2] = None
    compiled = torch.compile(fn, backend="tccd", dynamic=False)
    compiled(*compiled_leaves, go).backward()
    for e, c in zip(leaves, compiled_leaves):
        if e is None:
            continue
        # Strides of size-1 dims are free: f64's cuDNN returns the weight gradient as (49, 49, 7, 1).
        assert [st for st, n in zip(c.grad.stride(), c.grad.shape) if n > 1] == \
            [st for st, n in zip(e.grad.stride(), e.grad.shape) if n > 1]
        torch.testing.assert_close(c.grad.to(ref), e.grad, **_tolerance(dtype))
    assert _depthwise_kernels() == 2  # the forward and the input gradient

    def step():
        for t in compiled_leaves:
            if t is not None:
                t.grad = None
        compiled(*compiled_leaves, go).backward()

    launched = kernel_launches(step)
    assert not _cudnn_depthwise(launched), launched
    ours = [n for n in launched if "depthwise_conv2d" in n and n.startswith("tccd_")]
    # The forward, the input gradient, the weight gradient's partials: the CUDA backend's
    # templates (cuda_depthwise_emitter.h: every case has an even C).
    assert len(ours) == 3 and all(n.endswith("_dw") for n in ours), ours


@pytest.fixture(scope="module")
def index_form_daemon():
    """A daemon with the depthwise kernels in session 18's index form (TCCD_DEPTHWISE_TEMPLATES=0)."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-dwi-")
    d = Daemon(TCCD_BINARY, root,
               env={"TCCD_DEPTHWISE_KERNELS": "1", "TCCD_DEPTHWISE_TEMPLATES": "0"})
    d.start()
    yield d
    d.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("case", CASES)
def test_templates_match_the_index_form(daemon_env, depthwise_daemon, index_form_daemon,
                                        monkeypatch, case):
    """The templates sum the same f32 terms in the same order as the index kernels: the forward
    and the input gradient are bit-identical (the weight gradient's partials cover other row
    blocks, so its sum rounds differently: close only)."""
    x0, w0, _, go = _tensors(case, torch.bfloat16)
    k = case[4]

    def fn(x, weight, go):
        y = F.conv2d(x, weight, None, 1, k // 2, 1, x.shape[1])
        return y, (y.float() * go.float()).sum()

    results = []
    for daemon, entry in ((depthwise_daemon, "_dw"), (index_form_daemon, "_contig")):
        monkeypatch.setenv("TCCD_ADDRESS", daemon.address)
        tccd.config.reload()
        torch._dynamo.reset()
        leaves = [t.clone().requires_grad_() for t in (x0, w0)]
        compiled = torch.compile(fn, backend="tccd", dynamic=False)
        y, loss = compiled(*leaves, go)
        loss.backward()
        launched = kernel_launches(lambda: compiled(*leaves, go)[1].backward())
        ours = [n for n in launched if "depthwise_conv2d" in n and n.startswith("tccd_")]
        assert ours and all(n.endswith(entry) for n in ours), ours
        results.append((y.detach(), leaves[0].grad, leaves[1].grad))
    (y_t, gx_t, gw_t), (y_i, gx_i, gw_i) = results
    assert torch.equal(y_t, y_i)
    assert torch.equal(gx_t, gx_i)
    torch.testing.assert_close(gw_t.float(), gw_i.float(), rtol=1e-2, atol=1e-2)


class _Block(nn.Module):
    """timm's ConvNeXt block: depthwise 7x7, then layer norm and MLP channels-last."""

    def __init__(self, dim):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim)
        self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x):
        y = self.dwconv(x).permute(0, 2, 3, 1)
        y = self.fc2(F.gelu(self.fc1(self.norm(y))))
        return x + y.permute(0, 3, 1, 2)


def _train(backend, steps=4):
    torch.manual_seed(0)
    model = nn.Sequential(_Block(96), _Block(96)).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    fn = torch.compile(model, backend=backend) if backend else model
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(8, 96, 28, 28, device="cuda", generator=g).to(memory_format=torch.channels_last)
    x.requires_grad_()

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = fn(x).float().square().mean()
        loss.backward()
        opt.step()
        return loss.detach()

    losses = torch.stack([step() for _ in range(steps)]).cpu()
    return losses, {k: v.detach().float().cpu() for k, v in model.state_dict().items()}, step


def test_convnext_stage_trains_like_eager(dw_env):
    eager_losses, eager_state, _ = _train(None)
    losses, state, step = _train("tccd")
    torch.testing.assert_close(losses, eager_losses, rtol=3e-2, atol=3e-2)
    for k in eager_state:
        torch.testing.assert_close(state[k], eager_state[k], rtol=3e-2, atol=3e-2, msg=k)
    assert _depthwise_kernels() == 4  # two blocks, forward and input gradient
    launched = kernel_launches(step)
    assert not _cudnn_depthwise(launched), launched
