"""End to end against the real daemon (CPU): scaled_dot_product_attention traced as its math
path over bf16 q, k, v (upcast to f32: two f32 bmms and a softmax, what BERT's and T5's attention
become on the GPU) runs as one scaled_dot_product_attention call in bf16
(codegen/passes/math_attention_to_fused.h), close to eager; with
TCCD_DISABLE_PASSES=math-attention-to-fused the plan keeps the bmms.

The graphs are traced under sdpa_kernel(MATH) (the CPU would otherwise trace its flash kernel);
called under it too, the plan's attention call takes the math path again (the same upcast: eager's
values up to the mask's bf16 rounding), and called outside it, the CPU's fused kernel."""

import os
import shutil

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import tccd
from conftest import TCCD_BINARY, Daemon, short_tempdir

MODES = {"native": "1", "interpreter": "0"}


@pytest.fixture(params=sorted(MODES))
def mode(request, fused_env, monkeypatch):
    monkeypatch.setenv("TCCD_NATIVE_RUNTIME", MODES[request.param])
    from tccd import config

    config.reload()
    return request.param


def _extern_targets(plans):
    return [s.extern_call.target for p in plans for s in p.steps if s.WhichOneof("kind") == "extern_call"]


def _attention(x, wq, wk, wv, mask):
    # As transformers lays q, k, v out: [B, S, H*D] projections viewed as [B, H, S, D].
    b, s, _ = x.shape
    q, k, v = ((x @ w).view(b, s, 4, 16).transpose(1, 2) for w in (wq, wk, wv))
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    return o.transpose(1, 2).reshape(b, s, 64)


def _inputs():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 24, 64, generator=g).bfloat16()
    wq, wk, wv = (torch.randn(64, 64, generator=g).bfloat16() / 8 for _ in range(3))
    # BERT's padding mask: 0 where kept, the dtype's minimum where masked, in bf16 as autocast
    # hands it to SDPA with q, k, v.
    mask = torch.zeros(2, 1, 24, 24, dtype=torch.bfloat16)
    mask[1, :, :, 20:] = torch.finfo(torch.bfloat16).min
    return x, wq, wk, wv, mask


def test_math_attention_becomes_one_attention_call(mode, plans):
    args = _inputs()
    with sdpa_kernel(SDPBackend.MATH):
        expected = _attention(*args)
        compiled = torch.compile(_attention, backend="tccd", dynamic=False)
        got = compiled(*args)
    targets = _extern_targets(plans)
    assert "aten::scaled_dot_product_attention.default" in targets, targets
    assert "aten::bmm.default" not in targets and "aten::_safe_softmax.default" not in targets, targets
    assert got.dtype == expected.dtype == torch.bfloat16 and got.shape == expected.shape
    # The math path again: eager's values but for the mask's rounding and summation order.
    torch.testing.assert_close(got, expected, rtol=1e-2, atol=1e-2)
    # Outside the MATH context: the CPU's flash kernel in bf16.
    torch.testing.assert_close(compiled(*args), expected, rtol=2e-2, atol=2e-2)


def _daemon_with(name, **env):
    """A module-scoped daemon started with `env` in its environment."""

    @pytest.fixture(scope="module")
    def fixture():
        if not TCCD_BINARY.exists():
            pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
        root = short_tempdir(f"tccd-{name}-")
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        d = Daemon(TCCD_BINARY, root)
        try:
            d.start()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k)
                else:
                    os.environ[k] = v
        yield d
        d.stop()
        shutil.rmtree(root, ignore_errors=True)

    return fixture


# Every attention rewritten, whatever its size (the default leaves these small ones alone).
fused_daemon = _daemon_with("fused", TCCD_MATH_ATTENTION_MIN_SCORES="0")
math_daemon = _daemon_with("math", TCCD_DISABLE_PASSES="math-attention-to-fused")


@pytest.fixture
def fused_env(daemon_env, fused_daemon, monkeypatch):
    monkeypatch.setenv("TCCD_ADDRESS", fused_daemon.address)
    tccd.config.reload()
    return dict(daemon_env, TCCD_ADDRESS=fused_daemon.address)


@pytest.mark.parametrize("daemon_kind", ["disabled", "default-size-limit"])
def test_disabled_or_small_keeps_the_math_path(daemon_kind, daemon_env, math_daemon, monkeypatch, plans):
    # The knob, and the default TCCD_MATH_ATTENTION_MIN_SCORES (these 4608 scores are below it).
    if daemon_kind == "disabled":
        monkeypatch.setenv("TCCD_ADDRESS", math_daemon.address)
        tccd.config.reload()
    args = _inputs()
    with sdpa_kernel(SDPBackend.MATH):
        expected = _attention(*args)
        got = torch.compile(_attention, backend="tccd", dynamic=False)(*args)
    targets = _extern_targets(plans)
    assert "aten::scaled_dot_product_attention.default" not in targets, targets
    torch.testing.assert_close(got, expected, rtol=1e-2, atol=1e-2)
    tccd.config.reload()


def _biased_attention(x, wq, wk, wv, table):
    # As T5 calls SDPA: a position bias gathered as [Q, K, H] and permuted to [1, H, Q, K] (last
    # dim not unit-stride), added in the input's dtype, scale 1.0.
    b, s, _ = x.shape
    q, k, v = ((x @ w).view(b, s, 4, 16).transpose(1, 2) for w in (wq, wk, wv))
    bias = table.permute(2, 0, 1).unsqueeze(0).to(x.dtype)
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=1.0)
    return o.transpose(1, 2).contiguous().view(b, s, 64)


def test_permuted_bias_is_copied_contiguous_in_a_kernel(fused_env, plans):
    x, wq, wk, wv, _ = _inputs()
    table = torch.randn(24, 24, 4, generator=torch.Generator().manual_seed(1))
    with torch.no_grad(), sdpa_kernel(SDPBackend.MATH):
        expected = _biased_attention(x, wq, wk, wv, table)
        got = torch.compile(_biased_attention, backend="tccd", dynamic=False)(x, wq, wk, wv, table)
    targets = _extern_targets(plans)
    assert targets.count("aten::scaled_dot_product_attention.default") == 1, targets
    assert "aten::bmm.default" not in targets and "aten::clone.default" not in targets, targets
    torch.testing.assert_close(got, expected, rtol=1e-2, atol=1e-2)
