"""Padded user outputs (TCCD_PADDED_OUTPUTS=1; client/tccd/padded_outputs.py,
codegen/passes/padded_output_views.h), without a GPU.

An LM head with an odd vocabulary, its AOT graphs captured on the CPU under bf16 autocast and
compiled by the real daemon for an H100 target (as cuda_plan_census.py does): with the logits
named free the plan returns them as the strided view of the padded product (row stride a
multiple of 8, no copy anywhere in the plan); without, as before, the contiguous copy. And the
client names as free exactly the outputs AOTAutograd returns as they are.
tests/python/test_gpu_padded_outputs.py runs the same head against eager on a GPU.
"""

import pytest
import torch
import torch.nn as nn

from tccd import padded_outputs, saved_layouts, serialize
from tccd.serialize import pb
from tccd_testlib import capture_aot_graphs

# [tokens, hidden] x [hidden, vocabulary] must reach kMinPaddedMatmulWork (2^32) to be padded.
_BATCH, _SEQ, _HIDDEN, _VOCAB = 2, 128, 512, 40001
_PADDED = 40008


class _Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(_HIDDEN)
        self.proj = nn.Linear(_HIDDEN, _VOCAB, bias=False)

    def forward(self, h):
        return self.proj(self.norm(h))


@pytest.fixture(scope="module")
def forward_graph():
    from tccd.backend import _partitioner

    torch.manual_seed(0)
    m = _Head()
    _, partition_fn, decompositions = _partitioner()

    def step(h):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return m(h)

    graphs = capture_aot_graphs(step, torch.randn(_BATCH, _SEQ, _HIDDEN), backward=True,
                                partition_fn=partition_fn, decompositions=decompositions)
    assert [g[0] for g in graphs] == ["forward", "backward"]
    graph, _ = serialize.encode_graph(graphs[0][1])
    for meta in list(graph.inputs) + [m for n in graph.nodes for m in n.outputs]:
        if meta.device.type == pb.CPU:
            meta.device.type, meta.device.index = pb.CUDA, 0
    for node in graph.nodes:  # device arguments (the autocast casts' _to_copy)
        for a in list(node.args) + [kw.value for kw in node.kwargs]:
            if a.WhichOneof("kind") == "device" and a.device.type == pb.CPU:
                a.device.type, a.device.index = pb.CUDA, 0
    return graph


def _compile(stub, graph, free):
    options = {saved_layouts.OPTION: saved_layouts.option_value(free)} if free else None
    request = pb.CompileRequest(
        graph=graph,
        target=pb.Target(device_type=pb.CUDA, cuda_device_name="NVIDIA H100 80GB HBM3", cuda_cc_major=9,
                         cuda_cc_minor=0),
        graph_name="forward",
        options=serialize.options_proto(None, options),
        client=serialize.client_info(),
    )
    return stub.Compile(request, timeout=600).manifest.plan


def _logits_meta(plan):
    meta = plan.values[plan.outputs[0].ref.node]
    return [d.value for d in meta.sizes], [d.value for d in meta.strides]


def _clones(plan) -> int:
    n = 0
    for step in plan.steps:
        kind = step.WhichOneof("kind")
        if kind == "extern_call":
            n += step.extern_call.target == "aten::clone.default"
        elif kind in ("segment", "native_call"):
            n += sum(op == "aten::clone.default" for k in getattr(step, kind).kernels for op in k.ops)
    return n


def test_free_logits_are_the_padded_products_view_without_a_copy(daemon, forward_graph):
    plan = _compile(daemon.stub(), forward_graph, [0])
    assert _logits_meta(plan) == ([_BATCH, _SEQ, _VOCAB], [_SEQ * _PADDED, _PADDED, 1])
    assert _clones(plan) == 0


def test_promised_logits_keep_the_contiguous_copy(daemon, forward_graph):
    plan = _compile(daemon.stub(), forward_graph, [])
    assert _logits_meta(plan) == ([_BATCH, _SEQ, _VOCAB], [_SEQ * _VOCAB, _VOCAB, 1])
    assert _clones(plan) == 1


def test_client_frees_only_outputs_returned_as_they_are():
    """y is returned as it is; z is the base of an output AOTAutograd regenerates (z.view),
    z.view and x.t() are aliases: only y is free."""
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.aot_autograd import make_boxed_func

    seen = []

    def fw_compiler(gm, example_inputs):
        seen.append(padded_outputs.free_user_outputs(gm, devices=("cpu",)))
        return make_boxed_func(gm.forward)

    def f(x, w):
        z = x * 2
        return x @ w, z, z.view(-1), x.t()

    torch._dynamo.reset()
    backend = aot_autograd(fw_compiler=fw_compiler, bw_compiler=fw_compiler)
    x = torch.randn(8, 16, requires_grad=True)
    w = torch.randn(16, 4, requires_grad=True)
    torch.compile(f, backend=backend, dynamic=False)(x, w)
    assert seen and seen[0] == [0]


def test_graphs_with_convolutions_free_no_user_output():
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.aot_autograd import make_boxed_func

    seen = []

    def fw_compiler(gm, example_inputs):
        seen.append(padded_outputs.free_user_outputs(gm, devices=("cpu",)))
        return make_boxed_func(gm.forward)

    conv = nn.Conv2d(3, 4, 3)
    torch._dynamo.reset()
    backend = aot_autograd(fw_compiler=fw_compiler, bw_compiler=fw_compiler)
    torch.compile(lambda x: conv(x).flatten(1), backend=backend, dynamic=False)(torch.randn(2, 3, 8, 8))
    assert seen and seen[0] == []


def test_graphs_without_an_odd_matmul_free_nothing():
    """No product whose rows the daemon would pad: the request (and its key) stays as it was."""
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.aot_autograd import make_boxed_func

    seen = []

    def fw_compiler(gm, example_inputs):
        seen.append(padded_outputs.free_user_outputs(gm, devices=("cpu",)))
        return make_boxed_func(gm.forward)

    torch._dynamo.reset()
    backend = aot_autograd(fw_compiler=fw_compiler, bw_compiler=fw_compiler)
    x = torch.randn(8, 16, requires_grad=True)
    w = torch.randn(16, 8, requires_grad=True)
    torch.compile(lambda x, w: (x @ w).relu(), backend=backend, dynamic=False)(x, w)
    assert seen and seen[0] == []
