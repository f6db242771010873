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
    def f(b, m, v):
        # addmv's beta and alpha are Scalars, which no torch's stable dispatcher call carries
        # (and no C shim of the runtime takes): it runs through the Python callback inside the
        # one native call.
        return torch.relu(torch.addmv(b, m, v, beta=0.5, alpha=2.0)) * 3

    b, m, v = torch.randn(4), torch.randn(4, 5), torch.randn(5)
    out = torch.compile(f, backend="tccd")(b, m, v)
    torch.testing.assert_close(out, f(b, m, v))
    (stat,) = tccd.last_compile_stats()
    assert stat["fallback"] is None
    assert 1 <= stat["python_steps"] <= stat["extern_steps"], stat
    # The stats say which op and why (here: addmv's Scalar beta).
    assert stat["python_step_reasons"] == {
        "aten::addmv.default: argument beta: Scalar given float 0.5, which the stable ABI cannot carry": 1
    }, stat["python_step_reasons"]


def _runs_natively_as_eager(f, *args, backward=False, undefined_returns=False):
    """f compiled by tccd gives eager's results bit for bit (gradients too with `backward`),
    with every extern step run natively: python_steps == 0 in every graph. With
    `undefined_returns` (ops with masked-off Tensor returns) that holds from torch 2.15 on; before
    it those ops run through Python by design (native_plan._UNDEFINED_TENSOR_RETURNS_CONVERT)."""
    def grads(fn):
        inputs = [a.detach().clone().requires_grad_(a.is_floating_point()) if backward else a for a in args]
        out = fn(*inputs)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        if backward:
            sum(o.float().sum() for o in outs if o.requires_grad).backward()
        return outs + [a.grad for a in inputs if backward and a.grad is not None]

    ref = grads(f)
    got = grads(torch.compile(f, backend="tccd"))
    assert len(got) == len(ref)
    for o, r in zip(got, ref):
        torch.testing.assert_close(o, r, rtol=0, atol=0)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    assert sum(s["extern_steps"] for s in stats) >= 1, stats
    from tccd import native_plan

    if not undefined_returns or native_plan._UNDEFINED_TENSOR_RETURNS_CONVERT:
        assert all(s["python_steps"] == 0 for s in stats), stats


def test_scalar_beta_alpha_run_through_the_c_shims(daemon_env):
    def f(b, x, w, bb, b1, b2):
        # addmm (a linear layer's bias, and explicit beta/alpha) and baddbmm: Scalar arguments.
        return (torch.nn.functional.linear(x, w.t(), b), torch.addmm(b, x, w, beta=0.5, alpha=2.0),
                torch.baddbmm(bb, b1, b2, beta=0.25, alpha=3.0))

    _runs_natively_as_eager(f, torch.randn(4), torch.randn(3, 5), torch.randn(5, 4),
                            torch.randn(2, 3, 4), torch.randn(2, 3, 5), torch.randn(2, 5, 4))


def test_optional_tensor_lists_run_natively(daemon_env):
    def f(x, i, j, v):
        # index.Tensor and index_put take Tensor?[] (None where a dim is not indexed).
        return x[i], x[:, j], x.index_put((i,), v, accumulate=True)

    x = torch.randn(6, 5)
    _runs_natively_as_eager(f, x, torch.tensor([0, 2, 2, 5]), torch.tensor([4, 0]), torch.randn(4, 5))


def test_list_returns_run_natively(daemon_env):
    def f(x):
        a, b, c = torch.split(torch.relu(x), 2, dim=0)
        return a * 2, torch.unbind(b, dim=1)[3] + c.sum(1)

    _runs_natively_as_eager(f, torch.randn(6, 5))


def test_string_arguments_run_natively(daemon_env):
    def f(x, index, src):
        return torch.scatter_reduce(x, 0, index, src, reduce="amax", include_self=False)

    _runs_natively_as_eager(f, torch.randn(4, 3), torch.tensor([[0, 1, 0], [3, 3, 2]]), torch.randn(2, 3))


def test_bool_lists_and_optionals_of_backward_ops_run_natively(daemon_env):
    def f(x, w, b, cw):
        # native_layer_norm_backward, convolution_backward: bool[3] output masks, Tensor?
        # weights; the forward's convolution has a Tensor? bias.
        h = torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b)
        return torch.nn.functional.conv1d(h, cw, padding=1)

    _runs_natively_as_eager(f, torch.randn(2, 3, 8), torch.randn(8), torch.randn(8), torch.randn(4, 3, 3),
                            backward=True, undefined_returns=True)


def _conv_step(monkeypatch, conv_shims=None):
    """One training step of a bias-free conv (grad_bias masked off) compiled by tccd, with
    torch 2.11's dispatcher (an undefined Tensor return cannot come back through it: forced
    here on the installed torch); the gradients equal eager's. Returns the compile stats."""
    monkeypatch.setattr(native_plan, "_UNDEFINED_TENSOR_RETURNS_CONVERT", False)
    if conv_shims is not None:
        monkeypatch.setattr(native_plan, "_CONV_SHIMS", conv_shims)

    def f(x, cw):
        return torch.nn.functional.conv1d(x, cw, padding=1)  # no bias: grad_bias masked off

    x, cw = torch.randn(2, 3, 8, requires_grad=True), torch.randn(4, 3, 3, requires_grad=True)
    tccd.reset_compile_stats()
    torch.compile(f, backend="tccd")(x, cw).sum().backward()
    got = (x.grad.clone(), cw.grad.clone())
    x.grad = cw.grad = None
    f(x, cw).sum().backward()
    torch.testing.assert_close(got, (x.grad, cw.grad), rtol=0, atol=0)
    stats = tccd.last_compile_stats()
    assert all(s["fallback"] is None for s in stats), stats
    return stats


def test_convolution_backward_runs_natively_on_torch_2_11s_dispatcher_too(daemon_env, monkeypatch):
    # convolution(_backward) run through AOTInductor's typed C shims, which hand a masked-off
    # gradient back as a handle the runtime drops: no Python step on any torch of the range.
    stats = _conv_step(monkeypatch)
    assert all(s["python_steps"] == 0 for s in stats), stats


def test_unused_tensor_returns_go_through_python_before_torch_2_15(daemon_env, monkeypatch):
    # Without the shims (a torch without them), the boxed dispatcher's return conversion of an
    # undefined Tensor return fails before 2.15: such ops run through the Python callback
    # there, with the same results.
    stats = _conv_step(monkeypatch, conv_shims={})
    assert any(s["python_steps"] > 0 for s in stats if s["kind"] == "backward"), stats
    (backward,) = [s for s in stats if s["kind"] == "backward"]
    (reason,) = backward["python_step_reasons"]
    assert reason.startswith("aten::convolution_backward.default: return ") and "may be undefined" in reason, reason
    assert sum(backward["python_step_reasons"].values()) == backward["python_steps"]


def test_conv_net_training_has_no_python_steps(daemon_env, monkeypatch):
    # tccd_testlib's CNN (convs, batch norm, a linear head; the first conv's input gradient is
    # masked off) trained 3 steps on torch 2.11's dispatcher path: every extern step native,
    # losses and weights as eager's.
    monkeypatch.setattr(native_plan, "_UNDEFINED_TENSOR_RETURNS_CONVERT", False)
    tccd.reset_compile_stats()
    eager_losses, eager_state = run_training("cnn", steps=3)
    losses, state = run_training("cnn", steps=3, backend="tccd")
    torch.testing.assert_close(losses, eager_losses, rtol=1e-4, atol=1e-5)
    for k in eager_state:
        torch.testing.assert_close(state[k], eager_state[k], rtol=1e-4, atol=1e-5)
    stats = tccd.last_compile_stats()
    assert {s["kind"] for s in stats} >= {"forward", "backward"}, stats
    assert all(s["fallback"] is None and s["python_steps"] == 0 for s in stats), stats


def _loaded_plans(monkeypatch):
    """Every NativePlan loaded from now on (its _extern_ops says how each extern step runs)."""
    loaded = []
    original = native_plan.NativePlan.__init__

    def spy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        loaded.append(self)

    monkeypatch.setattr(native_plan.NativePlan, "__init__", spy)
    return loaded


def test_hot_ops_run_through_typed_c_shims(daemon_env, monkeypatch):
    # convolution, convolution_backward, copy_ (a buffer written back), mm and bmm skip the
    # boxed dispatcher: their typed C shims, with eager's results bit for bit.
    loaded = _loaded_plans(monkeypatch)
    buf = torch.zeros(4, 6, 6)

    def f(x, cw, a, b, p, q):
        y = torch.nn.functional.conv2d(x, cw, padding=1)
        new = y[0].detach() * 0.5
        # The old value is read after the new one is computed, so the kernel computing it cannot
        # write it into buf (mutations_into_producers.h): a copy_ step writes it back. (Times
        # zero: eager's run moves buf before the compiled one, the outputs must not see it.)
        old = buf * 0.0 + 1.0
        buf.copy_(new)
        return y.relu(), old, torch.mm(a, b), torch.bmm(p, q)

    args = (torch.randn(2, 3, 6, 6), torch.randn(4, 3, 3, 3), torch.randn(5, 7), torch.randn(7, 3),
            torch.randn(2, 4, 5), torch.randn(2, 5, 6))
    _runs_natively_as_eager(f, *args, backward=True)
    ops = [op for plan in loaded for op in plan._extern_ops.values()]
    for target in ("convolution.default", "convolution_backward.default", "copy_.default", "mm.default",
                   "bmm.default"):
        assert f"aten::{target} [C shim]" in ops, ops


def test_extern_views_are_made_from_the_plans_metadata(daemon_env, monkeypatch):
    # View ops left as extern steps (views of matmul outputs) skip the dispatcher where the base
    # is laid out as declared: outputs, strides and offsets as eager's, gradients too.
    loaded = _loaded_plans(monkeypatch)

    def f(a, b, c):
        m = torch.mm(a, b)
        return m.t(), m.view(2, 3, 4)[1], m.unsqueeze(0).expand(2, 6, 4), torch.bmm(c, c.transpose(1, 2)).permute(2, 0, 1)

    args = (torch.randn(6, 5), torch.randn(5, 4), torch.randn(2, 3, 4))
    out = torch.compile(f, backend="tccd")(*args)
    for o, r in zip(out, f(*args)):
        torch.testing.assert_close(o, r, rtol=0, atol=0)
        assert o.stride() == r.stride() and o.storage_offset() == r.storage_offset()
    _runs_natively_as_eager(f, *args, backward=True)
    ops = [op for plan in loaded for op in plan._extern_ops.values()]
    assert any(op.endswith(" [view]") for op in ops), ops


class _RunningMean(torch.nn.Module):
    """Buffers updated in place, as batch norm's running statistics are."""

    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.zeros(5))
        self.register_buffer("count", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        # The new mean is read beside the old one (x - old mean, computed after it): a copy_
        # step writes it back (mutations_into_producers.h). count + 1 is a kernel's, which
        # writes it into the buffer itself (no copy_).
        new = self.mean * 0.9 + x.mean(0) * 0.1
        out = x - self.mean
        self.mean.copy_(new)
        self.count.add_(1)
        return out


def test_input_mutations_run_natively_before_torch_2_15_too(daemon_env, monkeypatch):
    # In-graph input mutations are copy_ steps into the buffers. copy_'s unused return aliases
    # its argument, so it is never undefined: it stays native where other unused Tensor
    # returns go through Python (before 2.15; forced here).
    from tccd import native_plan

    monkeypatch.setattr(native_plan, "_UNDEFINED_TENSOR_RETURNS_CONVERT", False)
    eager, compiled = _RunningMean(), _RunningMean()
    step = torch.compile(compiled, backend="tccd")
    tccd.reset_compile_stats()
    for _ in range(3):
        x = torch.randn(8, 5)
        torch.testing.assert_close(step(x), eager(x), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(compiled.mean, eager.mean, rtol=1e-6, atol=1e-6)
    assert int(compiled.count) == 3
    (stats,) = tccd.last_compile_stats()
    assert stats["fallback"] is None and stats["python_steps"] == 0, stats
    assert stats["extern_steps"] >= 2, stats  # the batch mean and the copy into the buffer


def test_deterministic_factories_with_scalars_run_natively(daemon_env):
    def f(x):
        # arange(end) takes a Scalar: computed once at load by eager, cloned per call.
        pos = torch.arange(x.shape[0], dtype=torch.float32)
        out = x * pos[:, None]
        return out, torch.arange(0.5, 3.0, 0.25)

    g = torch.compile(f, backend="tccd")
    x = torch.randn(5, 3)
    first = g(x)
    first[1].add_(1)  # a returned constant is a fresh tensor each call
    for o, r in zip(g(x), f(x)):
        torch.testing.assert_close(o, r, rtol=0, atol=0)
    stats = tccd.last_compile_stats()
    assert all(s["python_steps"] == 0 for s in stats), stats


def test_factory_read_only_by_kernels_is_shared_not_cloned(daemon_env):
    # A factory only kernels read is the load-time tensor itself (no copy per call: transformers'
    # position and mask aranges were one device copy each per step); a returned one is a fresh
    # clone per call, which the caller may write.
    def f(x):
        return x * torch.arange(x.shape[1], dtype=torch.float32), torch.arange(0.5, 3.0, 0.25)

    g = torch.compile(f, backend="tccd")
    x = torch.randn(5, 3)
    g(x)[1].add_(1)
    with torch.profiler.profile() as prof:
        out = g(x)
    for o, r in zip(out, f(x)):
        torch.testing.assert_close(o, r, rtol=0, atol=0)
    names = [e.name for e in prof.events()]
    assert names.count("aten::clone") == 1 and names.count("aten::alias") == 1, sorted(set(names))
    (stats,) = tccd.last_compile_stats()
    assert stats["python_steps"] == 0, stats


def test_factory_read_through_views_by_kernels_is_shared(daemon_env):
    # transformers' position ids: unsqueeze(arange) read by kernels on both sides of an extern
    # step (Llama's cumsum), so the view is a plan step of its own; the arange behind it is still
    # read only by kernels: the load-time tensor itself, no clone per call.
    def f(x):
        pos = torch.arange(x.shape[1]).unsqueeze(0)
        a = torch.cumsum(x * pos, -1)
        return a + pos

    g = torch.compile(f, backend="tccd")
    x = torch.randint(0, 5, (4, 6))
    g(x)
    with torch.profiler.profile() as prof:
        out = g(x)
    torch.testing.assert_close(out, f(x), rtol=0, atol=0)
    names = [e.name for e in prof.events()]
    assert names.count("aten::clone") == 0 and names.count("aten::cumsum") == 1, sorted(set(names))
    (stats,) = tccd.last_compile_stats()
    assert stats["python_steps"] == 0 and stats["fallback"] is None, stats


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


_UNDEFINED_SEEN = []


def _maybe_add_op():
    """tccd_test::maybe_add(Tensor x, Tensor y): x * 2 where y is undefined (None), else x + y.
    A plain Tensor argument that takes None, as flash / cuDNN attention's backward takes its
    cum_seq_q/cum_seq_k on dense inputs (CUDA-only ops; this one runs on the CPU)."""
    if not hasattr(torch.ops.tccd_test, "maybe_add"):
        lib = torch.library.Library("tccd_test", "DEF")
        lib.define("maybe_add(Tensor x, Tensor y) -> Tensor")

        def cpu(x, y):
            _UNDEFINED_SEEN.append(y is None)
            return x * 2 if y is None else x + y

        lib.impl("maybe_add", cpu, "CPU")
        lib.impl("maybe_add", lambda x, y: torch.empty_like(x), "Meta")
        _maybe_add_op.lib = lib  # the registrations live as long as the library object
    return torch.ops.tccd_test.maybe_add.default


def test_none_for_a_plain_tensor_argument_runs_natively_as_an_undefined_tensor(daemon_env, monkeypatch):
    # The runtime passes the dispatcher an undefined tensor (TCCD_ARG_UNDEFINED_TENSOR) where
    # the step has None for a plain Tensor, as torch's Python binding does; on torch 2.11's
    # rules too (GPT-2's and Llama's attention backward on the H200 ran in Python before).
    monkeypatch.setattr(native_plan, "_UNDEFINED_TENSOR_RETURNS_CONVERT", False)
    op = _maybe_add_op()

    def f(x):
        return op(torch.relu(x), None) + 1

    _UNDEFINED_SEEN.clear()
    _runs_natively_as_eager(f, torch.randn(4, 3))
    assert _UNDEFINED_SEEN and all(_UNDEFINED_SEEN), _UNDEFINED_SEEN  # the kernel saw None


def test_plans_with_uint64_tensors_run_natively(daemon_env):
    # Flash attention's philox seed and offset are uint64 tensors: the daemon wrote no plan
    # descriptor for a plan holding one (no c10 code for the dtype), so the whole plan ran in
    # the Python interpreter (the H200, torch 2.11: every step of a flash attention graph).
    def f(x, seed):
        return torch.relu(x) + 1, seed.view(2, 1)

    x, seed = torch.randn(4, 3), torch.tensor([7, 2**63 + 5], dtype=torch.uint64)
    out = torch.compile(f, backend="tccd")(x, seed)
    ref = f(x, seed)
    torch.testing.assert_close(out[0], ref[0])
    assert out[1].dtype == torch.uint64 and torch.equal(out[1].view(torch.int64), ref[1].view(torch.int64))
    (stat,) = tccd.last_compile_stats()
    assert stat["fallback"] is None and stat["python_steps"] == 0, stat
    assert stat["python_step_reasons"] == {}, stat["python_step_reasons"]


def test_a_failing_extern_op_raises_and_the_plan_still_runs(mode):
    def h(x, n):
        return torch.mm(torch.relu(x), n)

    g = torch.compile(h, backend="tccd")
    x, n = torch.randn(2, 3), torch.randn(3, 2)
    torch.testing.assert_close(g(x, n), h(x, n))
    # Before torch 2.13 the runtime cannot read the op's own message (no
    # torch_exception_get_what_without_backtrace): it names the failed step.
    old_torch = tuple(int(p) for p in torch.__version__.split(".")[:2]) < (2, 13)
    with pytest.raises(RuntimeError, match="aten::mm" if mode == "native" and old_torch else "same dtype"):
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
    (reason,) = stat["python_step_reasons"]  # every step, and why the plan is interpreted
    assert reason.startswith("every step (the plan runs in the Python interpreter): "), reason
    assert stat["python_step_reasons"][reason] == stat["python_steps"]


def test_optionals_boxed_with_operator_new_as_on_torch_before_2_13(daemon_env, monkeypatch):
    """torch 2.11/2.12 have no torch_new_stable_ivalue: the runtime boxes optional arguments with
    C++ operator new, which libtorch frees with delete. A fresh process forces that path here."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import torch, tccd
        def f(x, i, w, b):
            # cumsum's ScalarType? holding a value and clamp's Tensor? bounds: optional boxes
            # (ops whose every return is used, so this holds on every torch).
            return torch.cumsum(x[i], 0, dtype=torch.float64), torch.ops.aten.clamp.Tensor(x, w, b).cumsum(1)
        x, i, w, b = torch.randn(6, 5), torch.tensor([0, 3, 3]), -torch.rand(5), torch.rand(5)
        torch.testing.assert_close(torch.compile(f, backend="tccd")(x, i, w, b), f(x, i, w, b), rtol=0, atol=0)
        stats = tccd.last_compile_stats()
        assert all(s["python_steps"] == 0 and s["fallback"] is None for s in stats), stats
        assert sum(s["extern_steps"] for s in stats) >= 1, stats
        print("OK")
    """)
    env = dict(__import__("os").environ, TCCD_PLAN_RUNTIME_BOX_WITH_OPERATOR_NEW="1")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stderr[-3000:]


def test_plan_profile_reports_where_host_time_goes(daemon_env):
    """TCCD_PLAN_PROFILE=1: the runtime times every class of step, and a report per plan is
    printed at exit (steps per call as the plan has them, time only where there are steps)."""
    import re
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import torch, tccd
        m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
        c = torch.compile(m, backend="tccd")
        for _ in range(3):
            c(torch.randn(4, 8)).sum().backward()
        stats = tccd.last_compile_stats()
        assert [s["python_steps"] for s in stats] == [0, 0], stats
        print("OK")
    """)
    env = dict(__import__("os").environ, TCCD_PLAN_PROFILE="1")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stderr[-3000:]
    lines = [l for l in proc.stderr.splitlines() if l.startswith("tccd plan profile")]
    assert len(lines) == 2, proc.stderr[-3000:]
    for line in lines:
        # "... 0/0 forward: 2 calls, us per call: native 85.5 = kernels 2.0 (1), ...; Python wrapper 47.5"
        # (three runs, the first left out: it pays one-time set-up)
        m = re.search(r": 2 calls, us per call: native ([\d.]+) = (.*); Python wrapper ([\d.]+)$", line)
        assert m and float(m.group(1)) > 0 and float(m.group(3)) > 0, line
        classes = dict(re.findall(r"([a-z/ ()]+?) [\d.]+ \((\d+)\)", m.group(2)))
        assert int(classes.get("kernels", 0)) + int(classes.get("extern (dispatcher)", 0)) >= 1, line
    # The first call apart, per plan: native steps and extern steps by op, in ms, the slowest named.
    firsts = [l for l in proc.stderr.splitlines() if l.startswith("tccd plan first call")]
    assert len(firsts) == 2, proc.stderr[-3000:]
    for line in firsts:
        # "tccd plan first call 0/0 forward: 0.3 ms: native steps 0.1 (2), extern 0.2: aten::mm.default
        # [C shim] 0.2 (1); slowest steps 1 aten::mm.default [C shim] 0.2, 0 native 0.1, ..."
        m = re.search(r": ([\d.]+) ms: native steps ([\d.]+) \((\d+)\), extern ([\d.]+): .*; slowest steps \d+ ", line)
        assert m, line
        assert float(m.group(1)) == pytest.approx(float(m.group(2)) + float(m.group(4)), abs=0.16), line
        assert int(m.group(3)) >= 1, line


    # Each report's second line: the runtime's counts per call. Every plan here allocates (the
    # GELU kernel's output, the backward's gradients); these contiguous float inputs need no
    # copy into a declared layout, and CPU plans look up no CUDA stream.
    counts = [dict((k.strip(), float(v)) for k, v in re.findall(r"([a-z ]+) ([\d.]+)", l.split("per call:")[1]))
              for l in proc.stderr.splitlines() if l.startswith("  per call: allocations")]
    assert len(counts) == 2, proc.stderr[-3000:]
    for c in counts:
        assert c["allocations"] >= 1 and c["layout copies"] == 0 and c["stream lookups"] == 0, c
    # Each report's native steps by kind: here CPU kernels only (one per call in each plan: the
    # GELU and its gradient), each as wall time = launch + allocations + rest, the parts >= 0.
    natives = [l for l in proc.stderr.splitlines() if l.startswith("  native steps by kind")]
    assert len(natives) == 2, proc.stderr[-3000:]
    for line in natives:
        m = re.search(r": CPU kernels ([\d.]+) \((\d+)\) = launch ([\d.]+) \+ allocations ([\d.]+) \+ rest "
                      r"(-?[\d.]+)$", line)
        assert m and int(m.group(2)) >= 1, line
        total, launch, alloc, rest = (float(m.group(i)) for i in (1, 3, 4, 5))
        assert launch > 0 and alloc > 0 and rest >= -0.1 and total >= launch + alloc - 0.1, line
    # Off by default: no clock is read and nothing printed.
    env.pop("TCCD_PLAN_PROFILE")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "tccd plan profile" not in proc.stderr



@pytest.mark.parametrize("profile", ["", "0", "1"])
def test_plan_call_is_the_untimed_call_unless_profiling(profile):
    """Without TCCD_PLAN_PROFILE a plan call is NativePlan._call itself: the timing wrapper (a
    Python frame and clock reads per call, paid twice per training step) exists only for the
    profile's "Python wrapper" figure."""
    import subprocess
    import sys

    code = "from tccd.native_plan import NativePlan as P; print(P.__call__ is P._call)"
    env = dict(__import__("os").environ, TCCD_PLAN_PROFILE=profile)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == ("False" if profile == "1" else "True")

def test_plan_profile_reports_the_sized_gemm_cache(monkeypatch):
    """TCCD_PLAN_PROFILE=1 ends with one line per kernel library with gemms of run-time sizes:
    its cache's counters (tccd_cuda_gemm_stats) and where a call's host time goes, hits apart
    from misses. A stand-in for the library's entry point (a CUDA library needs a GPU)."""
    import ctypes

    from tccd import runtime

    words = [10, 7, 3, 1, 0, 3, 3_000_000, 400_000, 100_000]  # TCCD_RT_GEMM_STAT_* order

    @ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_uint64), ctypes.c_int)
    def stats(out, n):
        for i in range(min(n, len(words))):
            out[i] = words[i]
        return len(words)

    class Library:
        tccd_cuda_gemm_stats = stats

    monkeypatch.setattr(runtime, "sized_gemm_libraries", {"0/0 forward: kernels_cuda.so": Library()})
    assert runtime.sized_gemm_stats(Library()) == dict(zip(runtime.SIZED_GEMM_STATS, words))
    (line,) = native_plan.sized_gemm_report()
    assert line == ("tccd sized gemm cache 0/0 forward: kernels_cuda.so: 10 calls, 7 hits, 3 misses (1 with the same sizes "
                    "under another alignment or workspace), 0 evictions, 3 heuristic queries; cublasLtMatmul "
                    "42.9 us per hit; per miss: set-up 1000.0 us, cublasLtMatmul 33.3 us; all calls 10: "
                    "340.0 us per call"), line
    # Every plan's library has a line of its own, though all are named kernels_cuda.so.
    libraries = {"0/0 forward: kernels_cuda.so": Library(), "0/0 backward: kernels_cuda.so": Library()}
    monkeypatch.setattr(runtime, "sized_gemm_libraries", libraries)
    assert [l.split(": 10 calls")[0] for l in native_plan.sized_gemm_report()] == [
        "tccd sized gemm cache 0/0 backward: kernels_cuda.so", "tccd sized gemm cache 0/0 forward: kernels_cuda.so"]
    # A library with no sized call yet prints nothing.
    words[0] = 0
    assert native_plan.sized_gemm_report() == []
