"""GPU: convolution biases as Inductor has them (codegen/passes/conv_bias_peel.h,
conv_backward_bias_grad.h): the forward's bias add is tccd's pointwise kernel (fused into the
layer norm that reads the convolution through a permute, ConvNeXt's block) and the backward's bias
gradient tccd's sum, where ATen's cuDNN path launches a separate elementwise add and a bf16
reduce_kernel per convolution. Forward and backward match eager in f32 and bf16, with NCHW and
channels-last inputs. The rewrites are CUDA-only (the CPU keeps ATen's convolution with bias).
"""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import tccd
from tccd_testlib import kernel_launches

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

_TOL = {torch.float32: dict(rtol=1e-4, atol=1e-4), torch.bfloat16: dict(rtol=3e-2, atol=3e-2)}


class ConvBlock(nn.Module):
    """A plain 3x3 convolution with bias, then ConvNeXt's block: a depthwise 7x7 convolution with
    bias read only through a permute by a layer norm, a pointwise MLP, the permute back."""

    def __init__(self, c: int = 32) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, c, 3, padding=1)
        self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.norm = nn.LayerNorm(c, eps=1e-6)
        self.fc = nn.Linear(c, c)

    def forward(self, x):
        h = F.gelu(self.conv(x))
        y = self.dw(h).permute(0, 2, 3, 1)
        y = self.fc(self.norm(y)).permute(0, 3, 1, 2)
        return h + y


def _run(backend, dtype, channels_last):
    torch.manual_seed(0)
    model = ConvBlock().cuda()
    fn = torch.compile(model, backend=backend) if backend else model
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(8, 3, 32, 32, device="cuda", generator=g)
    if channels_last:
        x = x.to(memory_format=torch.channels_last)
    x.requires_grad_(True)

    def step():
        model.zero_grad(set_to_none=True)
        x.grad = None
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=dtype == torch.bfloat16):
            out = fn(x)
        out.float().square().mean().backward()
        return out.detach().float()

    out = step()
    grads = {k: p.grad.detach().float().clone() for k, p in model.named_parameters()}
    grads["x"] = x.grad.detach().float().clone()
    return out, grads, step


@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "channels_last"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
def test_conv_bias_forward_and_backward_match_eager_without_atens_bias_kernels(daemon_env, dtype, channels_last):
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    want, want_grads, eager_step = _run(None, dtype, channels_last)
    got, grads, step = _run("tccd", dtype, channels_last)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    torch.testing.assert_close(got, want, **_TOL[dtype])
    for k in want_grads:  # conv.bias and dw.bias: the peeled add's and the sum's gradients
        torch.testing.assert_close(grads[k], want_grads[k], **_TOL[dtype], msg=k)

    # ATen's bias kernels: the add after cuDNN's convolution, the bias gradient's sum
    # (reduce_kernel over sum_functor). The step's own loss is a mean (MeanOps): not counted.
    def aten_bias_kernels(launches):
        return {k: n for k, n in launches.items() if ("at::native::reduce_kernel" in k and "MeanOps" not in k) or "CUDAFunctor_add" in k}

    eager = aten_bias_kernels(kernel_launches(eager_step))
    mine = aten_bias_kernels(kernel_launches(step))
    print(f"{dtype} channels_last={channels_last}: ATen bias kernels eager {eager} tccd {mine}")
    assert sum(mine.values()) < sum(eager.values()), (eager, mine)
    assert not [k for k in mine if "at::native::reduce_kernel" in k], mine
