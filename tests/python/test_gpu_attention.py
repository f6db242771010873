"""GPU end to end (skipped without CUDA): causal scaled-dot-product attention, as GPT-2 and
Llama run it, trained under backend="tccd" with each fused attention kernel (flash, cuDNN) forced.
Every plan step runs natively (python_steps 0 in every graph, on torch 2.11 too: the forward
through AOTInductor's typed attention shims, the backward through the dispatcher with undefined
tensors for the None cum_seq_q/cum_seq_k), and the outputs and gradients match eager's."""

import pytest
import torch
import torch.nn.functional as F

import tccd

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

TARGETS = {"flash": "aten::_scaled_dot_product_flash_attention.default",
           "cudnn": "aten::_scaled_dot_product_cudnn_attention.default"}


def _attention(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True).relu().sum(dim=-1)


@pytest.mark.parametrize("kernel", sorted(TARGETS))
def test_causal_attention_trains_with_no_python_step(daemon_env, kernel):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backend = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}[kernel]
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, 64, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    try:
        with sdpa_kernel([backend]):
            ref_in = [t.clone().requires_grad_() for t in (q, k, v)]
            _attention(*ref_in).float().sum().backward()
    except RuntimeError as e:
        pytest.skip(f"{kernel} attention is not available here: {e}")
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    fn = torch.compile(_attention, backend="tccd")
    with sdpa_kernel([backend]):
        for _ in range(2):  # the second step runs in the recipe's runtime (TCCD_LEAN_RUNTIME)
            got_in = [t.clone().requires_grad_() for t in (q, k, v)]
            out = fn(*got_in)
            out.float().sum().backward()
    ref = _attention(*[t.detach() for t in ref_in])
    torch.testing.assert_close(out, ref, rtol=2e-2, atol=2e-2)
    for g, r in zip(got_in, ref_in):
        torch.testing.assert_close(g.grad, r.grad, rtol=2e-2, atol=2e-2)
    stats = tccd.last_compile_stats()
    print(kernel, [(s["name"], s["extern_steps"], s["python_steps"], s["python_step_reasons"]) for s in stats])
    assert {s["kind"] for s in stats} == {"forward", "backward"} and all(s["fallback"] is None for s in stats)
    assert all(s["python_steps"] == 0 for s in stats), [s["python_step_reasons"] for s in stats]


def _padded_attention(x, wq, wk, wv, mask):
    # As transformers' BERT: [B, S, H*D] projections viewed as [B, H, S, D], a padding mask.
    b, s, _ = x.shape
    q, k, v = ((x @ w).view(b, s, 8, 64).transpose(1, 2) for w in (wq, wk, wv))
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    return o.transpose(1, 2).contiguous().view(b, s, 512)


def test_math_attention_runs_fused_close_to_eager(daemon_env, monkeypatch):
    """SDPA traced as its f32 math path (as BERT's and T5's attention reach tccd on the GPU; here
    forced with sdpa_kernel(MATH) while compiling) runs as one bf16 attention call
    (math_attention_to_fused.h; 4 x 8 x 512 x 512 scores, at the default size limit), a fused
    kernel at run time, natively, and its output is within bf16 noise of eager's f32 math."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from tccd import compiler

    plans = []
    original = compiler.load_plan
    monkeypatch.setattr(compiler, "load_plan", lambda plan, *a, **k: plans.append(plan) or original(plan, *a, **k))
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(4, 512, 512, device="cuda", dtype=torch.bfloat16, generator=g)
    wq, wk, wv = (torch.randn(512, 512, device="cuda", dtype=torch.bfloat16, generator=g) / 24 for _ in range(3))
    mask = torch.zeros(4, 1, 512, 512, device="cuda", dtype=torch.bfloat16)
    mask[1, :, :, 400:] = torch.finfo(torch.bfloat16).min
    args = (x, wq, wk, wv, mask)
    with sdpa_kernel(SDPBackend.MATH):
        expected = _padded_attention(*args)  # eager: the f32 math path
        torch._dynamo.reset()
        tccd.reset_compile_stats()
        fn = torch.compile(_padded_attention, backend="tccd", dynamic=False)
        fn(*args)  # traced (and first run) under MATH
    got = fn(*args)  # the plan's attention call picks a fused kernel now
    targets = [s.extern_call.target for p in plans for s in p.steps if s.WhichOneof("kind") == "extern_call"]
    assert "aten::scaled_dot_product_attention.default" in targets and "aten::bmm.default" not in targets, targets
    stats = tccd.last_compile_stats()
    assert all(s["fallback"] is None for s in stats) and all(s["python_steps"] == 0 for s in stats), stats
    torch.testing.assert_close(got, expected, rtol=2e-2, atol=2e-2)
    assert (got.float() - expected.float()).abs().mean().item() < 2e-3
