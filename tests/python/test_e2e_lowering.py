"""End to end against the real daemon (CPU): ops whose lowering was added or fixed run as
generated kernels and match eager.

Each test compiles a small function with backend="tccd", compares with eager and checks which
ops became native kernels (KernelInfo.ops in tccd.last_compile_stats()), so a lowering that
silently falls back to an ATen extern step fails here.
"""

import pytest
import torch

import tccd


def _compile_and_compare(fn, *args, rtol=1e-5, atol=1e-6):
    expected = fn(*args)
    got = torch.compile(fn, backend="tccd", dynamic=False)(*args)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype
        torch.testing.assert_close(g, e, rtol=rtol, atol=atol)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    return [op for s in stats for k in s["kernels"] for op in k["ops"]]


def test_bool_arithmetic_isclose_isfinite(daemon_env):
    # isclose/isfinite decompose into bool mul/bitwise ops, which once produced an invalid kernel
    # ("no arithmetic on b8").
    a = torch.randn(64)
    b = a + torch.randn(64) * 1e-6
    b[::3] += 1.0
    a[5] = float("inf")
    a[7] = float("nan")

    def f(x, y):
        return (torch.isclose(x, y), torch.isfinite(x), (x > 0) * (y > 0), (x > 0) + (y > 0),
                torch.maximum(x > 0, y > 0))

    ops = _compile_and_compare(f, a, b)
    assert "aten::bitwise_and.Tensor" in ops and "aten::mul.Tensor" in ops
