"""End to end against the real daemon (CPU): transformers' position and mask prologue
(`arange + past_seen_tokens`, find_packed_sequence_indices' shifted cat and its cumsum, the
loss's label mask) against eager, bit for bit, with the kernels the inference passes make:
integer-identities reads the arange itself, slice-of-cat computes the shifted cat inside the
sub's kernel, and horizontal fusion puts that small index kernel beside the label mask's (position
ids given as an input: of an arange, affine-factory-folding folds the whole check away, the
second test). The rotary embeddings of q and k, index kernels that one matmul reads, share a
kernel (index-reader-siblings).
"""

import torch

import tccd


def test_packed_sequence_prologue(daemon_env):
    def f(x, labels, positions):
        pos = (positions + 0).unsqueeze(0).expand(x.shape[0], -1)
        first = pos[:, :1] - 1
        shifted = torch.cat([first, pos], dim=-1)
        packed = (shifted[:, 1:] - shifted[:, :-1] != 1).cumsum(-1)
        valid = (labels != -100).to(torch.float32)
        return packed, valid, x * pos

    x = torch.randn(3, 16)
    labels = torch.randint(-100, 5, (3, 16))
    positions = torch.arange(16)
    expected = f(x, labels, positions)
    got = torch.compile(f, backend="tccd", dynamic=False)(x, labels, positions)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        assert torch.equal(g, e)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    kernels = [k["ops"] for s in stats for k in s["kernels"]]
    # No kernel of its own for the positions + 0 or the [3, 17] cat: the cat is in the sub's
    # kernel, and the label mask shares it.
    assert not any(ops == ["aten::add.Tensor"] for ops in kernels), kernels
    shifted = [ops for ops in kernels if "aten::cat.default" in ops]
    assert len(shifted) == 1 and "aten::sub.Tensor" in shifted[0], kernels
    assert "aten::_to_copy.default" in shifted[0], kernels


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def test_arange_mask_folds_and_rotary_pair_shares_a_kernel(daemon_env):
    # As masking_utils builds Llama's mask without padding: packed[b, q] == packed[b, kv] is true
    # everywhere for arange position ids, so only kv <= q is left (no cumsum, no cat, no eq).
    def f(q, k, cos, sin):
        b, s = q.shape[0], q.shape[2]
        pos = (torch.arange(s) + 0).unsqueeze(0).expand(b, -1)
        first = pos[:, :1] - 1
        shifted = torch.cat([first, pos], dim=-1)
        packed = (shifted[:, 1:] - shifted[:, :-1] != 1).cumsum(-1)
        bi = torch.arange(b)[:, None, None, None]
        qi = (torch.arange(s) + 0)[None, None, :, None]
        ki = (torch.arange(s) + 0)[None, None, None, :]
        mask = q.new_ones((), dtype=torch.bool) & (pos[bi, ki] <= pos[bi, qi])
        mask = mask & (packed[bi, qi] == packed[bi, ki])
        bias = torch.where(mask, 0.0, float("-inf"))
        q_rot = q * cos + _rotate_half(q) * sin
        k_rot = k * cos + _rotate_half(k) * sin
        return torch.softmax(q_rot @ k_rot.transpose(-1, -2) + bias, dim=-1)

    # [2, 4, 160, 64]: above horizontal fusion's small-index-group size (65536 points), which
    # would merge the pair without a common reader.
    q, k = torch.randn(2, 4, 160, 64), torch.randn(2, 4, 160, 64)
    cos, sin = torch.randn(160, 64), torch.randn(160, 64)
    expected = f(q, k, cos, sin)
    got = torch.compile(f, backend="tccd", dynamic=False)(q, k, cos, sin)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    kernels = [k["ops"] for s in stats for k in s["kernels"]]
    assert not any("aten::cat.default" in ops and "aten::sub.Tensor" in ops for ops in kernels), kernels
    assert not any("aten::eq.Tensor" in ops for ops in kernels), kernels
    # One kernel computes both rotary embeddings (two slice_backward pairs of rotate_half).
    rotary = [ops for ops in kernels if "aten::neg.default" in ops]
    assert len(rotary) == 1, kernels


def test_rotary_angles_outer_product_is_a_multiply(daemon_env):
    # LlamaRotaryEmbedding as some transformers versions write it (the CUDA trace of the zoo's
    # Llama has this f32 bmm with K = 1): outer-product-matmuls makes it a multiply, no matmul.
    def f(inv_freq, positions):
        inv = inv_freq[None, :, None].float().expand(positions.shape[0], -1, 1)
        pos = positions[:, None, :].float()
        freqs = (inv @ pos).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos(), emb.sin()

    inv_freq = 1.0 / (10000 ** (torch.arange(0, 64, 2).float() / 64))
    positions = torch.arange(40).unsqueeze(0).expand(2, -1).contiguous()
    expected = f(inv_freq, positions)
    got = torch.compile(f, backend="tccd", dynamic=False)(inv_freq, positions)
    for g, e in zip(got, expected):  # the angles are exact; cos/sin are the kernels' own
        torch.testing.assert_close(g, e, rtol=1e-6, atol=1e-6)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    kernels = [k["ops"] for s in stats for k in s["kernels"]]
    assert any("aten::mul.Tensor" in ops for ops in kernels), kernels


def test_zero_attention_mask_is_dropped(daemon_env):
    # T5's cross-attention: position_bias = zeros((1, heads, q, k)) as the additive mask
    # (zero-attention-masks): no fill kernel, values as eager's.
    import torch.nn.functional as F

    def f(q, k, v):
        bias = torch.zeros((1, q.shape[1], q.shape[2], k.shape[2]), dtype=q.dtype)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=1.0)

    q, k, v = torch.randn(2, 4, 16, 8), torch.randn(2, 4, 24, 8), torch.randn(2, 4, 24, 8)
    expected = f(q, k, v)
    got = torch.compile(f, backend="tccd", dynamic=False)(q, k, v)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    kernels = [k["ops"] for s in stats for k in s["kernels"]]
    assert not any("aten::zeros.default" in ops for ops in kernels), kernels
