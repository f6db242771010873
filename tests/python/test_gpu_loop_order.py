"""GPU: a pointwise kernel over transposed operands walks them in storage order (loop_order.h).

Attention's probabilities reach the backward's P^T @ dO as a transposed view; their f32->bf16
cast iterated in the graph's order ran ~20x below bandwidth on an H100 (BERT at the zoo's large
batch: 8.4 ms of a 28.6 ms step). The daemon now permutes such a kernel's dims.
"""

import pytest
import torch

import tccd

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_cast_of_a_transposed_tensor_runs_contiguously_and_matches_eager(daemon_env):
    x = torch.randn(48, 256, 384, device="cuda")

    def f(t):
        p = t.transpose(1, 2)  # a view: [48, 384, 256] with strides [98304, 1, 384]
        return (torch.relu(p) * 2).to(torch.bfloat16), p.to(torch.bfloat16)

    torch._dynamo.reset()
    got = torch.compile(f, backend="tccd")(x)
    want = f(x)
    for g, w in zip(got, want):
        assert g.stride() == w.stride()
        torch.testing.assert_close(g, w)
    stats = tccd.last_compile_stats()
    kinds = {k["kind"] for s in stats for k in s["kernels"]}
    assert "cuda_pointwise_reordered" in kinds, stats
    assert all(s["fallback"] is None for s in stats), stats
