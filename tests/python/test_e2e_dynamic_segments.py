"""Symbolic segments (TCCD_SYMBOLIC_SEGMENTS, tccd_plan_enable_symbolic_segments): the values of a
symbolic plan that live only between its sized kernels, gemms and views are raw pointers into one
workspace per call, packed by lifetime at that call's sizes, never tensors.

The client's candidate analysis (native_plan.symbolic_segment_values) is checked on hand-written
plans (text in, ids out, a nothing-to-do case); the runtime end to end with a real daemon on the
CPU (TCCD_SYMBOLIC_REWRITES_ON_CPU=1: the CUDA graphs' rewrites, so the CPU plans look like the
GPU's) over many sizes against eager, with the knob on and off, and with the client's list cut
down to the roots (the runtime must then keep every viewed root a tensor). On the CPU the gemms
stay extern (ATen's mm), so only kernels' values qualify; a GPU plan's gemm operands are covered
by tests/python/test_gpu_dynamic_kernels.py."""

from __future__ import annotations

import copy
import re

import pytest
import torch
from google.protobuf import text_format

import tccd
from tccd import native_plan
from tccd.v1 import tccd_pb2 as pb
from test_e2e_dynamic_rewrites import rewriting_daemon  # noqa: F401 (a fixture)
from test_e2e_dynamic_shapes import ATOL, RTOL, Block, train_ids_against_eager

# ------------------------------------------------------------------------------------------------
# The candidate analysis, plan text in, value ids out
# ------------------------------------------------------------------------------------------------

_META = 'values { sizes { expr: "s0" } strides { value: 1 } storage_offset { value: 0 } dtype: FLOAT32 }\n'


def _plan(steps: str, outputs=(5,), values: int = 7) -> pb.Plan:
    text = "num_inputs: 1\n" + _META * values + steps
    text += "".join(f"outputs {{ ref {{ node: {o} }} }}\n" for o in outputs)
    text += "symbolic: true\n"
    return text_format.Parse(text, pb.Plan())


def _kernel(ins, outs, abi="tccd-cpu-sym-1"):
    inputs = "".join(f" inputs: {i}" for i in ins)
    return f'steps {{ native {{ abi: "{abi}"{inputs} }}' + "".join(f" outputs: {o}" for o in outs) + " }\n"


def _extern(target, base, out):
    return (f'steps {{ extern_call {{ target: "{target}" args {{ ref {{ node: {base} }} }} }}'
            f" outputs: {out} }}\n")


def test_a_kernel_chain_through_a_view_stays_inside():
    # 0 -> k(1) -> view(2) -> k(3) -> k(5, output): 1, its view 2 and 3 never leave the kernels.
    plan = _plan(_kernel([0], [1]) + _extern("aten::view.default", 1, 2) + _kernel([2], [3]) + _kernel([3], [5]))
    assert native_plan.symbolic_segment_values(plan, {1}) == [1, 2, 3]


def test_a_value_an_extern_op_reads_is_a_tensor_and_so_is_its_base():
    # 3 is read by an extern op (sum): a tensor; 2 is the view 3's kernel reads... here the
    # extern reads the view 2, so 2 and its base 1 are tensors; 3 stays inside.
    plan = _plan(_kernel([0], [1]) + _extern("aten::view.default", 1, 2) + _kernel([2], [3])
                 + _extern("aten::sum.default", 2, 4) + _kernel([3, 4], [5]))
    assert native_plan.symbolic_segment_values(plan, {1}) == [3]


def test_an_unbound_view_is_an_extern_reader():
    # The same view not bound with tccd_plan_bind_view (not in `views`): its base is read by
    # the dispatcher, so it is a tensor.
    plan = _plan(_kernel([0], [1]) + _extern("aten::view.default", 1, 2) + _kernel([2], [3]) + _kernel([3], [5]))
    assert native_plan.symbolic_segment_values(plan, set()) == [3]


def test_plan_outputs_and_static_kernels_stay_tensors():
    # 1 is a plan output; 3 is read by a kernel with static sizes (tccd-cpu-1), 4 is its output.
    plan = _plan(_kernel([0], [1]) + _kernel([1], [3]) + _kernel([3], [4], abi="tccd-cpu-1") + _kernel([4], [5]),
                 outputs=(1, 5))
    assert native_plan.symbolic_segment_values(plan, set()) == []


def test_nothing_to_do_without_sized_kernels():
    plan = _plan(_extern("aten::relu.default", 0, 1) + _extern("aten::view.default", 1, 2)
                 + _extern("aten::relu.default", 2, 5))
    assert native_plan.symbolic_segment_values(plan, {1}) == []


# ------------------------------------------------------------------------------------------------
# End to end, CPU, real daemon
# ------------------------------------------------------------------------------------------------

SIZES = [(3, 12), (2, 7), (5, 20), (4, 5), (2, 31), (6, 9), (1, 1), (7, 16), (3, 33), (2, 64)]


def _train_at_every_size(model):
    train_ids_against_eager(model, SIZES, 300)
    stats = tccd.last_compile_stats()
    assert all(s["fallback"] is None for s in stats), stats
    assert all(s["python_steps"] == 0 for s in stats), stats
    # Frame 0/0 is the dynamic graph (the (1, 1) size recompiles as 0/1: Dynamo specialises 1s).
    return {s["kind"]: s for s in stats if s["name"].startswith("0/0 ")}


def _allocations(report: str):
    """Per-call allocations of frame 0/0's plans by kind, from the profile report."""
    out, kind = {}, None
    for line in report.splitlines():
        m = re.match(r"tccd plan profile 0/0 (\w+):", line)
        if m:
            kind = m.group(1)
        elif line.startswith("  per call: allocations") and kind:
            out[kind] = float(re.search(r"allocations ([\d.]+)", line).group(1))
            kind = None
        elif line.startswith("tccd plan profile"):
            kind = None
    return out


@pytest.fixture
def profiled(monkeypatch):
    monkeypatch.setenv("TCCD_PLAN_PROFILE", "1")
    native_plan._profiled.clear()
    yield
    native_plan._profiled.clear()


def test_segments_match_eager_at_every_size_and_save_allocations(rewriting_daemon, profiled, monkeypatch):
    import torch._dynamo

    allocations, values = {}, {}
    for knob in ("0", "1"):
        monkeypatch.setenv("TCCD_SYMBOLIC_SEGMENTS", knob)
        native_plan._profiled.clear()
        tccd.reset_compile_stats()
        torch._dynamo.reset()
        torch.manual_seed(0)
        by_kind = _train_at_every_size(Block(16))
        values[knob] = {k: s["segment_values"] for k, s in by_kind.items()}
        allocations[knob] = _allocations(native_plan.profile_report())
    assert values["0"] == {"forward": 0, "backward": 0}, values
    # The block's CPU plans: the softmax and GELU chains' kernel outputs, and views of them.
    assert values["1"]["forward"] > 0 and values["1"]["backward"] > 0, values
    for kind in ("forward", "backward"):
        assert allocations["1"][kind] < allocations["0"][kind], allocations
    print(f"\nsegment values {values['1']}; allocations per call {allocations['0']} -> {allocations['1']}")


def test_the_runtime_keeps_a_viewed_root_a_tensor_when_its_view_is_not_given(rewriting_daemon, monkeypatch):
    """The client names the roots only: every root read through a view must stay a tensor (the
    view step's dispatcher reads it), and the plans still match eager."""
    import torch._dynamo

    full = native_plan.symbolic_segment_values

    def roots_only(plan, views):
        return [v for v in full(plan, views) if not any(v in plan.steps[i].outputs for i in views)]

    monkeypatch.setattr(native_plan, "symbolic_segment_values", roots_only)
    torch._dynamo.reset()
    torch.manual_seed(0)
    by_kind = _train_at_every_size(Block(16))
    kept = {k: s["segment_values"] for k, s in by_kind.items()}
    # Roots read by kernels only stay raw (the forward's two); the backward's are all viewed.
    assert kept["forward"] > 0, kept
    print(f"\nroots kept without their views: {kept}")


class _Chain(torch.nn.Module):
    """Two chains of sized kernels through views, each ending in a matmul (extern on the CPU):
    two segments in the forward, the first dead before the second begins."""

    def __init__(self, d: int = 8):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.randn(d, d) / d)
        self.w2 = torch.nn.Parameter(torch.randn(d, d) / d)

    def forward(self, x):  # [d, n]
        c = torch.cos(torch.sin(x).transpose(0, 1)) + 1
        g = torch.exp(torch.sin(c @ self.w1).t()) * 0.5
        return g.t() @ self.w2


def _workspaces(report: str):
    """Per-call workspace allocations of frame 0/0's plans by kind."""
    out, kind = {}, None
    for line in report.splitlines():
        m = re.match(r"tccd plan profile 0/0 (\w+):", line)
        if m:
            kind = m.group(1)
        elif line.startswith("  per call: allocations") and kind:
            out[kind] = float(re.search(r"workspace allocations ([\d.]+)", line).group(1))
            kind = None
    return out


@pytest.mark.parametrize("segments,one_workspace", [("1", "0"), ("1", "1"), ("0", "1")])
def test_each_segment_has_its_own_workspace(rewriting_daemon, profiled, monkeypatch, segments,
                                            one_workspace):
    """The forward's two chains are two segments: two workspaces per call (each dropped after
    its last read, not held for the call) with TCCD_SYMBOLIC_ONE_WORKSPACE=0, one with it on
    (tccd_plan_enable_symbolic_segments_one_workspace: the same values, one allocation per
    call), and the results match eager at every size."""
    import torch._dynamo

    monkeypatch.setenv("TCCD_SYMBOLIC_SEGMENTS", segments)
    monkeypatch.setenv("TCCD_SYMBOLIC_ONE_WORKSPACE", one_workspace)
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = _Chain()
    eager = copy.deepcopy(model)
    compiled = torch.compile(model, backend="tccd", dynamic=True)
    for n in (5, 9, 13, 21, 2, 40):
        x = torch.randn(8, n, generator=torch.Generator().manual_seed(n))
        out, expected = compiled(x), eager(x)
        torch.testing.assert_close(out, expected, rtol=RTOL, atol=ATOL, msg=f"forward at n={n}")
        out.square().sum().backward()
        expected.square().sum().backward()
        for p, q in zip(model.parameters(), eager.parameters()):
            torch.testing.assert_close(p.grad, q.grad, rtol=RTOL, atol=ATOL, msg=f"grad at n={n}")
            p.grad = None
            q.grad = None
    stats = {s["kind"]: s for s in tccd.last_compile_stats() if s["name"].startswith("0/0 ")}
    workspaces = _workspaces(native_plan.profile_report())
    if segments == "1":
        assert stats["forward"]["segment_values"] == 4, stats["forward"]  # two roots, two views
        assert workspaces["forward"] == (1 if one_workspace == "1" else 2), native_plan.profile_report()
    else:
        assert stats["forward"]["segment_values"] == 0 and workspaces["forward"] == 0, workspaces
