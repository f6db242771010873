"""End to end against the real daemon: plans run by the native plan runtime (one ctypes call per
graph, native_plan.py) match eager and the Python interpreter; extern ops the stable ABI cannot
carry run through the Python callback; a failed ABI check falls back to the interpreter with one
logged line. The interpreter path stays covered: the parametrised tests run both ways."""

import logging

import pytest
import torch

import tccd
from tccd import native_plan
from tccd_testlib import run_training

MODES = {"native": "1", "interpreter": "0"}


@pytest.fixture(params=sorted(MODES))
def mode(request, daemon_env, monkeypatch):
    monkeypatch.setenv("TCCD_NATIVE_RUNTIME", MODES[request.param])
    from tccd import config

    config.reload()
    return request.param


def _pointwise_and_views(x, y):
    a = torch.relu(x * y + 1.0)
    return a.sum(dim=1), a.t(), (a * 2)[1:3], a


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_training_matches_eager_both_ways(mode, model):
    eager_losses, eager_state = run_training(model, steps=3)
    losses, state = run_training(model, steps=3, backend="tccd")
    torch.testing.assert_close(losses, eager_losses, rtol=1e-4, atol=1e-5)
    for k in eager_state:
        torch.testing.assert_close(state[k], eager_state[k], rtol=1e-4, atol=1e-5)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    for s in stats:
        if mode == "interpreter":
            # Every plan step is a Python call.
            assert s["python_steps"] >= s["native_kernels"] + s["extern_steps"], s
        else:
            # Only extern steps the stable ABI cannot carry are Python callbacks.
            assert s["python_steps"] <= s["extern_steps"], s
    if mode == "native":
        assert any(s["python_steps"] < s["extern_steps"] for s in stats), stats


def test_views_and_output_strides_as_eager(mode):
    x, y = torch.randn(6, 5), torch.randn(6, 5)
    out = torch.compile(_pointwise_and_views, backend="tccd")(x, y)
    ref = _pointwise_and_views(x, y)
    for o, r in zip(out, ref):
        torch.testing.assert_close(o, r)
        assert o.stride() == r.stride() and o.storage_offset() == r.storage_offset()
    # Outputs that alias each other in eager share storage natively as well.
    assert out[1].data_ptr() == out[3].data_ptr()
    (stat,) = tccd.last_compile_stats()
    assert stat["native_kernels"] >= 1
    if mode == "native":
        assert stat["python_steps"] == 0, stat


def test_extern_the_stable_abi_cannot_carry_runs_through_python(daemon_env):
    def f(b, x, w):
        # addmm's beta and alpha are Scalars, which the stable dispatcher call does not carry:
        # it runs through the Python callback inside the one native call.
        return torch.relu(torch.addmm(b, x, w, beta=0.5, alpha=2.0)) * 3

    b, x, w = torch.randn(4), torch.randn(3, 5), torch.randn(5, 4)
    out = torch.compile(f, backend="tccd")(b, x, w)
    torch.testing.assert_close(out, f(b, x, w))
    (stat,) = tccd.last_compile_stats()
    assert stat["fallback"] is None
    assert 1 <= stat["python_steps"] <= stat["extern_steps"], stat


def test_list_arguments_run_natively(daemon_env):
    def f(x, y):
        # cat (Tensor[]) and sum over dims (int[]?) go through the stable dispatcher.
        z = torch.cat([torch.relu(x), y * 2], dim=0) + 1
        return z.sum(dim=[0]), z

    x, y = torch.randn(3, 4), torch.randn(2, 4)
    out = torch.compile(f, backend="tccd")(x, y)
    for o, r in zip(out, f(x, y)):
        torch.testing.assert_close(o, r)
    (stat,) = tccd.last_compile_stats()
    assert stat["fallback"] is None and stat["extern_steps"] >= 1
    assert stat["python_steps"] == 0, stat


def test_a_failing_extern_op_raises_and_the_plan_still_runs(mode):
    def h(x, n):
        return torch.mm(torch.relu(x), n)

    g = torch.compile(h, backend="tccd")
    x, n = torch.randn(2, 3), torch.randn(3, 2)
    torch.testing.assert_close(g(x, n), h(x, n))
    with pytest.raises(RuntimeError, match="same dtype"):
        g(x, n.double())  # mm fails at run time: an exception, never a crash
    torch.testing.assert_close(g(x, n), h(x, n))


@pytest.mark.parametrize("breakage", ["torch_version", "missing_symbol"])
def test_failed_abi_check_falls_back_to_the_interpreter(daemon_env, monkeypatch, caplog, breakage):
    if breakage == "torch_version":
        # The running torch is outside the declared ABI range.
        monkeypatch.setattr(native_plan, "TORCH_MAX", (2, 10))
        monkeypatch.setattr(native_plan, "TORCH_MIN", (2, 0))
    else:
        # The runtime resolves its ABI from a library without the aoti_torch_* symbols.
        monkeypatch.setattr(native_plan, "_loaded_library", lambda name: "/lib/x86_64-linux-gnu/libc.so.6")
    monkeypatch.setattr(native_plan, "_runtimes", {})
    monkeypatch.setattr(native_plan, "_logged", set())
    x, y = torch.randn(6, 5), torch.randn(6, 5)
    with caplog.at_level(logging.WARNING, logger="tccd.native_plan"):
        g = torch.compile(_pointwise_and_views, backend="tccd")
        out = g(x, y)
        g(x, y)
    for o, r in zip(out, _pointwise_and_views(x, y)):
        torch.testing.assert_close(o, r)
    lines = [r for r in caplog.records if r.name == "tccd.native_plan"]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert "Python interpreter" in lines[0].getMessage()
    (stat,) = tccd.last_compile_stats()
    assert stat["fallback"] is None
    assert stat["python_steps"] >= stat["native_kernels"] > 0, stat
