"""GPU test of a transformer norm's backward (codegen/passes/layer_norm_param_grad_split.h,
layer-norm-grad-narrow-reads): a pre-norm block (ViT's shape, smaller) under CUDA bf16 autocast,
where the norm's input is the f32 residual and its gradient the f32 cast of a bf16 matmul
gradient. The parameter-gradient column sums recompute g * xhat from the bf16 gradient, x and
the statistics; the row kernel writes only the input gradient. Skipped without CUDA; run with
tests/run_gpu.sh BUNDLE -k layer_norm_backward.

Against eager on the same inputs (relative L2 of every gradient: bf16 matmuls through cuBLASLt
against ATen's, f32 sums in another order), and the plan's kernels: no kernel that only computes
xhat (`sub, mul`), no `mul` (g * xhat) in the norm's row kernel.
"""

import pytest
import torch
import torch.nn as nn

import tccd

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

_D = 256


class _Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.fc1 = nn.LayerNorm(_D), nn.Linear(_D, _D)
        self.norm2 = nn.LayerNorm(_D)
        self.mlp = nn.Sequential(nn.Linear(_D, 4 * _D), nn.GELU(), nn.Linear(4 * _D, _D))

    def forward(self, x):
        x = x + self.fc1(self.norm1(x))
        return x + self.mlp(self.norm2(x))


def _grads(backend):
    torch.manual_seed(0)
    model = _Block().cuda()
    x = torch.randn(16, 197, _D, device="cuda", requires_grad=True)
    compiled = torch.compile(model, backend=backend) if backend else model
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = compiled(x)
    out.float().pow(2).mean().backward()
    grads = {n: p.grad.detach().double().cpu() for n, p in model.named_parameters()}
    grads["x"] = x.grad.detach().double().cpu()
    return grads


def test_norm_backward_matches_eager_and_reads_the_bf16_gradient(daemon_env):
    tccd.reset_compile_stats()
    eager = _grads(None)
    got = _grads("tccd")
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), [s["fallback"] for s in stats]
    for name, reference in eager.items():
        rel = float((got[name] - reference).norm() / max(float(reference.norm()), 1e-30))
        assert rel < 2e-2, (name, rel)
    kernels = [[op.split("::")[-1].split(".")[0] for op in k["ops"]]
               for s in stats for k in s["kernels"]]
    rows = [k for k in kernels if "native_layer_norm_backward" in k]
    assert rows, kernels
    assert all("mul" not in k for k in rows), rows
    assert ["sub", "mul"] not in kernels, kernels
