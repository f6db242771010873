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
