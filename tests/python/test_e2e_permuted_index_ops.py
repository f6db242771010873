"""End to end against the real daemon (CPU): a cat, stack or constant_pad_nd read through a permute
by a pointwise op (ViT's q/k/v gradient: stack -> permute -> clone) becomes ONE generated kernel
over the permuted space (codegen/passes/permute_into_index_ops.h), with results equal to eager's.

Copies are exact, so results must be equal bit for bit; each case also checks that the index op
and its permute's reader share a kernel (KernelInfo.ops), so a rewrite that silently stops
applying fails here.
"""

import pytest
import torch

import tccd

DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.int64, torch.bool]


def _rand(shape, dtype, gen):
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) > 0.5
    if dtype == torch.int64:
        return torch.randint(-100, 100, shape, generator=gen)
    return torch.randn(shape, generator=gen).to(dtype)


def _compile_and_compare(fn, *args):
    expected = fn(*args)
    got = torch.compile(fn, backend="tccd", dynamic=False)(*args)
    if isinstance(expected, torch.Tensor):
        expected, got = (expected,), (got,)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        assert torch.equal(g, e), (g - e).abs().max() if g.is_floating_point() else "differs"
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    return [k["ops"] for s in stats for k in s["kernels"]]


def _assert_fused(kernels, index_op, reader):
    assert any(index_op in ops and reader in ops for ops in kernels), kernels


@pytest.mark.parametrize("dtype", DTYPES)
def test_vit_stack_permute_clone_is_one_kernel(daemon_env, dtype):
    gen = torch.Generator().manual_seed(0)
    q, k, v = (_rand((2, 3, 5, 8), dtype, gen) for _ in range(3))

    def f(a, b, c):  # qkv.reshape(B, N, 3, H, D).permute(2, 0, 3, 1, 4).unbind(0), backwards
        return torch.stack([a, b, c]).permute(1, 3, 0, 2, 4).contiguous().view(10, 3 * 3 * 8)

    _assert_fused(_compile_and_compare(f, q, k, v), "aten::stack.default", "aten::clone.default")


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_stack_of_non_contiguous_and_broadcast_inputs(daemon_env, dtype):
    gen = torch.Generator().manual_seed(1)
    a = _rand((4, 6, 5), dtype, gen).transpose(0, 2)   # [5, 6, 4], strides (1, 5, 30)
    b = _rand((5, 6, 4), dtype, gen)
    row = _rand((4,), dtype, gen)

    def f(x, y, r):
        s = torch.stack([x, y * 2, r.expand(5, 6, 4)], dim=-1)   # [5, 6, 4, 3]; r broadcast
        return s.permute(3, 1, 0, 2) + 1                          # read by a pointwise add

    _assert_fused(_compile_and_compare(f, a, b, row), "aten::stack.default", "aten::add.Tensor")


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_cat_permuted_along_every_dim(daemon_env, dim):
    gen = torch.Generator().manual_seed(2)
    sizes = [[3, 4, 5], [3, 4, 5]]
    sizes[1][dim] = 2
    x, y = _rand(sizes[0], torch.float32, gen), _rand(sizes[1], torch.float32, gen)

    def f(a, b):
        return torch.cat([a, b.neg()], dim=dim).permute(2, 0, 1).mul(3)

    _assert_fused(_compile_and_compare(f, x, y), "aten::cat.default", "aten::mul.Tensor")


def test_pad_permuted_then_cast(daemon_env):
    gen = torch.Generator().manual_seed(3)
    x = _rand((3, 4, 5), torch.float32, gen)

    def f(a):
        p = torch.nn.functional.pad(a, (1, 2, 0, 3), value=-1.5)  # [3, 7, 8]
        return p.permute(1, 2, 0).to(torch.bfloat16)

    _assert_fused(_compile_and_compare(f, x), "aten::constant_pad_nd.default", "aten::_to_copy.default")


def test_vit_attention_qkv_trains_like_eager(daemon_env):
    # The training pattern the rewrite is for: the backward of qkv.unbind(0) stacks the q/k/v
    # gradients, permutes and clones them for the qkv weight gradient.
    def run(backend):
        torch.manual_seed(0)
        qkv = torch.nn.Linear(16, 48)

        def step(x):
            b, n = x.shape[:2]
            q, k, v = qkv(x).reshape(b, n, 3, 2, 8).permute(2, 0, 3, 1, 4).unbind(0)
            a = (q @ k.transpose(-1, -2)).softmax(-1) @ v
            return a.square().mean()

        fn = torch.compile(step, backend=backend) if backend else step
        x = torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(1))
        loss = fn(x)
        loss.backward()
        return loss.detach(), qkv.weight.grad, qkv.bias.grad

    expected = run(None)
    got = run("tccd")
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-6)
    stats = tccd.last_compile_stats()
    assert all(s["fallback"] is None for s in stats), stats
    kernels = [k["ops"] for s in stats for k in s["kernels"]]
    _assert_fused(kernels, "aten::stack.default", "aten::clone.default")
