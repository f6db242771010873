"""GPU: Llama's attention prologue as transformers builds it without padding, against eager.

affine-factory-folding folds the packed-sequence check of arange position ids (the cumsum, the
diff's cat, the eq of gathered packed ids) so the mask is `kv <= q` through the position ids;
index-reader-siblings computes the rotary embeddings of q and k, which attention reads, in one
index kernel. The mask bit for bit against eager, the values within bf16/f32 tolerances; the kernel
list checked as on the CPU (test_e2e_mask_prologue.py).
"""

import pytest
import torch
import torch.nn.functional as F

import tccd

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def _prologue(q, k, cos, sin):
    b, s = q.shape[0], q.shape[2]
    pos = (torch.arange(s, device=q.device) + 0).unsqueeze(0).expand(b, -1)
    first = pos[:, :1] - 1
    shifted = torch.cat([first, pos], dim=-1)
    packed = (shifted[:, 1:] - shifted[:, :-1] != 1).cumsum(-1)
    bi = torch.arange(b, device=q.device)[:, None, None, None]
    qi = (torch.arange(s, device=q.device) + 0)[None, None, :, None]
    ki = (torch.arange(s, device=q.device) + 0)[None, None, None, :]
    mask = q.new_ones((), dtype=torch.bool) & (pos[bi, ki] <= pos[bi, qi])
    mask = mask & (packed[bi, qi] == packed[bi, ki])
    q_rot = q * cos + _rotate_half(q) * sin
    k_rot = k * cos + _rotate_half(k) * sin
    return mask, q_rot, k_rot


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_mask_and_rotary_pair_like_eager(daemon_env, dtype):
    def f(q, k, v, cos, sin):
        mask, q_rot, k_rot = _prologue(q, k, cos, sin)
        bias = torch.where(mask, 0.0, float("-inf")).to(dtype)
        # The mask and both rotary values leave the graph too, to compare them exactly.
        return F.scaled_dot_product_attention(q_rot, k_rot, v, attn_mask=bias), mask, q_rot, k_rot

    q, k, v = (torch.randn(2, 16, 256, 64, device="cuda", dtype=dtype) for _ in range(3))
    cos, sin = (torch.randn(256, 64, device="cuda", dtype=dtype) for _ in range(2))
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    got = torch.compile(f, backend="tccd", dynamic=False)(q, k, v, cos, sin)
    want = f(q, k, v, cos, sin)
    assert torch.equal(got[1], want[1])
    # bf16: the kernel holds f32 between the ops (eager rounds after each), as Inductor does.
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == torch.bfloat16 else dict(rtol=1e-4, atol=1e-5)
    for g, w in zip((got[0], got[2], got[3]), (want[0], want[2], want[3])):
        torch.testing.assert_close(g, w, **tol)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    kernels = [k["ops"] for s in stats for k in s["kernels"]]
    assert not any("aten::eq.Tensor" in ops for ops in kernels), kernels
    assert len([ops for ops in kernels if "aten::neg.default" in ops]) == 1, kernels
