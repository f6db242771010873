"""End to end against the real daemon (CPU): a clone of a fresh value that nothing else reads, in
its own layout (ConvNeXt's copy of each block's second linear, read through the block's permute
back to NCHW), is dropped (codegen/passes/redundant_clones.h): no kernel copies it, and the
results equal eager's; a clone whose source is read again stays."""

import torch

import tccd


def _block_tail(x, w, gamma, shortcut):
    y = (x @ w).view(2, 6, 6, 16).clone()
    return shortcut + gamma.view(1, 16, 1, 1) * y.permute(0, 3, 1, 2)


def _kernel_ops():
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    return [op for s in stats for k in s["kernels"] for op in k["ops"]]


def _inputs():
    g = torch.Generator().manual_seed(0)
    return (torch.randn(72, 32, generator=g), torch.randn(32, 16, generator=g),
            torch.randn(16, generator=g), torch.randn(2, 16, 6, 6, generator=g))


def test_clone_of_a_matmul_view_is_dropped(daemon_env):
    args = _inputs()
    tccd.reset_compile_stats()
    got = torch.compile(_block_tail, backend="tccd", dynamic=False)(*args)
    torch.testing.assert_close(got, _block_tail(*args), rtol=0, atol=0)
    assert "aten::clone.default" not in _kernel_ops()


def test_clone_of_a_value_read_again_stays(daemon_env):
    def f(x, w, gamma, shortcut):
        p = x @ w
        y = p.view(2, 6, 6, 16).clone()
        return shortcut + gamma.view(1, 16, 1, 1) * y.permute(0, 3, 1, 2), p.sum()

    args = _inputs()
    tccd.reset_compile_stats()
    got = torch.compile(f, backend="tccd", dynamic=False)(*args)
    for g, e in zip(got, f(*args)):
        torch.testing.assert_close(g, e, rtol=1e-6, atol=1e-5)
    assert "aten::clone.default" in _kernel_ops()
