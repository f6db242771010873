"""CPU: convolutions with bias (forward and backward) through tccd match eager. The conv-bias
rewrites (codegen/passes/conv_bias_peel.h, conv_backward_bias_grad.h) are CUDA-only, as
Inductor's are, so on the CPU the plans keep ATen's convolution with its bias; this guards that
the CPU path is unchanged. tests/python/test_gpu_conv_bias.py checks the CUDA side on a GPU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

import tccd


class ConvBlock(nn.Module):
    def __init__(self, c: int = 8) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, c, 3, padding=1)
        self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.norm = nn.LayerNorm(c, eps=1e-6)

    def forward(self, x):
        h = F.gelu(self.conv(x))
        return h + self.norm(self.dw(h).permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


def _grads(backend):
    torch.manual_seed(0)
    model = ConvBlock()
    fn = torch.compile(model, backend=backend) if backend else model
    x = torch.randn(2, 3, 12, 12, generator=torch.Generator().manual_seed(1), requires_grad=True)
    out = fn(x)
    out.square().mean().backward()
    grads = {k: p.grad.clone() for k, p in model.named_parameters()}
    grads["x"] = x.grad.clone()
    return out.detach(), grads


def test_cpu_conv_with_bias_forward_and_backward_match_eager(daemon_env):
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    want, want_grads = _grads(None)
    got, grads = _grads("tccd")
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    for k in want_grads:
        torch.testing.assert_close(grads[k], want_grads[k], rtol=1e-5, atol=1e-5, msg=k)
