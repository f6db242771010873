"""GPU: CUDA convolutions run on channels-last activations (codegen/passes/channels_last_layout.h)
with the model and its input in NCHW, as users write them: no cuDNN layout transposes
(nchwToNhwcKernel / nhwcToNchwKernel) around the convolutions, batch norms as tccd's column
kernels (batch_norm_channels_last.h), and training and inference match eager. The backward is
compiled for the channels-last saved activations the forward's plan produced
(client/tccd/saved_layouts.py). tests/python/test_e2e_channels_last.py checks the plans without a
GPU.
"""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import tccd
from tccd_testlib import kernel_launches

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

_TRANSPOSES = ("nchwToNhwc", "nhwcToNchw")
_BF16 = dict(rtol=3e-2, atol=3e-2)


class ResNetish(nn.Module):
    """Stem (7x7 stride 2, batch norm, relu, max pool) and a bottleneck block with a residual."""

    def __init__(self, c: int = 32) -> None:
        super().__init__()
        self.stem, self.bn0 = nn.Conv2d(3, c, 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(c)
        self.c1, self.b1 = nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c)
        self.c2, self.b2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.c3, self.b3 = nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c)
        self.head = nn.Linear(c, 10)

    def forward(self, x):
        h = F.max_pool2d(torch.relu(self.bn0(self.stem(x))), 3, 2, 1)
        y = torch.relu(self.b1(self.c1(h)))
        y = torch.relu(self.b2(self.c2(y)))
        h = torch.relu(h + self.b3(self.c3(y)))
        return self.head(h.mean(dim=(2, 3)))


def _train(backend, steps=5):
    torch.manual_seed(0)
    model = ResNetish().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    fn = torch.compile(model, backend=backend) if backend else model
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(16, 3, 64, 64, device="cuda", generator=g)
    y = torch.randint(0, 10, (16,), device="cuda", generator=g)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(fn(x).float(), y)
        loss.backward()
        opt.step()
        return loss.detach()

    losses = torch.stack([step() for _ in range(steps)]).cpu()
    state = {k: v.detach().float().cpu() for k, v in model.state_dict().items()}
    return losses, state, step


def test_conv_bn_relu_training_is_channels_last_inside_and_matches_eager(daemon_env):
    tccd.reset_compile_stats()
    eager_losses, eager_state, eager_step = _train(None)
    losses, state, step = _train("tccd")
    torch.testing.assert_close(losses, eager_losses, **_BF16)
    for k in eager_state:
        torch.testing.assert_close(state[k], eager_state[k], **_BF16, msg=k)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats

    # Eager's bf16 NCHW step transposes around its convolutions; tccd's has no ATen batch norm
    # kernel left and at most one transpose: the graph input, promised NCHW, read by the first
    # convolution (cuDNN converts it, as a copy kernel would).
    eager_kernels = kernel_launches(eager_step)
    assert sum(n for k, n in eager_kernels.items() if any(t in k for t in _TRANSPOSES)) > 1, eager_kernels
    kernels = kernel_launches(step)
    assert sum(n for k, n in kernels.items() if any(t in k for t in _TRANSPOSES)) <= 1, kernels
    assert not [k for k in kernels if "batch_norm" in k], kernels
    # The batch norms' normalisations (per-channel vectors over the channels-last maps) and
    # column sums (a [C] statistic over the [B, C] split) take the vectorised dense entry with
    # fixed-layout operands (codegen/cuda_host/entry_points.h), not the strided one.
    norm_kernels = [k for k in kernels if k.startswith(("tccd_pw_", "tccd_col_")) and "sub_mul" in k]
    assert norm_kernels and all(k.endswith("_contig") for k in norm_kernels), kernels


def test_saved_layout_off_keeps_nchw_and_still_matches_eager(daemon_env, monkeypatch):
    # TCCD_SAVED_LAYOUT=0: the forward's saved activations keep the traced strides, so the
    # forward stays NCHW (cuDNN transposes again), and training is still eager's.
    monkeypatch.setenv("TCCD_SAVED_LAYOUT", "0")
    from tccd import config

    config.reload()
    torch._dynamo.reset()
    eager_losses, eager_state, _ = _train(None)
    losses, state, step = _train("tccd")
    torch.testing.assert_close(losses, eager_losses, **_BF16)
    for k in eager_state:
        torch.testing.assert_close(state[k], eager_state[k], **_BF16, msg=k)
    assert any(t in k for k in kernel_launches(step) for t in _TRANSPOSES)


def test_conv_bn_relu_inference_is_channels_last_inside_and_matches_eager(daemon_env):
    torch.manual_seed(0)
    model = ResNetish().cuda().eval()
    x = torch.randn(16, 3, 64, 64, device="cuda")
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    fn = torch.compile(model, backend="tccd")
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        want = model(x)
        got = fn(x)
        torch.testing.assert_close(got.float(), want.float(), **_BF16)
        kernels = kernel_launches(lambda: fn(x))
    assert all(s["fallback"] is None for s in tccd.last_compile_stats())
    assert not [k for k in kernels if any(t in k for t in _TRANSPOSES)], kernels


def test_inference_writing_over_convolution_outputs_matches_eager(daemon_env, monkeypatch):
    # Maps of >= 1 MiB everywhere (DyingInputsIntoOutputs::kMinBytes): every batch norm (+ add)
    # (+ ReLU) kernel writes its output over the convolution's output that dies at it, the
    # stem's read only by the max pool of its segment (dying_inputs_into_outputs.h; issue 7:
    # ResNet-50 inference's peak). The results must be eager's, on every call, and each
    # convolution's output must arrive in its declared layout (else the runtime binds a fresh
    # output and copies it over the dead one after the step: "output copies").
    import re

    from tccd import native_plan

    monkeypatch.setenv("TCCD_PLAN_PROFILE", "1")  # read as each plan loads
    native_plan._profiled.clear()
    torch.manual_seed(0)
    model = ResNetish(64).cuda().eval()
    x = torch.randn(32, 3, 112, 112, device="cuda")
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    fn = torch.compile(model, backend="tccd")
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        want = model(x)
        for _ in range(3):
            torch.testing.assert_close(fn(x).float(), want.float(), **_BF16)
    assert all(s["fallback"] is None for s in tccd.last_compile_stats())
    report = native_plan.profile_report()
    copies = [float(c) for c in re.findall(r"output copies ([\d.]+)", report)]
    native_plan._profiled.clear()
    assert copies and all(c == 0 for c in copies), report


class ConvNeXtStem(nn.Module):
    """ConvNeXt's stem (4x4 stride 4, LayerNorm2d: permute, norm over channels, permute back) and
    a block's depthwise convolution and MLP."""

    def __init__(self, c: int = 32) -> None:
        super().__init__()
        self.stem, self.norm0 = nn.Conv2d(3, c, 4, stride=4), nn.LayerNorm(c, eps=1e-6)
        self.dw, self.norm1 = nn.Conv2d(c, c, 7, padding=3, groups=c), nn.LayerNorm(c, eps=1e-6)
        self.fc1, self.fc2 = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)

    def forward(self, x):
        h = self.norm0(self.stem(x).permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        y = self.fc2(F.gelu(self.fc1(self.norm1(self.dw(h).permute(0, 2, 3, 1)))))
        return (h + y.permute(0, 3, 1, 2)).mean(dim=(2, 3))


def test_convnext_stem_inference_is_channels_last_and_matches_eager(daemon_env):
    # channels-last-permutes: the stem convolution runs NHWC (its norm reads contiguous rows);
    # no cuDNN transposes, values as eager's.
    torch.manual_seed(0)
    model = ConvNeXtStem().cuda().eval()
    x = torch.randn(8, 3, 64, 64, device="cuda")
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    fn = torch.compile(model, backend="tccd")
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        want = model(x)
        got = fn(x)
        torch.testing.assert_close(got.float(), want.float(), **_BF16)
        kernels = kernel_launches(lambda: fn(x))
    assert all(s["fallback"] is None for s in tccd.last_compile_stats())
    assert not [k for k in kernels if any(t in k for t in _TRANSPOSES)], kernels
