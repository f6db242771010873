"""Channels-last layouts for CUDA convolutions (codegen/passes/channels_last_layout.h), without a
GPU: a small conv / batch norm / relu / max pool / residual network's AOT graphs, captured on the
CPU and compiled by the real daemon for an H100 target, as the client sends them
(client/tccd/saved_layouts.py): the forward names its saved tensors free, the backward takes the
strides the forward's plan chose. The plans must run every convolution on channels-last operands
(no cuDNN transposes) and add no layout copies. tests/python/test_gpu_channels_last.py runs the same
kind of network against eager on a GPU.
"""

import collections
import functools

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from tccd import saved_layouts, serialize
from tccd.serialize import pb
from tccd_testlib import capture_aot_graphs

_CONVS = ("aten::convolution.default", "aten::convolution_backward.default")


class _Net(nn.Module):
    """A ResNet stem and block: conv, batch norm, relu, max pool, residual add, mean pool."""

    def __init__(self, c=16):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(3, c, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(c)
        self.c2, self.b2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.c3, self.b3 = nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c)
        self.fc = nn.Linear(c, 10)

    def forward(self, x, y):
        h = F.max_pool2d(torch.relu(self.b1(self.c1(x))), 3, 2, 1)
        h = torch.relu(h + self.b3(self.c3(torch.relu(self.b2(self.c2(h))))))
        return F.cross_entropy(self.fc(h.mean((2, 3))), y)


def _graphs():
    from tccd.backend import _partitioner

    torch.manual_seed(0)
    m = _Net()
    _, partition_fn, decompositions = _partitioner()

    def step(x, y):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return m(x, y)

    graphs = capture_aot_graphs(step, torch.randn(4, 3, 64, 64), torch.randint(0, 10, (4,)), backward=True,
                                partition_fn=partition_fn, decompositions=decompositions)
    assert [g[0] for g in graphs] == ["forward", "backward"]
    return graphs


def _on_cuda(graph) -> None:
    """Every tensor and device argument of `graph` retargeted to CUDA (as cuda_plan_census.py)."""

    def visit(value):
        kind = value.WhichOneof("kind")
        if kind == "device" and value.device.type == pb.CPU:
            value.device.type, value.device.index = pb.CUDA, 0
        elif kind == "list":
            for item in value.list.items:
                visit(item)

    for meta in list(graph.inputs) + [m for n in graph.nodes for m in n.outputs]:
        if meta.device.type == pb.CPU:
            meta.device.type, meta.device.index = pb.CUDA, 0
    for node in graph.nodes:
        for a in node.args:
            visit(a)
        for kw in node.kwargs:
            visit(kw.value)


def _compile(stub, graph, name, options=None):
    request = pb.CompileRequest(
        graph=graph,
        target=pb.Target(device_type=pb.CUDA, cuda_device_name="NVIDIA H100 80GB HBM3", cuda_cc_major=9,
                         cuda_cc_minor=0),
        graph_name=name,
        options=serialize.options_proto(None, options),
        client=serialize.client_info(),
    )
    return stub.Compile(request, timeout=600).manifest.plan


def _layout(plan, value_id) -> str:
    meta = plan.values[value_id]
    sizes = [d.value for d in meta.sizes]
    strides = [d.value for d in meta.strides]
    n, c, h, w = sizes
    if strides == [h * w * c, 1, w * c, c]:
        return "NHWC"
    return "NCHW" if strides == [c * h * w, h * w, w, 1] else str(strides)


def _conv_layouts(plan) -> collections.Counter:
    """(op, layouts of its tensor operands and outputs) -> count, over the plan's conv steps."""
    counts = collections.Counter()
    for step in plan.steps:
        if step.WhichOneof("kind") == "extern_call" and step.extern_call.target in _CONVS:
            ins = tuple(_layout(plan, a.ref.node) for a in step.extern_call.args[:3] if a.HasField("ref"))
            outs = tuple(_layout(plan, o) for o in step.outputs if o >= 0)
            counts[(step.extern_call.target, ins, outs)] += 1
    return counts


def _copies(plan) -> int:
    """Layout copies the plan added: clone steps or clones fused into kernels."""
    n = 0
    for step in plan.steps:
        kind = step.WhichOneof("kind")
        if kind == "extern_call":
            n += step.extern_call.target == "aten::clone.default"
        elif kind in ("segment", "native_call"):
            n += sum(op == "aten::clone.default" for k in getattr(step, kind).kernels for op in k.ops)
    return n


@pytest.fixture(scope="module")
def graphs():
    return _graphs()


def test_convolutions_run_channels_last_forward_and_backward_without_layout_copies(daemon, graphs):
    stub = daemon.stub()
    (_, fw, _), (_, bw, _) = graphs
    fw_graph, _ = serialize.encode_graph(fw)
    bw_graph, _ = serialize.encode_graph(bw)
    _on_cuda(fw_graph)
    _on_cuda(bw_graph)
    # The forward's saved tensors: the backward's non-tangent inputs, its last outputs.
    num_saved = sum(1 for n in bw.graph.find_nodes(op="placeholder") if not n.name.startswith("tangents"))
    stop = len(fw_graph.outputs)
    start = stop - num_saved
    free = saved_layouts.free_outputs(bw, start, stop, 0)
    assert free, "every saved tensor is read through a view in the backward"

    forward = _compile(stub, fw_graph, "forward", {saved_layouts.OPTION: saved_layouts.option_value(free)})
    layouts = _conv_layouts(forward)
    assert sum(layouts.values()) == 3
    assert set(layouts) == {("aten::convolution.default", ("NHWC", "NHWC"), ("NHWC",))}, layouts
    assert _copies(forward) == 0

    saved = saved_layouts.output_strides(forward)[start:stop]
    assert saved_layouts.restride_inputs(bw_graph, saved, 0) > 0
    backward = _compile(stub, bw_graph, "backward")
    layouts = _conv_layouts(backward)
    assert sum(layouts.values()) == 3
    for (target, ins, outs), _ in layouts.items():
        assert target == "aten::convolution_backward.default"
        assert set(ins) == {"NHWC"} and set(outs) == {"NHWC"}, layouts
    # The weight gradients leave the graph as the f32 parameters' NCHW: their cast writes NCHW
    # (a clone fused into the cast's kernel), nothing else is copied.
    assert _copies(backward) <= 3


def test_without_free_outputs_the_training_forward_keeps_nchw(daemon, graphs):
    # Every activation is saved for the backward, i.e. a graph output AOTAutograd promised in
    # NCHW: converting would cost more copies than the convolutions save.
    (_, fw, _), _ = graphs
    fw_graph, _ = serialize.encode_graph(fw)
    _on_cuda(fw_graph)
    forward = _compile(daemon.stub(), fw_graph, "forward")
    layouts = _conv_layouts(forward)
    assert set(layouts) == {("aten::convolution.default", ("NCHW", "NCHW"), ("NCHW",))}, layouts
    assert _copies(forward) == 0


def test_a_malformed_free_output_range_is_invalid_argument(daemon, graphs):
    import grpc

    (_, fw, _), _ = graphs
    fw_graph, _ = serialize.encode_graph(fw)
    _on_cuda(fw_graph)
    with pytest.raises(grpc.RpcError) as e:
        _compile(daemon.stub(), fw_graph, "forward", {saved_layouts.OPTION: f"0:{len(fw_graph.outputs) + 1}"})
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "tccd_free_layout_outputs" in e.value.details()


class _Stem(nn.Module):
    """ConvNeXt's stem and the start of its first block: a 4x4 stride-4 convolution, LayerNorm2d
    (permute to NHWC, layer norm over the channels, permute back), a depthwise 7x7 convolution."""

    def __init__(self, c=16):
        super().__init__()
        self.conv, self.norm = nn.Conv2d(3, c, 4, stride=4), nn.LayerNorm(c, eps=1e-6)
        self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)

    def forward(self, x):
        h = self.norm(self.conv(x).permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        return self.dw(h).mean((2, 3))


def _stem_inference_graph():
    torch.manual_seed(0)
    m = _Stem().eval()

    def call(x):
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
            return m(x)

    (_, gm, _), = capture_aot_graphs(call, torch.randn(2, 3, 32, 32))
    graph, _ = serialize.encode_graph(gm)
    _on_cuda(graph)
    return graph


_STEM_NHWC = ("aten::convolution.default", ("NHWC", "NHWC"), ("NHWC",))
_STEM_NCHW = ("aten::convolution.default", ("NCHW", "NCHW"), ("NCHW",))


def test_a_stem_read_through_a_permute_runs_channels_last(daemon):
    # channels-last-permutes: the norm's permute is read by kernels only, so it takes the
    # permuted channels-last strides and costs no copy; the stem's region goes channels-last
    # (the norm then reads contiguous rows of channels).
    plan = _compile(daemon.stub(), _stem_inference_graph(), "inference")
    layouts = _conv_layouts(plan)
    assert layouts[_STEM_NHWC] == 1 and _STEM_NCHW not in layouts, layouts
    assert _copies(plan) == 0


def test_channels_last_permutes_off_keeps_the_stem_nchw():
    from conftest import TCCD_BINARY, Daemon, short_tempdir

    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    import shutil

    root = short_tempdir("tccd-clp-")
    off = Daemon(TCCD_BINARY, root, env={"TCCD_DISABLE_PASSES": "channels-last-permutes"})
    try:
        off.start()
        plan = _compile(off.stub(), _stem_inference_graph(), "inference")
    finally:
        assert off.stop() == 0
        shutil.rmtree(root, ignore_errors=True)
    layouts = _conv_layouts(plan)
    assert layouts[_STEM_NCHW] == 1 and _STEM_NHWC not in layouts, layouts


def test_saved_layout_helpers():
    assert saved_layouts.option_value([8, 3, 4, 5]) == "3:6,8:9"
    assert saved_layouts.option_value([]) == ""

    # A backward reading its first saved tensor through a view, its second through detach and a
    # pointwise op, its third directly: the first keeps its traced strides.
    g = torch.fx.Graph()
    a, b, c = g.placeholder("a"), g.placeholder("b"), g.placeholder("c")
    t = g.placeholder("tangents_1")
    v = g.call_function(torch.ops.aten.view.default, (a, [-1]))
    d = g.call_function(torch.ops.aten.relu.default, (g.call_function(torch.ops.aten.detach.default, (b,)),))
    s = g.call_function(torch.ops.aten.add.Tensor, (c, t))
    g.output((v, d, s))
    bw = torch.fx.GraphModule(torch.nn.Module(), g)
    assert saved_layouts.free_outputs(bw, 5, 8, 0) == [6, 7]
    assert saved_layouts.free_outputs(None, 5, 8, 0) == []

    graph = pb.Graph()
    for strides in ([12, 4, 2, 1], [12, 4, 2, 1]):
        meta = graph.inputs.add()
        for n in (1, 3, 2, 2):
            meta.sizes.add().value = n
        for s_ in strides:
            meta.strides.add().value = s_
    # One saved SymInt first: input 1 is saved tensor 0.
    assert saved_layouts.restride_inputs(graph, [(12, 1, 6, 3)], 1) == 1
    assert [d.value for d in graph.inputs[1].strides] == [12, 1, 6, 3]
    assert [d.value for d in graph.inputs[0].strides] == [12, 4, 2, 1]
    assert saved_layouts.restride_inputs(graph, [(12, 1, 6, 3)], 1) == 0

    plan = pb.Plan()
    meta = plan.values.add()
    for s_ in (6, 1):
        meta.strides.add().value = s_
    plan.outputs.add().ref.node = 0
    plan.outputs.add().none = True
    assert saved_layouts.output_strides(plan) == [(6, 1), None]


def test_saved_slice_from_metadata_or_backward_graph(monkeypatch):
    # A forward returning (loss, saved a, saved b, saved SymInt s): the saved tensors are
    # outputs [1, 3), the SymInt last; the backward takes s, a, b, then the tangent.
    monkeypatch.setattr(saved_layouts, "_is_cuda_conv_graph", lambda gm: True)
    fw = torch.fx.Graph()
    x = fw.placeholder("x")
    fw.output((x, x, x, x))
    fw = torch.fx.GraphModule(torch.nn.Module(), fw)
    bw = torch.fx.Graph()
    for name, val in (("sym_s", 3), ("a", torch.empty(2)), ("b", torch.empty(2)), ("tangents_1", torch.empty(()))):
        bw.placeholder(name).meta["val"] = val
    bw.output((None,))
    bw = torch.fx.GraphModule(torch.nn.Module(), bw)

    monkeypatch.setattr(saved_layouts, "_fw_metadata", lambda: None)
    assert saved_layouts.saved_slice(fw, bw) == (1, 3, 1)
    assert saved_layouts.saved_slice(fw, None) is None

    class Meta:  # AOTAutograd's ViewAndMutationMeta as torch 2.11 has it: no SymInts, stop None
        num_symints_saved_for_bw = 0
        tensors_saved_for_backwards_slice = slice(1, None)

    monkeypatch.setattr(saved_layouts, "_fw_metadata", lambda: Meta)
    assert saved_layouts.saved_slice(fw, None) == (1, 4, 0)
    Meta.num_symints_saved_for_bw, Meta.tensors_saved_for_backwards_slice = 1, slice(1, -1)
    assert saved_layouts.saved_slice(fw, None) == (1, 3, 1)
