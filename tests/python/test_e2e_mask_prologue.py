"""End to end against the real daemon (CPU): transformers' position and mask prologue
(`arange + past_seen_tokens`, find_packed_sequence_indices' shifted cat and its cumsum, the
loss's label mask) against eager, bit for bit, with the kernels the inference passes make:
integer-identities reads the arange itself, slice-of-cat computes the shifted cat inside the
sub's kernel, and horizontal fusion puts that small index kernel beside the label mask's.
"""

import torch

import tccd


def test_packed_sequence_prologue(daemon_env):
    def f(x, labels):
        pos = (torch.arange(x.shape[1]) + 0).unsqueeze(0).expand(x.shape[0], -1)
        first = pos[:, :1] - 1
        shifted = torch.cat([first, pos], dim=-1)
        packed = (shifted[:, 1:] - shifted[:, :-1] != 1).cumsum(-1)
        valid = (labels != -100).to(torch.float32)
        return packed, valid, x * pos

    x = torch.randn(3, 16)
    labels = torch.randint(-100, 5, (3, 16))
    expected = f(x, labels)
    got = torch.compile(f, backend="tccd", dynamic=False)(x, labels)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        assert torch.equal(g, e)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    kernels = [k["ops"] for s in stats for k in s["kernels"]]
    # No kernel of its own for the arange + 0 or the [3, 17] cat: the cat is in the sub's kernel,
    # and the label mask shares it.
    assert not any(ops == ["aten::add.Tensor"] for ops in kernels), kernels
    shifted = [ops for ops in kernels if "aten::cat.default" in ops]
    assert len(shifted) == 1 and "aten::sub.Tensor" in shifted[0], kernels
    assert "aten::_to_copy.default" in shifted[0], kernels
