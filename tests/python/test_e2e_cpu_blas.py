"""End to end against the real daemon: CPU plans' float32/float64 mm and addmm steps call the BLAS
gemm libtorch_cpu exports (sgemm_, dgemm_) directly (TCCD_CPU_BLAS, native_plan._enable_cpu_blas,
codegen/plan_runtime/runtime/tccd_plan_blas.h), with eager's results; transposed and strided
operands become the call's flags and leading dimensions; layouts BLAS cannot take, the knob off
and a missing symbol (one logged line) run the steps through ATen's C shims as before. Bias
gradients (sums over dim 0) are summed by the runtime (TCCD_CPU_COLUMN_SUMS,
tccd_plan_column_sum.h), or by ATen with the knob off."""

import logging

import pytest
import torch
from torch import nn

import tccd
from tccd import native_plan


@pytest.fixture
def blas(daemon_env, monkeypatch):
    """Sets TCCD_CPU_BLAS* and reloads the runtime so the setting applies; returns a function
    that gives the direct calls made since."""

    def configure(on="1", symbols=None, column_sums="1"):
        monkeypatch.setenv("TCCD_CPU_BLAS", on)
        monkeypatch.setenv("TCCD_CPU_COLUMN_SUMS", column_sums)
        if symbols is None:
            monkeypatch.delenv("TCCD_CPU_BLAS_SYMBOLS", raising=False)
        else:
            monkeypatch.setenv("TCCD_CPU_BLAS_SYMBOLS", symbols)
        monkeypatch.setattr(native_plan, "_runtimes", {})
        start = native_plan.cpu_blas_calls()
        sums = native_plan.cpu_column_sum_calls()
        calls = lambda: native_plan.cpu_blas_calls() - start  # noqa: E731
        calls.sums = lambda: native_plan.cpu_column_sum_calls() - sums
        return calls

    yield configure
    # Later tests get the default again (the runtime's state is process-wide).
    monkeypatch.undo()
    native_plan._runtimes.clear()


def _mlp(dtype):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 24), nn.ReLU(), nn.Linear(24, 5)).to(dtype)


def _train(model, compiled, steps, dtype, batch=8, features=16, classes=5):
    """SGD on random batches (the same ones for eager and tccd: a seeded generator); the losses
    and the parameters after. Also test_e2e_cpu_dying_inputs.py's loop."""
    gen = torch.Generator().manual_seed(1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(steps):
        x = torch.randn(batch, features, generator=gen, dtype=dtype)
        y = torch.randint(0, classes, (batch,), generator=gen)
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(compiled(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return torch.stack(losses), [p.detach().clone() for p in model.parameters()]


def _train_both(dtype, steps=3):
    eager = _mlp(dtype)
    eager_losses, eager_params = _train(eager, eager, steps, dtype)
    model = _mlp(dtype)
    losses, params = _train(model, torch.compile(model, backend="tccd", dynamic=False), steps, dtype)
    torch.testing.assert_close(losses, eager_losses)
    for p, q in zip(params, eager_params):
        torch.testing.assert_close(p, q)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None and s["python_steps"] == 0 for s in stats), stats


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_mlp_training_calls_blas_directly_with_eagers_results(blas, dtype):
    calls = blas()
    _train_both(dtype, steps=3)
    # Per step: the forward's 3 addmm, the backward's 5 mm (no input gradient for x) and 3
    # bias gradients.
    assert calls() == 8 * 3
    assert calls.sums() == 3 * 3


def test_bias_gradients_summed_by_aten_with_the_knob_off(blas):
    calls = blas(column_sums="0")
    _train_both(torch.float32, steps=2)
    assert calls.sums() == 0 and calls() == 8 * 2


def test_column_sums_of_strided_and_keepdim_gradients(blas):
    calls = blas()

    def f(x, w):
        h = torch.mm(x, w)
        return h.sum(0), h.sum(0, keepdim=True) * 2, (h * 3).sum(-2)

    x, w = torch.randn(70, 9), torch.randn(9, 37)
    out = torch.compile(f, backend="tccd", dynamic=False)(x, w)
    for o, r in zip(out, f(x, w)):
        torch.testing.assert_close(o, r)
        assert o.shape == r.shape and o.stride() == r.stride()
    (stat,) = tccd.last_compile_stats()
    assert stat["python_steps"] == 0
    assert calls.sums() >= 1


def test_transposed_and_strided_operands(blas):
    calls = blas()

    def f(a, b, w, bias):
        h = torch.addmm(bias, a.t(), b)  # a transposed: the call's trans flag
        return torch.mm(h, w).relu()

    wide = torch.randn(6, 9, requires_grad=True)
    a = torch.randn(6, 4, requires_grad=True)
    w_t = torch.randn(3, 7, requires_grad=True)
    bias = torch.randn(7, requires_grad=True)

    def inputs():
        # b: columns 1..7 of a wider matrix (leading dimension 9); w: column-major.
        return a, wide[:, 1:8], w_t.t(), bias

    out = torch.compile(f, backend="tccd", dynamic=False)(*inputs())
    out.sum().backward()
    got = [out.detach()] + [t.grad.clone() for t in (wide, a, w_t, bias)]
    for t in (wide, a, w_t, bias):
        t.grad = None
    ref = f(*inputs())
    ref.sum().backward()
    want = [ref.detach()] + [t.grad for t in (wide, a, w_t, bias)]
    for g, r in zip(got, want):
        torch.testing.assert_close(g, r)
    assert calls() >= 2, calls()
    (fw, bw) = tccd.last_compile_stats()[-2:]
    assert fw["python_steps"] == 0 and bw["python_steps"] == 0


def test_layouts_blas_cannot_take_run_through_aten(blas):
    calls = blas()

    def f(a, b):
        return torch.mm(a, b) * 2

    # Every other column: no unit stride, the plan's step keeps ATen's C shim.
    a = torch.randn(5, 12)[:, ::2]
    b = torch.randn(6, 3)
    out = torch.compile(f, backend="tccd", dynamic=False)(a, b)
    torch.testing.assert_close(out, f(a, b))
    (stat,) = tccd.last_compile_stats()
    assert stat["fallback"] is None and stat["python_steps"] == 0
    # a reaches the plan as the strided input or as a contiguous copy, depending on how the
    # plan declares it; either way the results are eager's. When the plan keeps the stride,
    # the mm is not a direct call.
    assert calls() <= 1


def test_knob_off_runs_matmuls_through_aten(blas):
    calls = blas(on="0")
    _train_both(torch.float32, steps=2)
    assert calls() == 0 and calls.sums() == 3 * 2


def test_missing_symbol_falls_back_to_aten_with_one_log_line(blas, caplog):
    with caplog.at_level(logging.WARNING, logger="tccd.native_plan"):
        calls = blas(symbols="tccd_no_such_sgemm_,tccd_no_such_dgemm_")
        _train_both(torch.float32, steps=2)
        _train_both(torch.float64, steps=1)
    assert calls() == 0
    lines = [r.getMessage() for r in caplog.records if r.name == "tccd.native_plan"]
    assert len(lines) == 1, lines
    assert "run through ATen" in lines[0] and "tccd_no_such_" in lines[0], lines[0]
