"""GPU: patchify convolutions as matmuls (decompositions.py, TCCD_PATCHIFY_GEMM=cuda, opt-in). A ConvNeXt-like stem and downsample and a ViT-like patch embedding, f32 and bf16 with
channels-last inputs: the compiled step's outputs and gradients equal eager's, and its forward
runs no ATen convolution (so no process pays cuDNN's per-shape set-up for them)."""

import pytest
import torch
import torch.nn as nn

import tccd
from tccd import config, prefetch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

_TOL = {torch.float32: dict(rtol=1e-4, atol=1e-4), torch.bfloat16: dict(rtol=3e-2, atol=3e-2)}


class PatchNet(nn.Module):
    def __init__(self, c: int = 32) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, c, 4, stride=4)
        self.down = nn.Conv2d(c, 2 * c, 2, stride=2, bias=False)
        self.patch = nn.Conv2d(3, 2 * c, 16, stride=16)

    def forward(self, x):
        h = self.down(torch.relu(self.stem(x)))  # [N, 2c, 8, 8] at 64 x 64
        p = self.patch(x).flatten(2).transpose(1, 2)  # ViT's tokens [N, 16, 2c]
        return h.mean((2, 3)) + p.mean(1)


def _run(backend, dtype, channels_last):
    torch.manual_seed(0)
    model = PatchNet().cuda()
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    fn = torch.compile(model, backend=backend, dynamic=False) if backend else model
    x = torch.randn(4, 3, 64, 64, device="cuda", generator=torch.Generator(device="cuda").manual_seed(1))
    if channels_last:
        x = x.to(memory_format=torch.channels_last)
    x.requires_grad_(True)
    for step in range(2):
        model.zero_grad(set_to_none=True)
        x.grad = None
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=dtype == torch.bfloat16):
                out = fn(x)
        prefetch.wait_all(timeout_s=300)
        out.float().square().mean().backward()
        torch.cuda.synchronize()
    convs = sum(e.name == "aten::_convolution" for e in prof.events())
    grads = {k: p.grad.detach().float().clone() for k, p in model.named_parameters()}
    grads["x"] = x.grad.detach().float().clone()
    return out.detach().float(), grads, convs


@pytest.mark.parametrize("dtype,channels_last", [(torch.float32, False), (torch.bfloat16, True)],
                         ids=["f32", "bf16-channels-last"])
def test_patchify_convolutions_run_as_matmuls_with_eagers_results(daemon_env, monkeypatch, dtype, channels_last):
    # Eager's f32 convolutions would take TF32 (cuDNN's default); the matmuls do not.
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    monkeypatch.setenv("TCCD_PATCHIFY_GEMM", "cuda")
    config.reload()
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    want, want_grads, eager_convs = _run(None, dtype, channels_last)
    got, grads, convs = _run("tccd", dtype, channels_last)
    assert eager_convs == 3, eager_convs
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    torch.testing.assert_close(got, want, **_TOL[dtype])
    for k in want_grads:
        torch.testing.assert_close(grads[k], want_grads[k], **_TOL[dtype], msg=k)
    assert convs == 0, convs
