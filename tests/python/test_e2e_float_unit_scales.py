"""End to end against the real daemon (CPU): attention with a learned additive bias and scale 1.0,
as T5 calls SDPA, forward and backward against eager (codegen/passes/float_unit_scales.h).

A bias that needs a gradient sends SDPA down PyTorch's math path, which scales q and k each by
sqrt(scale) and their gradients again: with T5's scale 1.0 those are `x * 1.0`. The daemon reads
x instead, so no kernel of the plans is a lone multiply (T5's backward had one copy kernel per
biased attention layer), and the results match eager's.
"""

import pytest
import torch
import torch.nn.functional as F

import tccd


def _attention(x, wq, wk, wv, bias):
    # The projections as T5's: q and k are intermediates, so their gradients (scaled by 1.0 on
    # the math path) feed the projections' matmuls rather than leave the graph.
    q, k, v = ((x @ w).view(2, 16, 4, 8).transpose(1, 2) for w in (wq, wk, wv))
    return F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=1.0)


def test_biased_attention_with_unit_scale_has_no_lone_multiply(daemon_env):
    tccd.reset_compile_stats()
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 16, 32, generator=gen)
    wq, wk, wv = (0.2 * torch.randn(32, 32, generator=gen) for _ in range(3))
    bias = 0.1 * torch.randn(1, 4, 16, 16, generator=gen)
    results = []
    for compiled in (False, True):
        xs = [t.clone().requires_grad_(True) for t in (x, wq, wk, wv, bias)]
        f = torch.compile(_attention, backend="tccd", dynamic=False) if compiled else _attention
        out = f(*xs)
        out.backward(torch.randn(out.shape, generator=torch.Generator().manual_seed(1)))
        results.append([out.detach()] + [x.grad for x in xs])
    for e, g in zip(*results):
        torch.testing.assert_close(g, e, rtol=1e-4, atol=1e-5)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    kernels = [k["ops"] for s in stats for k in s["kernels"]]
    assert not any(set(ops) <= {"aten::mul.Scalar", "aten::mul.Tensor"} for ops in kernels if ops), kernels
