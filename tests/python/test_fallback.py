"""The backend without a daemon: eager fallback with one warning per graph, or TccdError."""

import warnings

import pytest
import torch

import tccd
from tccd_testlib import run_training


def _fallback_warnings(record):
    return [w for w in record if issubclass(w.category, tccd.TccdFallbackWarning)]


def test_no_daemon_no_binary_runs_eagerly_with_one_warning_per_graph(client_env):
    expected_losses, expected_state = run_training("mlp", steps=3)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        losses, state = run_training("mlp", steps=3, backend="tccd")
    fallbacks = _fallback_warnings(record)
    stats = tccd.last_compile_stats()
    assert [s["kind"] for s in stats] == ["forward", "backward"]
    assert len(fallbacks) == len(stats) == 2, [str(w.message) for w in fallbacks]
    for s, w in zip(stats, fallbacks):
        msg = str(w.message)
        assert s["name"] in msg, "the warning names the graph"
        assert "no tccd daemon answers" in msg and "TCCD_BINARY" in msg, msg
        assert s["fallback"] and s["native_kernels"] == 0
    # Eager fallback runs the very same ATen graphs: results are bitwise those of eager.
    assert torch.equal(losses, expected_losses)
    for k in expected_state:
        assert torch.equal(state[k], expected_state[k]), k


def test_strict_mode_raises_tccd_error(client_env, monkeypatch):
    monkeypatch.setenv("TCCD_STRICT", "1")
    tccd.config.reload()
    model = torch.nn.Linear(4, 4)
    compiled = torch.compile(model, backend="tccd")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with pytest.raises(Exception) as info:
            compiled(torch.randn(2, 4))
    chain, e = [], info.value
    while e is not None and len(chain) < 10:
        chain.append(e)
        e = getattr(e, "inner_exception", None) or e.__cause__ or e.__context__
    assert any(isinstance(x, tccd.TccdError) for x in chain), [type(x) for x in chain]
    assert "no tccd daemon answers" in str(info.value)
    assert _fallback_warnings(record) == []


def test_strict_mode_raises_for_lazily_compiled_backward(client_env, monkeypatch):
    # The backward graph compiles at the first .backward(), outside Dynamo: TccdError itself.
    model = torch.nn.Linear(4, 4)
    compiled = torch.compile(model, backend="tccd")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tccd.TccdFallbackWarning)
        out = compiled(torch.randn(2, 4))
    monkeypatch.setenv("TCCD_STRICT", "1")
    tccd.config.reload()
    with pytest.raises(tccd.TccdError, match="backward"):
        out.sum().backward()


def test_unsupported_graph_falls_back_with_reason(client_env):
    # A float8 input: tccd.v1 has no such dtype (symbolic shapes, the old example, compile now).
    def f(x):
        return torch.relu(x.float()) * 2

    compiled = torch.compile(f, backend="tccd")
    x = torch.randn(5).to(torch.float8_e4m3fn)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = compiled(x)
    assert torch.equal(out, f(x))
    fallbacks = _fallback_warnings(record)
    assert len(fallbacks) == 1
    assert "float8_e4m3fn is not supported" in str(fallbacks[0].message)
