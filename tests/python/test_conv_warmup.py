"""conv_warmup.py without a daemon: which calls of a plan it warms, on which thread, and that it
never raises. Plans are built as the daemon builds an all-extern plan (tccd_testlib), from the
backward graph AOTAutograd traces for a small CNN; on the CPU the warm-up runs with level 2 (the
mechanism; there is nothing to warm there).
"""

import threading
import time

import pytest
import torch
import torch.nn as nn

from tccd import conv_warmup
from tccd.serialize import encode_graph
from tccd.v1 import tccd_pb2 as pb
from tccd_testlib import capture_aot_graphs, graph_to_extern_plan


class TwoConvs(nn.Module):
    """Two convolutions of different shapes, the second used twice (one distinct call each)."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 8, 3, padding=1)
        self.b = nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        h = torch.relu(self.a(x))
        return self.b(torch.relu(self.b(h))).square().sum()


def _backward_plan() -> "pb.Plan":
    torch.manual_seed(0)
    x = torch.randn(2, 3, 8, 8, requires_grad=True)
    graphs = capture_aot_graphs(TwoConvs(), x, backward=True)
    gm = {kind: gm for kind, gm, _ in graphs}["backward"]
    return graph_to_extern_plan(encode_graph(gm)[0])


def test_the_distinct_convolution_backward_calls_are_found():
    plan = _backward_plan()
    steps = [s for s in plan.steps if s.extern_call.target.startswith("aten::convolution_backward")]
    assert len(steps) == 3, [s.extern_call.target for s in plan.steps]
    assert len(conv_warmup._calls(plan)) == 2  # b's two calls are one shape


def test_nothing_to_do_for_a_plan_without_convolutions():
    conv_warmup.reset()
    plan = pb.Plan(num_inputs=0)
    assert not conv_warmup.start(plan, "none", 2)
    assert conv_warmup.stats()["plans"] == 0


def test_level_2_warms_a_cpu_plan_once_on_the_autograd_path():
    conv_warmup.reset()
    plan = _backward_plan()
    assert not conv_warmup.start(plan, "cpu", 1)  # level 1: CUDA plans only
    assert conv_warmup.start(plan, "cpu", 2)
    conv_warmup.wait_all(timeout_s=60)
    stats = conv_warmup.stats()
    assert (stats["plans"], stats["shapes"], stats["failed"]) == (1, 2, 0), stats
    # A CPU node runs on the thread that called .backward(): the warm-up's own thread.
    assert stats["threads"] and stats["threads"][0] != threading.get_ident()
    conv_warmup.start(plan, "cpu again", 2)  # the shapes are warm already: nothing runs
    conv_warmup.wait_all(timeout_s=60)
    assert conv_warmup.stats() == stats


def test_a_failing_call_is_logged_not_raised(caplog):
    conv_warmup.reset()
    plan = _backward_plan()
    for step in plan.steps:  # groups that do not divide the channels: ATen raises
        if step.extern_call.target.startswith("aten::convolution_backward"):
            step.extern_call.args[9].int_value = 5
    assert conv_warmup.start(plan, "broken", 2)
    conv_warmup.wait_all(timeout_s=60)
    stats = conv_warmup.stats()
    assert stats["failed"] == 2 and stats["shapes"] == 0, stats
    assert "warming aten::convolution_backward" in caplog.text


def test_a_load_inside_a_backward_starts_nothing():
    conv_warmup.reset()
    plan = _backward_plan()
    started = []

    class Probe(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            started.append(conv_warmup.start(plan, "inside", 2))
            return grad

    x = torch.zeros(2, requires_grad=True)
    Probe.apply(x).sum().backward()
    assert started == [False]


def test_at_exit_a_running_warmup_stops_after_its_current_call(monkeypatch):
    """The exit hook sets the stop flag and waits: no Python left running on the autograd
    thread while the interpreter finalizes. Here the flag is set before the calls run."""
    conv_warmup.reset()
    plan = _backward_plan()
    monkeypatch.setattr(conv_warmup, "_stopping", threading.Event())
    conv_warmup._stopping.set()
    assert conv_warmup.start(plan, "exiting", 2)
    conv_warmup.wait_all(timeout_s=60)
    stats = conv_warmup.stats()
    assert stats["shapes"] == 0 and stats["failed"] == 0, stats


def test_a_process_exits_cleanly_while_a_warmup_runs(tmp_path):
    """A process that ends right after a backward plan's load (its warm-up still running)."""
    import subprocess
    import sys

    script = tmp_path / "exit_early.py"
    script.write_text(
        "import sys; sys.path[:0] = %r\n"
        "import test_conv_warmup as t\n"
        "from tccd import conv_warmup\n"
        "plan = t._backward_plan()\n"
        "assert conv_warmup.start(plan, 'early', 2)\n"
        "print('started', flush=True)\n" % [str(__import__('pathlib').Path(__file__).parent)]
    )
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "started" in r.stdout, r.stdout + r.stderr[-2000:]


def _attention_backward_plan() -> "pb.Plan":
    """Two cuDNN attention backward steps: dense (cum_seq_q/k None), and variable-length."""
    from tccd.serialize import tensor_meta

    plan = pb.Plan(num_inputs=0)
    q = torch.empty(2, 4, 16, 8, dtype=torch.bfloat16)
    lse = torch.empty(2, 4, 16, 1)
    seed = torch.empty((), dtype=torch.int64)
    for t in (q, lse, seed, torch.empty(3, dtype=torch.int32)):
        plan.values.append(tensor_meta(t, "t"))

    def ref(i):
        return pb.Value(ref=pb.ValueRef(node=i))

    for cum_seq in (pb.Value(none=True), ref(3)):
        args = [ref(0)] * 5 + [ref(1), ref(2), ref(2), pb.Value(none=True), cum_seq, cum_seq,
                                pb.Value(int_value=16), pb.Value(int_value=16), pb.Value(float_value=0.0),
                                pb.Value(bool_value=True)]
        call = pb.ExternCall(target="aten::_scaled_dot_product_cudnn_attention_backward.default", args=args)
        plan.steps.append(pb.Step(extern_call=call))
    return plan


def test_level_3_adds_dense_cudnn_attention_backward_calls_only():
    plan = _attention_backward_plan()
    assert conv_warmup._calls(plan, conv_warmup._targets(1)) == []
    calls = conv_warmup._calls(plan, conv_warmup._targets(3))
    assert len(calls) == 1 and calls[0][1][9] is None, calls  # the variable-length call is left out


def test_nothing_starts_while_a_backward_waits_for_its_prefetched_plan(monkeypatch):
    """The cold path: the prefetch thread loads the plan while the backward waits for it on the
    autograd thread, whose next work is the plan's real calls (the H200 run: 8 shapes warmed
    in 25 ms after the backward had paid 1759 ms)."""
    from tccd import prefetch

    conv_warmup.reset()
    plan = _backward_plan()
    monkeypatch.setattr(prefetch, "_backwards_waiting", 1)
    assert prefetch.backward_waiting()
    assert not conv_warmup.start(plan, "waited for", 2)
    monkeypatch.setattr(prefetch, "_backwards_waiting", 0)
    assert conv_warmup.start(plan, "ahead", 2)
    conv_warmup.wait_all(timeout_s=60)
    assert conv_warmup.stats()["shapes"] == 2


def test_only_a_backward_waiting_for_its_plan_counts():
    """A forward's first call also waits in Pending.take (TCCD_ASYNC_COMPILE): the backward's
    prefetched plan loading meanwhile still gets its warm-up."""
    from tccd import config, prefetch
    from tccd.stats import GraphRecord

    seen = {}
    for kind in ("forward", "backward"):
        pending = prefetch.Pending("k", "g", kind)

        def finish():
            time.sleep(0.2)
            seen[kind] = prefetch.backward_waiting()
            pending.future.set_result("plan")

        t = threading.Thread(target=finish)
        t.start()
        assert pending.take("k", GraphRecord(name="g", kind=kind), config.get()) == "plan"
        t.join()
    assert seen == {"forward": False, "backward": True}
    assert not prefetch.backward_waiting()


def _forward_plan() -> "pb.Plan":
    torch.manual_seed(0)
    x = torch.randn(2, 3, 8, 8, requires_grad=True)
    graphs = capture_aot_graphs(TwoConvs(), x, backward=True)
    gm = {kind: gm for kind, gm, _ in graphs}["forward"]
    return graph_to_extern_plan(encode_graph(gm)[0])


def test_forward_warmup_runs_a_forward_plans_distinct_convolutions_on_its_own_thread():
    """TCCD_CONV_WARMUP_FORWARD: a forward plan loaded by key; b's two calls are one shape."""
    conv_warmup.reset()
    plan = _forward_plan()
    assert len([s for s in plan.steps if s.extern_call.target.startswith("aten::convolution.")]) == 3
    assert not conv_warmup.start_forward(plan, "off", 0, by_key=True)
    assert not conv_warmup.start_forward(plan, "cuda only", 1, by_key=True)  # a CPU plan
    assert not conv_warmup.start_forward(plan, "cold path", 2, by_key=False)  # its call comes next
    assert not conv_warmup.start(plan, "a forward plan", 2)  # no convolution backward in it
    assert conv_warmup.start_forward(plan, "fw", 2, by_key=True)
    conv_warmup.wait_all(timeout_s=60)
    stats = conv_warmup.stats()
    assert (stats["forward_plans"], stats["forward_shapes"], stats["forward_failed"]) == (1, 2, 0), stats
    assert (stats["plans"], stats["shapes"]) == (0, 0), stats  # the backward's counters stay
    assert stats["threads"] and stats["threads"][0] != threading.get_ident()
    assert conv_warmup.start_forward(plan, "fw again", 2, by_key=True)  # its shapes are warm
    conv_warmup.wait_all(timeout_s=60)
    assert conv_warmup.stats()["forward_shapes"] == 2


def test_nothing_to_do_forward_for_a_backward_plan():
    conv_warmup.reset()
    assert not conv_warmup.start_forward(_backward_plan(), "bw", 2, by_key=True)
    assert not conv_warmup.start_forward(pb.Plan(num_inputs=0), "none", 2, by_key=True)


def test_a_backward_warmup_runs_beside_the_forwards(monkeypatch):
    """The two warm-ups do not wait for each other (two threads' cuDNN set-ups overlapped on
    the H200: cudnn_setup_probe.py): the backward's calls start while the forward's still run."""
    conv_warmup.reset()
    events = []
    forward_running = threading.Event()
    backward_started = threading.Event()
    real = conv_warmup._run_calls

    def traced(calls, device, name, forward=False):
        if forward:
            forward_running.set()
            backward_started.wait(timeout=30)  # ends only once the backward's calls started
            events.append(("forward saw the backward start", backward_started.is_set()))
        else:
            forward_running.wait(timeout=30)
            backward_started.set()
        real(calls, device, name, forward)

    monkeypatch.setattr(conv_warmup, "_run_calls", traced)
    assert conv_warmup.start_forward(_forward_plan(), "fw", 2, by_key=True)
    assert conv_warmup.start(_backward_plan(), "bw", 2)
    conv_warmup.wait_all(timeout_s=60)
    assert events == [("forward saw the backward start", True)], events
    stats = conv_warmup.stats()
    assert (stats["forward_shapes"], stats["shapes"]) == (2, 2), stats


def test_forward_level_3_adds_attention_calls_without_dropout_only():
    """A call with dropout would draw from the user's generator: left out."""
    from tccd.serialize import tensor_meta

    plan = pb.Plan(num_inputs=0)
    plan.values.append(tensor_meta(torch.empty(2, 4, 16, 8, dtype=torch.bfloat16), "q"))
    q = pb.Value(ref=pb.ValueRef(node=0))
    for dropout in (0.0, 0.1):
        call = pb.ExternCall(target="aten::_scaled_dot_product_flash_attention.default",
                             args=[q, q, q, pb.Value(float_value=dropout), pb.Value(bool_value=True)])
        plan.steps.append(pb.Step(extern_call=call))
    plan.steps.append(pb.Step(extern_call=pb.ExternCall(  # dropout_p left at its default (0)
        target="aten::_scaled_dot_product_efficient_attention.default",
        args=[q, q, q, pb.Value(none=True), pb.Value(bool_value=False)])))
    assert conv_warmup._calls(plan, conv_warmup._forward_targets(1)) == []
    calls = conv_warmup._calls(plan, conv_warmup._forward_targets(3))
    assert [(c[0], c[1][3] if len(c[1]) > 3 else None) for c in calls] == [
        ("aten::_scaled_dot_product_flash_attention.default", 0.0),
        ("aten::_scaled_dot_product_efficient_attention.default", None)], calls


def test_the_forward_knob():
    from tccd import config

    assert config.Config.from_env({}).conv_warmup_forward == 0
    for level in ("1", "2", "3"):
        assert config.Config.from_env({"TCCD_CONV_WARMUP_FORWARD": level}).conv_warmup_forward == int(level)
    with pytest.raises(ValueError, match="TCCD_CONV_WARMUP_FORWARD='4': expected 0, 1, 2 or 3"):
        config.Config.from_env({"TCCD_CONV_WARMUP_FORWARD": "4"})
