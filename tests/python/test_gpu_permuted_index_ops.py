"""GPU: permuted cat/stack/pad fused with their reader (permute_into_index_ops.h) and the index
kernels' vector path (cuda_index_emitter.cc), bit for bit against eager.

ViT's backward stacks the q/k/v gradients, permutes and clones them: one kernel now, which reads
three strided views with 16-byte loads and writes 16-byte stores. Each case also runs with an
input one element off 16-byte alignment, where the same kernel takes its per-element path.
"""

import pytest
import torch

import tccd

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _check(fn, *args):
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    got = torch.compile(fn, backend="tccd", dynamic=False)(*args)
    want = fn(*args)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert torch.equal(got, want)
    stats = tccd.last_compile_stats()
    assert all(s["fallback"] is None for s in stats), stats
    return [(k["kind"], k["ops"]) for s in stats for k in s["kernels"]]


def _offset(t):
    """t's values in a tensor whose storage starts one element later (not 16-byte aligned)."""
    flat = torch.empty(t.numel() + 1, dtype=t.dtype, device=t.device)
    out = flat[1:].view(t.shape)
    out.copy_(t)
    return out


@pytest.mark.parametrize("aligned", [True, False])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_vit_qkv_stack_permute_clone_is_one_kernel(daemon_env, aligned, dtype):
    q, k, v = (torch.randn(4, 12, 197, 64, device="cuda", dtype=dtype) for _ in range(3))
    if not aligned:
        q = _offset(q)

    def f(a, b, c):
        return torch.stack([a, b, c]).permute(1, 3, 0, 2, 4).contiguous().view(-1, 3 * 12 * 64)

    kernels = _check(f, q, k, v)
    assert any("aten::stack.default" in ops and "aten::clone.default" in ops for _, ops in kernels), kernels


@pytest.mark.parametrize("aligned", [True, False])
def test_transposed_cat_and_pad_match_eager(daemon_env, aligned):
    x, y = torch.randn(8, 12, 197, 64, device="cuda"), torch.randn(8, 4, 197, 64, device="cuda")
    if not aligned:
        x = _offset(x)
    kernels = _check(lambda a, b: torch.cat([a, b * 2], dim=1).transpose(1, 2).contiguous(), x, y)
    assert any("aten::cat.default" in ops and "aten::clone.default" in ops for _, ops in kernels), kernels
    z = torch.randn(8, 197, 760, device="cuda", dtype=torch.bfloat16)
    kernels = _check(lambda a: torch.nn.functional.pad(a, (0, 8), value=1.0).transpose(1, 2) * 3, z)
    assert any("aten::constant_pad_nd.default" in ops for _, ops in kernels), kernels


def test_embedding_vector_path_matches_eager(daemon_env):
    # bf16 rows of 768 gathered by i64 ids (some of them repeated): the ids are read once per
    # thread, the rows as 16-byte vectors.
    w = torch.randn(1000, 768, device="cuda", dtype=torch.bfloat16)
    ids = torch.randint(0, 1000, (8, 512), device="cuda")
    kernels = _check(lambda t, i: torch.nn.functional.embedding(i, t) + 1, w, ids)
    assert any("aten::embedding.default" in ops for _, ops in kernels), kernels
