"""GPU tests of row gathers (codegen/passes/reduction_fusion.h): an LM's token embedding (and
GPT-2's position embedding) gathered inside the first norm's row kernel. Skipped without CUDA;
run with tests/run_gpu.sh BUNDLE -k row_gathers.

- Inference of an RMSNorm (Llama-like) and a LayerNorm (GPT-2-like) model start, f32 and under
  bf16 autocast, at a row width the vectors divide (256) and one with a tail (1000): the same
  results as eager, with one kernel holding the embedding and the norm.
- A training step of the same models (the training forward gathers in the norm too; the backward
  keeps its scatter kernels): losses and gradients as eager's.
tests/python/test_e2e_row_gathers.py checks the plans without a GPU.
"""

import pytest
import torch
import torch.nn as nn

import tccd
from test_e2e_row_gathers import EMBEDDING, NORMS, LayerNormLM, RmsNormLM

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _gathering_norms():
    return sum(
        1
        for s in tccd.last_compile_stats()
        for k in s["kernels"]
        if EMBEDDING in k["ops"] and any(op in NORMS for op in k["ops"])
    )


def _model(model_cls, hidden):
    torch.manual_seed(0)
    return model_cls(hidden=hidden).cuda()


@pytest.mark.parametrize("hidden", [256, 1000])
@pytest.mark.parametrize("autocast", [False, True], ids=["f32", "bf16_autocast"])
@pytest.mark.parametrize("model_cls", [RmsNormLM, LayerNormLM], ids=["rms_norm", "layer_norm"])
def test_inference_matches_eager_with_the_embedding_in_the_norm(daemon_env, model_cls, autocast, hidden):
    m = _model(model_cls, hidden).eval()
    ids = torch.randint(0, 500, (4, 64), device="cuda")
    ids[0, :8] = 499  # the last row of the table
    tccd.reset_compile_stats()
    compiled = torch.compile(m, backend="tccd")
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
        out = compiled(ids)
        eager = m(ids)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), [s["fallback"] for s in stats]
    assert _gathering_norms() == 1, [k["ops"] for s in stats for k in s["kernels"]]
    tol = dict(rtol=1e-4, atol=1e-5) if not autocast else dict(rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(out, eager, **tol)


@pytest.mark.parametrize("model_cls", [RmsNormLM, LayerNormLM], ids=["rms_norm", "layer_norm"])
def test_a_training_step_matches_eager(daemon_env, model_cls):
    ids = torch.randint(0, 500, (4, 64), device="cuda")

    def step(backend):
        m = _model(model_cls, 256)
        f = torch.compile(m, backend=backend) if backend else m
        loss = f(ids).square().mean()
        loss.backward()
        return loss.detach(), [p.grad.detach().clone() for p in m.parameters()]

    tccd.reset_compile_stats()
    loss, grads = step("tccd")
    assert _gathering_norms() == 1
    eager_loss, eager_grads = step(None)
    torch.testing.assert_close(loss, eager_loss, rtol=1e-4, atol=1e-5)
    for g, e in zip(grads, eager_grads):
        torch.testing.assert_close(g, e, rtol=1e-3, atol=1e-4)
