"""mode="reduce-overhead": which graphs run under CUDA graphs (client/tccd/cudagraphs.py).

The decision reads only graph metadata, so it is tested here without a GPU on graphs traced with
fake CUDA tensors; the wrapping is tested against a stand-in for torch's cudagraphify_impl whose
keyword arguments must bind to the installed torch's cudagraphify. A CPU model with
reduce-overhead trains as without it, with one logged reason. Capture and replay on a GPU are
in test_gpu_training.py.
"""

import inspect
import os
import logging
import types

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx

import tccd
from tccd import cudagraphs
from tccd_testlib import make_model, run_training, train


def _fake(*shapes, device="cuda", mode=None):
    with mode or FakeTensorMode():
        return [torch.empty(s, device=device) for s in shapes]


def _trace(fn, *inputs):
    return make_fx(fn, tracing_mode="fake")(*inputs)


def _linear(w, b, x):
    return (torch.relu(x @ w + b),)


def _skips():
    from torch._dynamo.utils import counters

    return counters["inductor"]["cudagraph_skips"]


# ---------------------------------------------------------------------------------------------
# Modes
# ---------------------------------------------------------------------------------------------


def test_modes_with_cuda_graphs_are_those_of_inductor():
    from torch._inductor import list_mode_options

    for mode in ["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"]:
        expected = bool(list_mode_options(mode).get("triton.cudagraphs", False))
        assert cudagraphs.wanted(mode) == expected, mode
    assert not cudagraphs.wanted(None)
    assert cudagraphs.wanted("reduce-overhead")


# ---------------------------------------------------------------------------------------------
# The decision
# ---------------------------------------------------------------------------------------------


def test_cuda_forward_is_graphed_with_lifted_parameters_static():
    gm = _trace(_linear, *_fake((8, 8), (8,), (4, 8)))
    d = cudagraphs.decide("forward", gm, _fake((8, 8), (8,), (4, 8)), num_dynamo_inputs=1)
    assert d.skip is None
    assert d.device_index == 0
    assert d.static_input_idxs == (0, 1)  # w and b were lifted by AOTAutograd; x is copied in
    assert d.mutated_input_idxs == ()


def test_static_inputs_come_from_the_tracing_context_when_there_is_one():
    from torch._guards import TracingContext, tracing

    inputs = _fake((8, 8), (8,), (4, 8))
    gm = _trace(_linear, *inputs)
    context = TracingContext(FakeTensorMode())
    context.fw_metadata = types.SimpleNamespace(static_input_indices=[1])
    with tracing(context):
        d = cudagraphs.decide("forward", gm, inputs, num_dynamo_inputs=3)
    assert d.skip is None and d.static_input_idxs == (1,)


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_graph_without_cuda_tensors_is_not_graphed(device):
    inputs = _fake((8, 8), (8,), (4, 8), device=device)
    gm = _trace(_linear, *inputs)
    d = cudagraphs.decide("forward", gm, inputs, num_dynamo_inputs=1)
    assert d.skip is not None and d.device_index is None
    if device == "cpu":
        assert "cpu tensors" in d.skip
    else:
        assert "no CUDA tensors" in d.skip


def test_cuda_graph_with_a_cpu_tensor_is_not_graphed():
    mode = FakeTensorMode()
    (w, x), (scale,) = _fake((8, 8), (4, 8), mode=mode), _fake((), device="cpu", mode=mode)
    gm = _trace(lambda w, x, s: (x @ w * s,), w, x, scale)
    d = cudagraphs.decide("inference", gm, [w, x, scale], num_dynamo_inputs=3)
    assert d.skip is not None and "cpu tensors" in d.skip and "s_1" in d.skip, d.skip


def _shift_right(ids, w):
    """HF T5's _shift_right: the decoder-start token is a lifted CPU 0-dim constant
    (_tensor_constant0, lift_fresh_copy) that fill.Tensor writes into a CUDA tensor."""
    shifted = ids.new_zeros(ids.shape)
    shifted[..., 1:] = ids[..., :-1].clone()
    shifted[..., 0] = torch.tensor(0)
    return (w[shifted].sum(),)


def test_cuda_graph_whose_only_cpu_tensors_are_its_own_scalar_constants_is_graphed(monkeypatch):
    mode = FakeTensorMode()
    with mode:
        inputs = [torch.zeros(2, 8, dtype=torch.long, device="cuda"), torch.empty(16, 4, device="cuda")]
    gm = _trace(_shift_right, *inputs)
    cpu = [n.name for n in gm.graph.nodes if getattr(n.meta.get("val"), "device", None) == torch.device("cpu")]
    assert cpu == ["_tensor_constant0", "lift_fresh_copy"], cpu  # what T5's forward holds
    d = cudagraphs.decide("forward", gm, inputs, num_dynamo_inputs=2)
    assert d.skip is None and d.device_index == 0, d.skip

    monkeypatch.setenv("TCCD_CUDAGRAPH_CPU_CONSTANTS", "0")  # the old rule: any CPU tensor skips
    tccd.config.reload()
    try:
        d = cudagraphs.decide("forward", gm, inputs, num_dynamo_inputs=2)
    finally:
        monkeypatch.delenv("TCCD_CUDAGRAPH_CPU_CONSTANTS")
        tccd.config.reload()
    assert d.skip is not None and "cpu tensors" in d.skip and "_tensor_constant0" in d.skip, d.skip


def test_cpu_scalar_made_from_an_input_or_drawn_at_random_is_not_a_constant():
    mode = FakeTensorMode()
    (x,), (s,) = _fake((4, 8), mode=mode), _fake((), device="cpu", mode=mode)
    gm = _trace(lambda x, s: (x * (s + 1),), x, s)  # s + 1: a CPU scalar made from an input
    d = cudagraphs.decide("inference", gm, [x, s], num_dynamo_inputs=2)
    assert d.skip is not None and "cpu tensors" in d.skip, d.skip

    def noisy(x):
        return (x * torch.rand((), device="cpu"),)  # a CPU draw: a replay would repeat it

    gm = _trace(noisy, x)
    d = cudagraphs.decide("inference", gm, [x], num_dynamo_inputs=1)
    assert d.skip is not None and "cpu tensors" in d.skip, d.skip


def test_mutating_a_user_input_is_not_graphed_but_mutating_a_parameter_is():
    def step(w, x):
        x.mul_(2)  # a user input
        return (x @ w,)

    inputs = _fake((8, 8), (4, 8))
    gm = _trace(step, *inputs)
    d = cudagraphs.decide("forward", gm, inputs, num_dynamo_inputs=2)  # nothing static
    assert d.skip is not None and "mutates inputs" in d.skip and "x_1" in d.skip, d.skip

    def bn_like(buf, x):
        buf.add_(1)  # a buffer (static input), as BatchNorm's running stats
        return (x + buf,)

    inputs = _fake((8,), (4, 8))
    gm = _trace(bn_like, *inputs)
    d = cudagraphs.decide("forward", gm, inputs, num_dynamo_inputs=1)  # buf was lifted: static
    assert d.skip is None, d.skip
    assert d.mutated_input_idxs == (0,)


def _uncapturable(inputs, names):
    """A CUDA graph calling an op in torch's FORBIDDEN_CUDAGRAPH_OPS (in every torch since 2.1;
    the list grows, e.g. linalg.eigh is in it from 2.12 on)."""
    graph = torch.fx.Graph()
    nodes = []
    for value, name in zip(inputs, names):
        nodes.append(graph.placeholder(name))
        nodes[-1].meta["val"] = value
    op = graph.call_function(torch.ops.aten._fused_moving_avg_obs_fq_helper.default, tuple(nodes))
    graph.output((op,))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def test_op_that_cannot_be_captured_is_not_graphed():
    inputs = _fake((4, 4))
    gm = _uncapturable(inputs, ["a"])
    d = cudagraphs.decide("inference", gm, inputs, num_dynamo_inputs=1)
    assert d.skip is not None and "_fused_moving_avg_obs_fq_helper" in d.skip, d.skip
    assert cudagraphs.decide("inference", _trace(lambda a: (a @ a,), *inputs), inputs, 1).skip is None


def test_backward_static_inputs_are_the_saved_tensors():
    def backward(primals_1, relu, tangents_1):
        return (tangents_1 @ primals_1.t() * (relu > 0),)

    inputs = _fake((8, 8), (4, 8), (4, 8))
    gm = _trace(backward, *inputs)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for node, name in zip(placeholders, ["primals_1", "relu", "tangents_1"]):
        node.name = name
    d = cudagraphs.decide("backward", gm, inputs, num_dynamo_inputs=0)
    assert d.skip is None and d.static_input_idxs == (0, 1)
    placeholders[0].meta["is_static_input"] = False  # a saved plain user input (newer torch)
    d = cudagraphs.decide("backward", gm, inputs, num_dynamo_inputs=0)
    assert d.static_input_idxs == (1,)


# ---------------------------------------------------------------------------------------------
# Wrapping (torch's cudagraphify_impl replaced by a recorder)
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def fake_trees(monkeypatch):
    """Records cudagraphify_impl calls; their arguments must bind to the real cudagraphify."""
    from torch._inductor import cudagraph_trees

    calls = []
    real = inspect.signature(cudagraph_trees.cudagraphify)

    def cudagraphify_impl(model, inputs, static_input_idxs, *args, **kwargs):
        real.bind(model, inputs, static_input_idxs, *args, **kwargs)  # TypeError if not
        calls.append(dict(kwargs, static_input_idxs=tuple(static_input_idxs), model=model))

        def replay(args):
            return model(args)

        return replay

    monkeypatch.setattr(cudagraph_trees, "cudagraphify_impl", cudagraphify_impl)
    return calls


def _boxed(tag):
    def run(args):
        args.clear()
        return [tag]

    run._boxed_call = True
    run.plan = tag
    return run


def test_forward_and_backward_are_wrapped_with_the_trees_flags(fake_trees):
    session = cudagraphs.Session(num_dynamo_inputs=1)
    inputs = _fake((8, 8), (8,), (4, 8))
    fw, skip = session.wrap("forward", "0/0 forward", _trace(_linear, *inputs), inputs, _boxed("fw"), None)
    assert skip is None and fw._boxed_call and fw.plan == "fw"
    assert fw([1, 2, 3]) == ["fw"]
    bw_inputs = _fake((8, 8), (4, 8))
    bw_gm = _trace(lambda primals_1, tangents_1: (tangents_1 @ primals_1,), *bw_inputs)
    bw, skip = session.wrap("backward", "0/0 backward", bw_gm, bw_inputs, _boxed("bw"), None)
    assert skip is None
    (f, b) = fake_trees
    assert (f["is_backward"], f["is_inference"], f["device_index"]) == (False, False, 0)
    assert f["static_input_idxs"] == (0, 1)
    assert (b["is_backward"], b["is_inference"]) == (True, False)
    assert b["static_input_idxs"] == (0,)  # primals_1 is saved; tangents_1 is copied in


def test_inference_is_wrapped_as_inference(fake_trees):
    session = cudagraphs.Session(num_dynamo_inputs=1)
    inputs = _fake((8, 8), (8,), (4, 8))
    _, skip = session.wrap("inference", "0/0 inference", _trace(_linear, *inputs), inputs, _boxed("i"), None)
    assert skip is None
    assert (fake_trees[0]["is_backward"], fake_trees[0]["is_inference"]) == (False, True)


def test_skipped_forward_skips_its_backward_with_one_logged_reason(fake_trees, caplog):
    session = cudagraphs.Session(num_dynamo_inputs=1)
    inputs = _fake((8, 8), (8,), (4, 8), device="cpu")
    fw_plan, bw_plan = _boxed("fw"), _boxed("bw")
    before = _skips()
    with caplog.at_level(logging.WARNING, logger="tccd.cudagraphs"):
        fw, fw_skip = session.wrap("forward", "0/0 forward", _trace(_linear, *inputs), inputs, fw_plan, None)
        bw, bw_skip = session.wrap("backward", "0/0 backward", _trace(_linear, *inputs), inputs, bw_plan, None)
    assert fw is fw_plan and bw is bw_plan and fake_trees == []
    assert "cpu" in fw_skip and "forward" in bw_skip
    warnings = [r for r in caplog.records if r.name == "tccd.cudagraphs"]
    assert len(warnings) == 1 and "0/0 forward" in warnings[0].getMessage(), warnings
    assert _skips() == before + 1


def test_backward_without_graphs_after_a_graphed_forward_tells_the_tree_manager(fake_trees, monkeypatch):
    from torch._inductor import cudagraph_trees

    manager = types.SimpleNamespace(backwards=0)
    manager.set_to_running_backward = lambda: setattr(manager, "backwards", manager.backwards + 1)
    monkeypatch.setattr(cudagraph_trees, "get_manager", lambda index, create_if_none_exists=True: manager)
    session = cudagraphs.Session(num_dynamo_inputs=1)
    inputs = _fake((8, 8), (8,), (4, 8))
    session.wrap("forward", "0/0 forward", _trace(_linear, *inputs), inputs, _boxed("fw"), None)
    bw_inputs = _fake((8, 8), (4, 8))
    bw_gm = _uncapturable(bw_inputs, ["primals_1", "tangents_1"])
    bw, skip = session.wrap("backward", "0/0 backward", bw_gm, bw_inputs, _boxed("bw"), None)
    assert skip and "cannot be captured" in skip
    assert bw._boxed_call and bw.plan == "bw"
    assert bw([1, 2]) == ["bw"] and manager.backwards == 1


def test_tccd_fallback_and_setup_failures_run_without_graphs(fake_trees, monkeypatch):
    from torch._inductor import cudagraph_trees

    inputs = _fake((8, 8), (8,), (4, 8))
    gm = _trace(_linear, *inputs)
    plan = _boxed("eager")
    fn, skip = cudagraphs.Session(1).wrap("forward", "0/0 forward", gm, inputs, plan, "no daemon")
    assert fn is plan and skip == "tccd could not compile it"

    def broken(*args, **kwargs):
        raise RuntimeError("no trees today")

    monkeypatch.setattr(cudagraph_trees, "cudagraphify_impl", broken)
    plan = _boxed("fw")
    fn, skip = cudagraphs.Session(1).wrap("forward", "0/0 forward", gm, inputs, plan, None)
    assert fn is plan and "setting up CUDA graphs failed" in skip and "no trees today" in skip


# ---------------------------------------------------------------------------------------------
# End to end on the CPU
# ---------------------------------------------------------------------------------------------


def test_reduce_overhead_on_a_cpu_model_trains_as_default_mode_with_one_logged_reason(daemon_env, caplog):
    default_losses, default_state = run_training("mlp", steps=5, backend="tccd")
    tccd.reset_compile_stats()
    torch._dynamo.reset()
    model, batches = make_model("mlp")
    compile_ro = lambda m: torch.compile(m, backend="tccd", mode="reduce-overhead", dynamic=False)  # noqa: E731
    with caplog.at_level(logging.WARNING, logger="tccd.cudagraphs"):
        losses, state = train(model, batches, 5, compile_ro)
    assert torch.equal(losses, default_losses)  # the same kernels run the same way
    for k in default_state:
        assert torch.equal(state[k], default_state[k]), k
    stats = tccd.last_compile_stats()
    assert [s["kind"] for s in stats] == ["forward", "backward"]
    assert all(s["fallback"] is None and not s["cudagraphs"] for s in stats)
    assert "cpu tensors" in stats[0]["cudagraph_skip"], stats[0]["cudagraph_skip"]
    warnings = [r.getMessage() for r in caplog.records if r.name == "tccd.cudagraphs"]
    assert len(warnings) == 1 and "cpu tensors" in warnings[0], warnings


def test_default_mode_asks_for_no_cuda_graphs(daemon_env, caplog):
    with caplog.at_level(logging.WARNING, logger="tccd.cudagraphs"):
        run_training("mlp", steps=1, backend="tccd")
    assert all(s["cudagraph_skip"] is None and not s["cudagraphs"] for s in tccd.last_compile_stats())
    assert not [r for r in caplog.records if r.name == "tccd.cudagraphs"]


# ---------------------------------------------------------------------------------------------
# The recipe's runtime around the wrapped callables (TCCD_LEAN_CUDAGRAPHS), on the CPU: the
# device check is bypassed and torch's trees are replaced by a pass-through that counts calls
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def counting_trees(monkeypatch):
    """CPU graphs count as graphable on device 0; each wrapped callable counts its calls."""
    from torch._inductor import cudagraph_trees

    runs = {"forward": 0, "backward": 0, "inference": 0}

    def cudagraphify_impl(model, inputs, static_input_idxs, *args, **kwargs):
        kind = "backward" if kwargs.get("is_backward") else ("inference" if kwargs.get("is_inference") else "forward")

        def replay(args):
            runs[kind] += 1
            return model(args)

        return replay

    monkeypatch.setattr(cudagraph_trees, "cudagraphify_impl", cudagraphify_impl)
    monkeypatch.setattr(cudagraphs, "_device_skip", lambda gm, inputs: (None, 0))
    return runs


def _record_grad_fns(compiled, names):
    def run(x):
        out = compiled(x)
        names.append(type(out.grad_fn).__name__)
        return out

    return run


@pytest.mark.parametrize("name", ["mlp", "cnn"])
@pytest.mark.parametrize("lean", [True, False])
def test_graphed_training_switches_to_the_recipe_runtime_around_the_wrapped_callables(
    daemon_env, monkeypatch, counting_trees, name, lean
):
    """TCCD_LEAN_CUDAGRAPHS: under CUDA graphs a graph switches to the recipe's runtime after its
    first backward, as in default mode, and that runtime runs the callables the trees wrapped
    (every step's forward and backward go through them), training exactly as default mode; the
    recipe is this process's only (no file). With 0, AOTAutograd's wrappers stay."""
    monkeypatch.setenv("TCCD_LEAN_CUDAGRAPHS", "1" if lean else "0")
    tccd.config.reload()
    default_losses, default_state = run_training(name, steps=4, backend="tccd")
    assert counting_trees == {"forward": 0, "backward": 0, "inference": 0}
    recipes = os.path.join(daemon_env["TCCD_CACHE_DIR"], "aot-recipes")
    default_recipes = sorted(os.listdir(recipes))  # the default-mode run's
    tccd.reset_compile_stats()
    torch._dynamo.reset()
    model, batches = make_model(name)
    grad_fns = []
    compile_ro = lambda m: _record_grad_fns(  # noqa: E731
        torch.compile(m, backend="tccd", mode="reduce-overhead", dynamic=False), grad_fns
    )
    losses, state = train(model, batches, 4, compile_ro)
    assert torch.equal(losses, default_losses)
    for k in default_state:
        assert torch.equal(state[k], default_state[k]), k
    stats = tccd.last_compile_stats()
    assert [(s["kind"], s["cudagraphs"]) for s in stats] == [("forward", True), ("backward", True)], stats
    assert counting_trees == {"forward": 4, "backward": 4, "inference": 0}
    later = "TccdCompiledFunctionBackward" if lean else "CompiledFunctionBackward"
    assert grad_fns == ["CompiledFunctionBackward"] + [later] * 3, grad_fns
    assert sorted(os.listdir(recipes)) == default_recipes


def test_graphed_inference_switches_to_the_recipe_runtime(daemon_env, monkeypatch, counting_trees):
    """Inference graphs too: from the call after the plan is loaded, the recipe's runtime calls
    the wrapped inference callable."""
    from tccd import aot_runtime

    built = []
    real_build = aot_runtime.build

    def build(recipe, fw_plan, bw_plan, calls=None):
        built.append((recipe.kind, calls))
        return real_build(recipe, fw_plan, bw_plan, calls=calls)

    monkeypatch.setattr(aot_runtime, "build", build)
    model, batches = make_model("cnn")
    model.eval()
    fn = torch.compile(model, backend="tccd", mode="reduce-overhead", dynamic=False)
    with torch.no_grad():
        outs = [fn(x) for x, _ in batches[:3]]
        expected = [model(x) for x, _ in batches[:3]]
    for out, ref in zip(outs, expected):
        torch.testing.assert_close(out, ref)
    assert counting_trees["inference"] == 3
    assert [(kind, calls is not None) for kind, calls in built] == [("inference", True)], built
    assert [s["kind"] for s in tccd.last_compile_stats()] == ["inference"]


class _TwoGraphs(torch.nn.Module):
    """A graph break between two linear layers: two Dynamo graphs, each a forward and backward."""

    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(16, 32), torch.nn.Linear(32, 4)

    def forward(self, x):
        h = torch.relu(self.a(x))
        torch._dynamo.graph_break()
        return self.b(torch.tanh(h))


def test_graph_break_both_graphs_switch_to_the_recipe_runtime(daemon_env, monkeypatch, counting_trees):
    """Each Dynamo graph switches on its own after its first backward; the backward of the
    first graph takes the gradient the second graph's recipe runtime produced."""
    from tccd import aot_runtime

    built = []
    real_build = aot_runtime.build

    def build(recipe, fw_plan, bw_plan, calls=None):
        built.append((recipe.kind, calls is not None))
        return real_build(recipe, fw_plan, bw_plan, calls=calls)

    monkeypatch.setattr(aot_runtime, "build", build)
    torch.manual_seed(0)
    model = _TwoGraphs()
    reference = _TwoGraphs()
    reference.load_state_dict(model.state_dict())
    fn = torch.compile(model, backend="tccd", mode="reduce-overhead", dynamic=False)
    x = torch.randn(8, 16)
    for step in range(3):
        out = fn(x)
        ref = reference(x)
        torch.testing.assert_close(out, ref)
        out.square().sum().backward()
        ref.square().sum().backward()
    for p, q in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad)
    assert type(out.grad_fn).__name__ == "TccdCompiledFunctionBackward"
    assert counting_trees == {"forward": 6, "backward": 6, "inference": 0}
    assert sorted(s["kind"] for s in tccd.last_compile_stats()) == ["backward"] * 2 + ["forward"] * 2
    assert built == [("training", True)] * 2, built


def test_backward_without_graphs_after_a_graphed_forward_runs_in_the_recipe_runtime(
    daemon_env, monkeypatch, counting_trees
):
    """A backward the trees cannot take (here: refused by decide) keeps its tree-manager notice in
    the recipe's runtime too: the runtime calls the callable AOTAutograd was given for it."""
    from torch._inductor import cudagraph_trees

    real_decide = cudagraphs.decide

    def decide(kind, *args, **kwargs):
        return cudagraphs.Decision("test: not this one") if kind == "backward" else real_decide(kind, *args, **kwargs)

    manager = types.SimpleNamespace(backwards=0)
    manager.set_to_running_backward = lambda: setattr(manager, "backwards", manager.backwards + 1)
    monkeypatch.setattr(cudagraph_trees, "get_manager", lambda index, create_if_none_exists=True: manager)
    monkeypatch.setattr(cudagraphs, "decide", decide)
    default_losses, _ = run_training("mlp", steps=3, backend="tccd")
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    model, batches = make_model("mlp")
    grad_fns = []
    compile_ro = lambda m: _record_grad_fns(  # noqa: E731
        torch.compile(m, backend="tccd", mode="reduce-overhead", dynamic=False), grad_fns
    )
    losses, _ = train(model, batches, 3, compile_ro)
    assert torch.equal(losses, default_losses)
    assert grad_fns[1:] == ["TccdCompiledFunctionBackward"] * 2, grad_fns
    assert counting_trees["forward"] == 3 and counting_trees["backward"] == 0
    assert manager.backwards == 3
    stats = tccd.last_compile_stats()
    assert [(s["kind"], s["cudagraphs"]) for s in stats] == [("forward", True), ("backward", False)]


def test_pack_saved_trains_bit_identically_with_fewer_saved_tensors(daemon_env, monkeypatch, counting_trees):
    """TCCD_PACK_SAVED=1 (under CUDA graphs): the CNN's batch-norm statistics are saved as one
    concatenated tensor the backward slices; training is bit-identical to default mode (the
    concat and the slices copy nothing but the values) and the forward saves fewer tensors."""
    from tccd import aot_runtime, saved_packing

    default_losses, default_state = run_training("cnn", steps=3, backend="tccd")
    monkeypatch.setenv("TCCD_PACK_SAVED", "1")
    tccd.config.reload()
    packed, saved = [], []
    real_pack, real_build = saved_packing.pack_small_saved, aot_runtime.build

    def pack(fw, bw):
        before = len([n for n in bw.graph.nodes if n.op == "placeholder"])
        changed = real_pack(fw, bw)
        packed.append((changed, before - len([n for n in bw.graph.nodes if n.op == "placeholder"])))
        return changed

    def build(recipe, fw_plan, bw_plan, calls=None):
        saved.append(recipe.num_saved)
        return real_build(recipe, fw_plan, bw_plan, calls=calls)

    monkeypatch.setattr(saved_packing, "pack_small_saved", pack)
    monkeypatch.setattr(aot_runtime, "build", build)
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    model, batches = make_model("cnn")
    compile_ro = lambda m: torch.compile(m, backend="tccd", mode="reduce-overhead", dynamic=False)  # noqa: E731
    losses, state = train(model, batches, 3, compile_ro)
    assert torch.equal(losses, default_losses)
    for k in default_state:
        assert torch.equal(state[k], default_state[k]), k
    assert len(packed) == 1 and packed[0][0] and packed[0][1] >= 3, packed  # n stats -> 1
    assert counting_trees["forward"] == 3 and counting_trees["backward"] == 3
    assert len(saved) == 1, saved


class _LossAndLogits(torch.nn.Module):
    """Returns its loss and its logits, as a transformers model compiled whole does."""

    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(16, 32), torch.nn.Linear(32, 8)

    def forward(self, x, y):
        logits = self.b(torch.relu(self.a(x)))
        return torch.nn.functional.cross_entropy(logits, y), logits


def _loss_and_logits_training(compile_fn, uses_logits):
    """Four SGD steps; in the steps of `uses_logits` the logits get a gradient too."""
    torch.manual_seed(0)
    model = _LossAndLogits()
    gen = torch.Generator().manual_seed(1)
    batches = [(torch.randn(8, 16, generator=gen), torch.randint(0, 8, (8,), generator=gen)) for _ in range(4)]
    runner = compile_fn(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for step, (x, y) in enumerate(batches):
        opt.zero_grad(set_to_none=True)
        loss, logits = runner(x, y)
        (loss + logits.square().mean() if step in uses_logits else loss).backward()
        opt.step()
        losses.append(loss.detach().clone())
    return torch.stack(losses), {k: v.detach().clone() for k, v in model.state_dict().items()}


def _record_backward_trees(monkeypatch):
    """CUDA graph trees replaced by a recorder that runs each function eagerly (CPU tests; the
    device check skipped): returns (functions, calls), filled as the run goes: per backward tree
    function its input count, per backward call (function index, input count)."""
    from torch._inductor import cudagraph_trees

    functions, calls = [], []

    def cudagraphify_impl(model, inputs, static_input_idxs, *args, **kwargs):
        if not kwargs.get("is_backward"):
            return lambda args: model(args)
        index = len(functions)
        functions.append(len(inputs))

        def replay(args):
            calls.append((index, len(args)))
            return model(args)

        return replay

    monkeypatch.setattr(cudagraph_trees, "cudagraphify_impl", cudagraphify_impl)
    monkeypatch.setattr(cudagraphs, "_device_skip", lambda gm, inputs: (None, 0))
    return functions, calls


@pytest.mark.parametrize("knob", ["1", "0"])
def test_an_output_without_gradient_reaches_the_graphed_backward_as_zeros_made_inside(
    daemon_env, monkeypatch, knob
):
    """TCCD_CUDAGRAPH_ZERO_TANGENTS: in the recipe runtime, a step whose logits get no gradient
    runs a second graphed backward (its own tree function) that takes one tangent fewer and makes
    the zeros inside; a step whose logits do get one runs the full backward; training is the same
    as in default mode either way. With 0, every backward takes both tangents (autograd's zeros)."""
    monkeypatch.setenv("TCCD_CUDAGRAPH_ZERO_TANGENTS", knob)
    tccd.config.reload()
    functions, calls = _record_backward_trees(monkeypatch)
    uses_logits = {2}
    compile_default = lambda m: torch.compile(m, backend="tccd", dynamic=False)  # noqa: E731
    default_losses, default_state = _loss_and_logits_training(compile_default, uses_logits)
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    functions.clear()
    calls.clear()
    compile_ro = lambda m: torch.compile(m, backend="tccd", mode="reduce-overhead", dynamic=False)  # noqa: E731
    losses, state = _loss_and_logits_training(compile_ro, uses_logits)
    assert torch.equal(losses, default_losses)
    for k in default_state:
        assert torch.equal(state[k], default_state[k]), k
    full = functions[0]
    if knob == "1":
        # Step 0: AOTAutograd's runtime (autograd's zeros, the full function); steps 1 and 3: the
        # variant without the logits' tangent; step 2: the full function with both gradients.
        assert functions == [full, full - 1], functions
        assert calls == [(0, full), (1, full - 1), (0, full), (1, full - 1)], calls
    else:
        assert functions == [full]
        assert calls == [(0, full)] * 4, calls


def test_zoo_gpt2_runs_the_zero_tangent_variant_from_its_second_step(daemon_env, monkeypatch):
    """The zoo's (tiny) GPT-2 as the zoo steps it (one graph returning loss and logits, the loss
    backpropagated): from step 2 the backward runs the variant without the logits' tangent."""
    pytest.importorskip("transformers")
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "deploy"))
    import zoo_benchmark

    functions, calls = _record_backward_trees(monkeypatch)
    torch.manual_seed(0)
    model, batch_fn, fwd = zoo_benchmark.build_model("gpt2", True, False)
    batch = batch_fn(2, torch.device("cpu"))
    compiled = torch.compile(model, backend="tccd", mode="reduce-overhead")
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for _ in range(3):
        fwd(compiled, batch, True).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    assert [s["kind"] for s in tccd.last_compile_stats()] == ["forward", "backward"]
    full = functions[0]
    assert functions == [full, full - 1], functions
    assert calls == [(0, full), (1, full - 1), (1, full - 1)], calls


def test_zero_tangent_variants_take_only_tangents_after_the_static_inputs(monkeypatch):
    """ZeroTangents.variant: a tangent position after the static (saved) inputs gets a graphed
    variant whose function makes the zeros in the placeholder's layout and calls the full
    callable with them; a position among the static inputs, or a mutated one, gets none."""
    from torch._inductor import cudagraph_trees

    made = []

    def cudagraphify_impl(model, inputs, static_input_idxs, *args, **kwargs):
        made.append((len(inputs), tuple(static_input_idxs), kwargs.get("mutated_input_idxs")))
        return lambda args: model(args)

    monkeypatch.setattr(cudagraph_trees, "cudagraphify_impl", cudagraphify_impl)

    def bw(saved, tangent_a, tangent_b):
        return (saved * tangent_a + tangent_b.sum(),)

    gm = make_fx(bw)(torch.randn(4, 3), torch.randn(4, 3), torch.randn(2, 5).t())
    seen = []

    def compiled(args):
        seen.append([(tuple(a.shape), a.stride(), bool((a == 0).all())) for a in args])
        return bw(*args)

    decision = cudagraphs.Decision(None, 0, static_input_idxs=(0,))
    zeros = cudagraphs.ZeroTangents(gm, [None] * 3, compiled, decision)
    assert zeros.variant((0,)) is None
    run = zeros.variant((2,))
    assert run is not None and zeros.variant((2,)) is run  # made once
    assert made == [(2, (0,), ())]
    out = run([torch.ones(4, 3), torch.ones(4, 3)])
    assert torch.equal(out[0], torch.ones(4, 3))
    # The made tangent has the placeholder's (transposed) layout and is zeros.
    assert seen[-1][2] == ((5, 2), (1, 5), True)
    mutated = cudagraphs.ZeroTangents(gm, [None] * 3, compiled, cudagraphs.Decision(None, 0, (0,), (2,)))
    assert mutated.variant((2,)) is None
