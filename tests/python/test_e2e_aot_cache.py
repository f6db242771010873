"""End to end against the real daemon: the AOT recipe cache (client/tccd/aot_cache.py).

A second process with a populated local cache runs every graph without AOTAutograd (no trace,
no compile, no daemon call) and trains exactly as the first one did; graphs outside the
recipe's class, corrupt recipes, recipes naming missing plans and TCCD_AOT_CACHE=0 all take the
normal path and stay correct. Tolerances against eager: as in test_e2e_training.py.

In-process cases call torch._dynamo.reset() between a cold and a warm compile: Dynamo then
hands the backend the same graph again, which is what a new process does.
"""

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import tccd
from tccd_testlib import run_training

from test_e2e_training import ATOL, RTOL, WORKER

RECIPES = "aot-recipes"


def _worker(env_overrides, out_dir: Path, name: str, model: str):
    import json

    out = out_dir / f"{name}.json"
    state = out_dir / f"{name}.pt"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TCCD_")}
    env.update(env_overrides)
    env["TCCD_AOT_SHARE"] = "0"
    r = subprocess.run(
        [sys.executable, str(WORKER), "--model", model, "--steps", "5", "--out", str(out),
         "--state-out", str(state)],
        capture_output=True, text=True, timeout=600, env=env,
    )
    assert r.returncode == 0, f"{name} failed:\n{r.stdout}\n{r.stderr}"
    return json.loads(out.read_text()), torch.load(state)


def _assert_matches_eager(model, losses, state):
    eager_losses, eager_state = run_training(model, steps=5)
    torch.testing.assert_close(torch.tensor(losses), eager_losses, rtol=RTOL, atol=ATOL)
    assert eager_state.keys() == state.keys()
    for k in eager_state:
        torch.testing.assert_close(state[k], eager_state[k], rtol=RTOL, atol=ATOL, msg=k)


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_warm_process_skips_aot_autograd_and_trains_identically(daemon, daemon_env, tmp_path, model):
    env = {k: daemon_env[k] for k in ("TCCD_ADDRESS", "TCCD_JOB_ID", "TCCD_NO_AUTOSTART")}
    env["TCCD_CACHE_DIR"] = str(tmp_path / "cache")

    cold, cold_state = _worker(env, tmp_path, "cold", model)
    assert cold["warnings"] == []
    assert cold["aot_autograd_calls"] >= 1
    assert cold["stats"] and not any(s["aot_skipped"] for s in cold["stats"])
    assert sorted(s["kind"] for s in cold["stats"]) == ["backward", "forward"]
    assert len(list((tmp_path / "cache" / RECIPES).iterdir())) == 1
    _assert_matches_eager(model, cold["losses"], cold_state)

    before = daemon.stats()
    warm, warm_state = _worker(env, tmp_path, "warm", model)
    after = daemon.stats()
    assert warm["warnings"] == []
    assert warm["aot_autograd_calls"] == 0, "the warm process traced a graph with AOTAutograd"
    assert sorted(s["kind"] for s in warm["stats"]) == ["backward", "forward"]
    for s in warm["stats"]:
        assert s["aot_skipped"] and s["local_hit"] and s["fallback"] is None, s
    assert after["compiles"] == before["compiles"], "the warm process compiled something"
    assert after["cache_hits"] == before["cache_hits"], "the warm process asked the daemon"
    assert sorted(s["key"] for s in warm["stats"]) == sorted(s["key"] for s in cold["stats"])

    # Same kernels, same runtime semantics: bit for bit the cold process, BN buffers included.
    assert warm["losses_hex"] == cold["losses_hex"]
    assert warm["params"] == cold["params"]
    _assert_matches_eager(model, warm["losses"], warm_state)
    if model == "cnn":
        assert int(warm_state["bn1.num_batches_tracked"]) == 5
        assert not torch.equal(warm_state["bn1.running_mean"], torch.zeros(8))


def _compile_twice(fn, *args, backward=False):
    """(cold outputs, warm outputs, compile stats): the second compile after a Dynamo reset."""
    results = []
    for _ in range(2):
        torch._dynamo.reset()
        call_args = [a.detach().clone().requires_grad_(a.requires_grad) for a in args]
        out = torch.compile(fn, backend="tccd", dynamic=False)(*call_args)
        if backward:
            out.sum().backward()
        results.append((out, call_args))
    return results[0], results[1], tccd.last_compile_stats()


def test_inference_graph_with_an_input_mutation_hits(daemon_env):
    def f(x, buf):
        buf.mul_(0.5).add_(x.mean(0))
        return torch.sigmoid(x) * 2 - buf

    x, buf = torch.randn(6, 5), torch.randn(5)
    eager_buf = buf.clone()
    eager = f(x, eager_buf)
    with torch.no_grad():
        (cold, cold_args), (warm, warm_args), stats = _compile_twice(f, x, buf)
    assert [s["kind"] for s in stats] == ["inference", "inference"]
    assert [s["aot_skipped"] for s in stats] == [False, True]
    assert stats[1]["local_hit"] and stats[1]["key"] == stats[0]["key"]
    for out, args in ((cold, cold_args), (warm, warm_args)):
        torch.testing.assert_close(out, eager, rtol=RTOL, atol=ATOL)
        torch.testing.assert_close(args[1], eager_buf, rtol=RTOL, atol=ATOL)
    assert torch.equal(warm, cold) and torch.equal(warm_args[1], cold_args[1])


def _training_graph(x, w):
    return torch.tanh(x @ w) * torch.sigmoid(x).sum(1, keepdim=True)


def _check_training_twice(daemon_env):
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.randn(3, 5, requires_grad=True)
    (cold, cold_args), (warm, warm_args), stats = _compile_twice(_training_graph, x, w, backward=True)
    ex, ew = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    eager = _training_graph(ex, ew)
    eager.sum().backward()
    for out, args in ((cold, cold_args), (warm, warm_args)):
        torch.testing.assert_close(out, eager, rtol=RTOL, atol=ATOL)
        torch.testing.assert_close(args[0].grad, ex.grad, rtol=RTOL, atol=ATOL)
        torch.testing.assert_close(args[1].grad, ew.grad, rtol=RTOL, atol=ATOL)
    return stats


def _recipe_files(daemon_env):
    root = Path(daemon_env["TCCD_CACHE_DIR"], RECIPES)
    return sorted(root.iterdir()) if root.exists() else []


@pytest.mark.parametrize("damage", ["flip_a_byte", "valid_digest_bad_json", "truncate"])
def test_corrupt_recipe_is_a_miss_and_is_replaced(daemon_env, damage):
    from tccd.local_cache import sha256_hex

    torch._dynamo.reset()
    x, w = torch.randn(4, 3, requires_grad=True), torch.randn(3, 5, requires_grad=True)
    torch.compile(_training_graph, backend="tccd", dynamic=False)(x, w).sum().backward()
    (path,) = _recipe_files(daemon_env)
    good = path.read_bytes()
    if damage == "flip_a_byte":
        data = bytearray(good)
        data[len(data) // 2] ^= 0x01
        path.write_bytes(bytes(data))
    elif damage == "valid_digest_bad_json":
        body = b'{"format": 1, "kind": "training"}'
        path.write_bytes(sha256_hex(body).encode() + b"\n" + body)
    else:
        path.write_bytes(good[:10])
    tccd.reset_compile_stats()

    stats = _check_training_twice(daemon_env)
    # The damaged recipe: a miss (normal path, rewritten); the run after it hits again.
    assert [s["aot_skipped"] for s in stats] == [False, False, True, True]
    assert all(s["fallback"] is None for s in stats)
    assert path.read_bytes() == good


def test_recipe_naming_a_missing_plan_takes_the_normal_path(daemon_env):
    torch._dynamo.reset()
    x, w = torch.randn(4, 3, requires_grad=True), torch.randn(3, 5, requires_grad=True)
    torch.compile(_training_graph, backend="tccd", dynamic=False)(x, w).sum().backward()
    for manifest in Path(daemon_env["TCCD_CACHE_DIR"], "manifests").iterdir():
        manifest.unlink()
    tccd.reset_compile_stats()
    stats = _check_training_twice(daemon_env)
    assert [s["aot_skipped"] for s in stats] == [False, False, True, True]
    assert not stats[0]["local_hit"] and stats[0]["cache_hit"]  # served by the daemon


def _returns_a_view_of_its_input(x, w):
    return x.t(), torch.relu(x @ w)


def _mutates_an_input_that_requires_grad(x, w):
    x.mul_(2)
    return torch.relu(x @ w)


@pytest.mark.parametrize(
    "fn, why",
    [
        (_returns_a_view_of_its_input, "output 0 is alias_of_input"),
        (_mutates_an_input_that_requires_grad, "input 0 has a mutation other than a data mutation"),
    ],
)
def test_graph_outside_the_recipe_class_gets_no_recipe_and_stays_correct(daemon_env, caplog, fn, why):
    caplog.set_level(logging.DEBUG, logger="tccd")
    def inputs():
        torch.manual_seed(0)
        x = torch.randn(4, 3, requires_grad=True)
        w = torch.randn(3, 5, requires_grad=True)
        # A non-leaf input may be mutated in place; the leaves are where gradients land.
        return x, w, (x * 1, w)

    ex, ew, eager_args = inputs()
    eager = fn(*eager_args)
    eager_loss = sum(o.sum() for o in (eager if isinstance(eager, tuple) else (eager,)))
    eager_loss.backward()
    for attempt in range(2):
        torch._dynamo.reset()
        x, w, args = inputs()
        out = torch.compile(fn, backend="tccd", dynamic=False)(*args)
        loss = sum(o.sum() for o in (out if isinstance(out, tuple) else (out,)))
        loss.backward()
        torch.testing.assert_close(out, eager, rtol=RTOL, atol=ATOL)
        torch.testing.assert_close(x.grad, ex.grad, rtol=RTOL, atol=ATOL)
        torch.testing.assert_close(w.grad, ew.grad, rtol=RTOL, atol=ATOL)
        if fn is _mutates_an_input_that_requires_grad:
            torch.testing.assert_close(args[0], eager_args[0], rtol=RTOL, atol=ATOL)
    stats = tccd.last_compile_stats()
    assert len(stats) == 4 and not any(s["aot_skipped"] or s["fallback"] for s in stats)
    assert _recipe_files(daemon_env) == []
    reasons = [r.getMessage() for r in caplog.records if "no recipe for" in r.getMessage()]
    assert len(reasons) == 2 and all(why in r for r in reasons), reasons


def test_aot_cache_off(daemon_env, monkeypatch):
    monkeypatch.setenv("TCCD_AOT_CACHE", "0")
    tccd.config.reload()
    stats = _check_training_twice(daemon_env)
    assert len(stats) == 4 and not any(s["aot_skipped"] for s in stats)
    assert stats[2]["local_hit"] and stats[3]["local_hit"]  # the plan cache still works
    assert _recipe_files(daemon_env) == []


def test_training_graph_hits_in_process(daemon_env):
    stats = _check_training_twice(daemon_env)
    assert [(s["kind"], s["aot_skipped"]) for s in stats] == [
        ("forward", False), ("backward", False), ("forward", True), ("backward", True)
    ]
    assert len(_recipe_files(daemon_env)) == 1


def _returns_a_view_of_an_intermediate(x, w):
    # AOTAutograd hides the alias behind aten._unsafe_view (OutputType.unsafe_view_alias), as
    # transformers' LM heads do with their logits: the recipe covers it.
    return torch.tanh(x @ w).view(-1), torch.relu(x).sum()


def test_output_that_views_an_intermediate_hits_and_stays_correct(daemon_env):
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.randn(3, 5, requires_grad=True)
    results = []
    for _ in range(2):
        torch._dynamo.reset()
        args = [a.detach().clone().requires_grad_() for a in (x, w)]
        out = torch.compile(_returns_a_view_of_an_intermediate, backend="tccd", dynamic=False)(*args)
        (out[0] * torch.arange(20.0)).sum().add(out[1]).backward()
        out[0].mul_(2)  # the output is the caller's own tensor: writable, no view error
        results.append((out, args))
    stats = tccd.last_compile_stats()
    assert [(s["kind"], s["aot_skipped"]) for s in stats] == [
        ("forward", False), ("backward", False), ("forward", True), ("backward", True)
    ]
    ex, ew = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    eager = _returns_a_view_of_an_intermediate(ex, ew)
    (eager[0] * torch.arange(20.0)).sum().add(eager[1]).backward()
    for out, args in results:
        torch.testing.assert_close(out[0], eager[0].detach() * 2, rtol=RTOL, atol=ATOL)
        torch.testing.assert_close(out[1], eager[1], rtol=RTOL, atol=ATOL)
        torch.testing.assert_close(args[0].grad, ex.grad, rtol=RTOL, atol=ATOL)
        torch.testing.assert_close(args[1].grad, ew.grad, rtol=RTOL, atol=ATOL)


def _lean_graph(x, w):
    return torch.sigmoid(x @ w) * torch.tanh(x).mean(1, keepdim=True)


@pytest.mark.parametrize("lean", [True, False])
def test_cold_process_switches_to_the_recipe_runtime_after_the_first_backward(daemon_env, monkeypatch, lean):
    """TCCD_LEAN_RUNTIME: the graph AOTAutograd traced runs in AOTAutograd's runtime until its
    recipe is stored (at its first backward), then in the recipe's (a TccdCompiledFunction,
    as a warm start's), still like eager; with 0 AOTAutograd's runtime stays."""
    monkeypatch.setenv("TCCD_AOT_SHARE", "0")  # no recipe from the daemon: this process is cold
    monkeypatch.setenv("TCCD_LEAN_RUNTIME", "1" if lean else "0")
    tccd.config.reload()
    torch._dynamo.reset()
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.randn(3, 5, requires_grad=True)
    fn = torch.compile(_lean_graph, backend="tccd", dynamic=False)
    runtimes = []
    for step in range(3):
        args = [a.detach().clone().requires_grad_() for a in (x, w)]
        out = fn(*args)
        runtimes.append(type(out.grad_fn).__name__)
        out.mul(torch.arange(5.0)).sum().backward()
        ex, ew = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
        eager = _lean_graph(ex, ew)
        eager.mul(torch.arange(5.0)).sum().backward()
        torch.testing.assert_close(out, eager, rtol=RTOL, atol=ATOL)
        torch.testing.assert_close(args[0].grad, ex.grad, rtol=RTOL, atol=ATOL)
        torch.testing.assert_close(args[1].grad, ew.grad, rtol=RTOL, atol=ATOL)
    stats = tccd.last_compile_stats()
    assert [(s["kind"], s["aot_skipped"]) for s in stats] == [("forward", False), ("backward", False)]
    assert len(_recipe_files(daemon_env)) == 1
    later = "TccdCompiledFunctionBackward" if lean else "CompiledFunctionBackward"
    assert runtimes == ["CompiledFunctionBackward", later, later], runtimes


@pytest.mark.parametrize("lean_entry", ["1", "0"])
def test_recipe_runtime_backward_frees_saved_tensors_during_the_plan(daemon_env, monkeypatch, lean_entry):
    """The recipe's runtime (TCCD_LEAN_RUNTIME=1 here; a warm start's too) releases the autograd
    node's saved tensors before its boxed backward plan call, as AOTAutograd does, so the plan
    frees each at its last use: by the end of the call no saved activation is alive. Holding
    them (ctx plus a list of its own) raised ConvNeXt's training peak by ~1.1 GiB on the H200.
    Both backward paths: TCCD_LEAN_ENTRY's one frame (and a native plan's lean_call), and the
    previous frames."""
    import gc
    import weakref

    from tccd import native_plan, runtime

    monkeypatch.setenv("TCCD_AOT_SHARE", "0")
    monkeypatch.setenv("TCCD_LEAN_RUNTIME", "1")
    monkeypatch.setenv("TCCD_LEAN_ENTRY", lean_entry)
    tccd.config.reload()
    torch._dynamo.reset()
    x = torch.randn(64, 32, requires_grad=True)
    w = torch.randn(32, 48, requires_grad=True)
    calls = []

    def spied(real):
        def spy(args):
            mine = {id(t) for t in (x, w, x.grad, w.grad)}
            refs = [weakref.ref(a) for a in args if isinstance(a, torch.Tensor) and id(a) not in mine]
            out = real(args)
            gc.collect()
            calls.append((len(refs), sum(r() is None for r in refs)))
            return out

        return spy

    for cls in (runtime.LoadedPlan, native_plan.NativePlan):
        real = cls.__call__
        monkeypatch.setattr(cls, "__call__", lambda self, args, _real=real: spied(lambda a: _real(self, a))(args))
    real_lean = native_plan.NativePlan.lean_call

    def lean_call(self):
        call = real_lean(self)
        return spied(call) if call is not None else None

    monkeypatch.setattr(native_plan.NativePlan, "lean_call", lean_call)
    fn = torch.compile(_lean_graph, backend="tccd", dynamic=False)
    for _ in range(2):  # the first backward stores the recipe; the second step runs in its runtime
        fn(x, w).mul(torch.arange(48.0)).sum().backward()
    out = fn(x, w)
    assert type(out.grad_fn).__name__ == "TccdCompiledFunctionBackward"
    calls.clear()  # the forward's call
    out.mul(torch.arange(48.0)).sum().backward()
    assert len(calls) == 1, calls
    others, freed = calls[0]
    # The saved activations (sigmoid and tanh of the forward) are gone; the incoming gradient,
    # held by the autograd engine, may stay.
    assert others >= 2 and freed >= others - 1, calls



@pytest.mark.parametrize("lean_entry", [True, False])
def test_lean_entry_backward_is_the_nodes_apply_and_matches_eager(daemon_env, monkeypatch, lean_entry):
    """TCCD_LEAN_ENTRY=1: the autograd engine calls the recipe runtime's backward as the node's
    own `apply` (BackwardCFunction.apply, which looks the user's backward up per call, is not
    run) and the native plans run through their lean_call; the gradients are eager's either
    way, and under torch.use_deterministic_algorithms a nondeterministic recipe's backward
    still raises AOT's error. 0: BackwardCFunction.apply, as before."""
    from torch.autograd.function import BackwardCFunction

    from tccd import native_plan

    monkeypatch.setenv("TCCD_AOT_SHARE", "0")
    monkeypatch.setenv("TCCD_LEAN_RUNTIME", "1")
    monkeypatch.setenv("TCCD_LEAN_ENTRY", "1" if lean_entry else "0")
    tccd.config.reload()
    torch._dynamo.reset()
    lean_calls = []
    real_lean = native_plan.NativePlan.lean_call

    def lean_call(self):
        call = real_lean(self)
        lean_calls.append(call is not None)
        return call

    monkeypatch.setattr(native_plan.NativePlan, "lean_call", lean_call)
    x = torch.randn(8, 6, requires_grad=True)
    w = torch.randn(6, 5, requires_grad=True)
    fn = torch.compile(_lean_graph, backend="tccd", dynamic=False)
    for _ in range(2):  # the first backward stores the recipe; the next call runs in its runtime
        fn(x, w).sum().backward()
    generic = []
    real_apply = BackwardCFunction.apply

    def counted(self, *args):
        generic.append(type(self).__name__)
        return real_apply(self, *args)

    monkeypatch.setattr(BackwardCFunction, "apply", counted)
    x.grad = w.grad = None
    out = fn(x, w)
    assert type(out.grad_fn).__name__ == "TccdCompiledFunctionBackward"
    out.mul(torch.arange(5.0)).sum().backward()
    ex, ew = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    _lean_graph(ex, ew).mul(torch.arange(5.0)).sum().backward()
    torch.testing.assert_close(x.grad, ex.grad, rtol=RTOL, atol=ATOL)
    torch.testing.assert_close(w.grad, ew.grad, rtol=RTOL, atol=ATOL)
    if lean_entry:
        assert generic == [] and lean_calls == [True, True], (generic, lean_calls)
    else:
        assert generic == ["TccdCompiledFunctionBackward"] and lean_calls == [], (generic, lean_calls)
    deterministic = torch.are_deterministic_algorithms_enabled()
    out = fn(x, w)
    try:
        torch.use_deterministic_algorithms(True)
        with pytest.raises(RuntimeError, match="use_deterministic_algorithms"):
            out.sum().backward()
    finally:
        torch.use_deterministic_algorithms(deterministic)


def test_recipe_runtime_create_graph_backward_matches_eager_and_double_backward_raises(daemon_env, monkeypatch):
    """The recipe's runtime runs a plain backward without AOT's once_differentiable wrapper
    (grad is off there, the wrapper has nothing to do) but keeps its behaviour where it has:
    a create_graph backward with incoming gradients that require grad gives eager's
    gradients, and differentiating those raises, as once_differentiable makes it."""
    monkeypatch.setenv("TCCD_AOT_SHARE", "0")
    monkeypatch.setenv("TCCD_LEAN_RUNTIME", "1")
    tccd.config.reload()
    torch._dynamo.reset()
    x = torch.randn(8, 6, requires_grad=True)
    w = torch.randn(6, 5, requires_grad=True)
    fn = torch.compile(_lean_graph, backend="tccd", dynamic=False)
    for _ in range(2):  # the first backward stores the recipe; the next call runs in its runtime
        fn(x, w).sum().backward()
    out = fn(x, w)
    assert type(out.grad_fn).__name__ == "TccdCompiledFunctionBackward"
    v = torch.randn(8, 5, requires_grad=True)
    gx, gw = torch.autograd.grad(out, (x, w), grad_outputs=v, create_graph=True)
    ex, ew = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    egx, egw = torch.autograd.grad(_lean_graph(ex, ew), (ex, ew), grad_outputs=v.detach())
    torch.testing.assert_close(gx, egx, rtol=RTOL, atol=ATOL)
    torch.testing.assert_close(gw, egw, rtol=RTOL, atol=ATOL)
    assert gx.requires_grad and gw.requires_grad
    with pytest.raises(RuntimeError, match="once_differentiable"):
        (gx.sum() + gw.sum()).backward()
    # A plain backward after it still runs in the runtime and matches eager.
    x.grad = w.grad = None
    fn(x, w).mul(torch.arange(5.0)).sum().backward()
    ex.grad = ew.grad = None
    _lean_graph(ex, ew).mul(torch.arange(5.0)).sum().backward()
    torch.testing.assert_close(x.grad, ex.grad, rtol=RTOL, atol=ATOL)
    torch.testing.assert_close(w.grad, ew.grad, rtol=RTOL, atol=ATOL)


def test_recipe_runtime_backward_run_from_a_compiled_region_matches_eager(daemon_env, monkeypatch):
    """A backward the recipe's runtime runs from eager code calls its plan directly; one run
    from inside a compiled region (Dynamo's eval-frame callback set: the backward at a graph
    break) goes through torch._dynamo.disable as AOTAutograd's does. Both paths run here (the
    callback checked by hand when this was written) and give eager's gradients, and the outer
    backend's graphs hold nothing of the runtime's backward."""
    monkeypatch.setenv("TCCD_AOT_SHARE", "0")
    monkeypatch.setenv("TCCD_LEAN_RUNTIME", "1")
    tccd.config.reload()
    torch._dynamo.reset()
    x = torch.randn(8, 6, requires_grad=True)
    w = torch.randn(6, 5, requires_grad=True)
    fn = torch.compile(_lean_graph, backend="tccd", dynamic=False)
    for _ in range(2):  # the first backward stores the recipe; the next call runs in its runtime
        fn(x, w).sum().backward()
    ex, ew = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    _lean_graph(ex, ew).mul(torch.arange(5.0)).sum().backward()
    traced = []

    def outer_backend(gm, example_inputs):
        traced.append(gm)
        return gm.forward

    def backward_in_region(out):
        loss = out.mul(torch.arange(5.0)).sum()
        loss.backward()  # a graph break: run by Dynamo's resumed code, callback set
        return loss.detach()

    outer = torch.compile(backward_in_region, backend=outer_backend)
    for from_eager in (True, False):
        x.grad = w.grad = None
        out = fn(x, w)
        assert type(out.grad_fn).__name__ == "TccdCompiledFunctionBackward"
        if from_eager:
            out.mul(torch.arange(5.0)).sum().backward()
        else:
            outer(out)
        torch.testing.assert_close(x.grad, ex.grad, rtol=RTOL, atol=ATOL)
        torch.testing.assert_close(w.grad, ew.grad, rtol=RTOL, atol=ATOL)
    names = {n.target for gm in traced for n in gm.graph.nodes if n.op == "call_function"}
    assert not any("tccd" in str(t) for t in names), names
