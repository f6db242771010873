"""End to end against the real daemon (CPU): T5's decoder-input shift (`_shift_right`: new_zeros,
a copy of the ids into a slice of it, the start token written into column 0, -100 replaced by the
pad id) compiles to ONE generated kernel with no extern step (codegen/passes/fill_copy_folding.h),
equal to eager bit for bit; read by an embedding, as in T5.

Each case checks the kernel's ops too, so a rewrite that silently stops applying fails here; the
start-token case other than the pad value keeps its select_scatter (in the same kernel).
"""

import pytest
import torch

import tccd


def _shift_right(ids, start, pad):
    shifted = ids.new_zeros(ids.shape)
    shifted[..., 1:] = ids[..., :-1].clone()
    shifted[..., 0] = start
    shifted.masked_fill_(shifted == -100, pad)
    return shifted


@pytest.mark.parametrize("start", [0, 5])
def test_shift_right_is_one_kernel(daemon_env, start):
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 32, (3, 16), generator=gen)
    ids[0, 3] = -100  # a masked label, replaced by the pad id
    table = torch.randn(32, 8, generator=gen)

    def f(x, w):
        s = _shift_right(x, start, 0)
        return s, torch.nn.functional.embedding(s, w)

    expected = f(ids, table)
    got = torch.compile(f, backend="tccd", dynamic=False)(ids, table)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        assert torch.equal(g, e)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    kernels = [k["ops"] for s in stats for k in s["kernels"]]
    masked = [ops for ops in kernels if "aten::masked_fill.Scalar" in ops]
    assert len(masked) == 1, kernels
    if start == 0:
        # The shift and its mask: one kernel; with the embedding's, the graph's only two.
        assert "aten::slice_scatter.default" in masked[0], kernels
        assert len(kernels) == 2, kernels
    else:
        # Column 0 differs from the zeros: a select_scatter of the number 5, which reads the
        # slice_scatter's kernel (an index op reading another's output: two kernels).
        assert "aten::select_scatter.default" in masked[0], kernels
        assert len(kernels) == 3, kernels
    # The zeros, the clone and the fill are constants or read through: no kernel of their own,
    # and only the slice view of the ids stays an extern step (new_zeros and copy did before).
    assert not any(ops in (["aten::full.default"], ["aten::clone.default"]) for ops in kernels), kernels
    assert sum(s["extern_steps"] for s in stats) == 1, stats
