"""End to end against the real daemon (CPU): attention written the way transformers' BERT runs it
under bf16 autocast (q, k, v projected in bf16, viewed [B, S, H, D] and transposed to heads,
cast to f32, scaled, multiplied with matmul) trains like eager, and the contiguous copies that
matmul's decomposition makes of its operands (expand -> clone -> _unsafe_view) are no kernels of
their own: the scaling or cast kernel writes the operand layout itself
(codegen/passes/copy_layout_into_producer.h).
"""

import torch

import tccd

B, S, H, D = 2, 6, 3, 4


def _attention(proj, x, mask):
    b, s, _ = x.shape
    q, k, v = (p(x).view(b, s, H, D).transpose(1, 2) for p in proj)
    scale = D ** -0.25
    q, k, v = q.float(), k.float(), v.float()
    scores = torch.matmul(q * scale, k.transpose(-2, -1) * scale) + mask
    out = torch.matmul(scores.softmax(-1), v).to(torch.bfloat16)
    return out.transpose(1, 2).contiguous().view(b, s, H * D)


def _run(backend):
    torch.manual_seed(0)
    proj = [torch.nn.Linear(H * D, H * D).to(torch.bfloat16) for _ in range(3)]
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(B, S, H * D, generator=gen).to(torch.bfloat16).requires_grad_()
    mask = torch.where(torch.rand(B, 1, S, S, generator=gen) > 0.2, 0.0, -1e4)

    def step(x, mask):
        return _attention(proj, x, mask).float().square().mean()

    fn = torch.compile(step, backend=backend, dynamic=False) if backend else step
    loss = fn(x, mask)
    loss.backward()
    return [loss.detach(), x.grad] + [g for p in proj for g in (p.weight.grad, p.bias.grad)]


def _clone_only_kernels(stats):
    return [k["ops"] for s in stats for k in s["kernels"] if set(k["ops"]) == {"aten::clone.default"}]


def test_bert_attention_trains_like_eager_without_operand_copies(daemon_env):
    expected = _run(None)
    got = _run("tccd")
    for g, e in zip(got, expected):
        torch.testing.assert_close(g.float(), e.float(), rtol=2e-2, atol=2e-3)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    forward = stats[0]
    kernels = [k["ops"] for k in forward["kernels"]]
    # q * scale, k^T * scale and v are matmul operands: their kernels write them contiguous.
    assert not _clone_only_kernels([forward]), kernels


def test_inference_forward_is_bit_exact(daemon_env):
    torch.manual_seed(0)
    proj = [torch.nn.Linear(H * D, H * D).to(torch.bfloat16) for _ in range(3)]
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(B, S, H * D, generator=gen).to(torch.bfloat16)
    mask = torch.zeros(B, 1, S, S)

    def f(x, mask):
        return _attention(proj, x, mask)

    with torch.no_grad():
        expected = f(x, mask)
        got = torch.compile(f, backend="tccd", dynamic=False)(x, mask)
    torch.testing.assert_close(got, expected, rtol=2e-2, atol=2e-3)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    assert not _clone_only_kernels(stats), [k["ops"] for s in stats for k in s["kernels"]]
