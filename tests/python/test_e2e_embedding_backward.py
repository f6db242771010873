"""Embedding gradients as a generated CUDA scatter-add kernel (codegen/passes/
embedding_backward_to_scatter.h), without a GPU.

A small LM with a tied embedding (embedding -> layer norm -> head sharing the embedding's
weight -> cross-entropy), its backward graph captured on the CPU (f32, and under bf16 autocast)
and compiled by the real daemon for an H100 target (as tests/tools/cuda_plan_census.py does):
the plan has no `embedding_dense_backward` extern step but a kernel that fused
`tccd::embedding_scatter_add`; with padding_idx too. It stays ATen's under
torch.use_deterministic_algorithms(True) (the client's CompileOptions.extra), with
scale_grad_by_freq, and on the CPU target. tests/python/test_gpu_embedding_backward.py trains
the same model against eager on a GPU.
"""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from tccd import serialize
from tccd.serialize import pb
from tccd_testlib import capture_aot_graphs

_VOCAB, _HIDDEN, _BATCH, _SEQ = 96, 32, 2, 16
_EXTERN = "aten::embedding_dense_backward.default"
_SCATTER = "tccd::embedding_scatter_add.default"


class TiedLM(nn.Module):
    def __init__(self, padding_idx=None, scale_grad_by_freq=False):
        super().__init__()
        self.embed = nn.Embedding(_VOCAB, _HIDDEN, padding_idx=padding_idx,
                                  scale_grad_by_freq=scale_grad_by_freq)
        self.norm = nn.LayerNorm(_HIDDEN)
        self.head = nn.Linear(_HIDDEN, _VOCAB, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids, targets):
        logits = self.head(self.norm(self.embed(ids)))
        return F.cross_entropy(logits.view(-1, _VOCAB), targets.view(-1))


def _backward_graph(autocast=False, **kwargs):
    from tccd.backend import _partitioner

    torch.manual_seed(0)
    m = TiedLM(**kwargs)
    _, partition_fn, decompositions = _partitioner()
    ids = torch.randint(0, _VOCAB, (_BATCH, _SEQ))
    targets = torch.randint(0, _VOCAB, (_BATCH, _SEQ))

    def step(ids, targets):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            return m(ids, targets)

    graphs = capture_aot_graphs(step, ids, targets, backward=True, partition_fn=partition_fn,
                                decompositions=decompositions)
    (gm,) = [g[1] for g in graphs if g[0] == "backward"]
    graph, _ = serialize.encode_graph(gm)
    return graph


def _to_cuda(graph):
    graph = pb.Graph.FromString(graph.SerializeToString())
    for meta in list(graph.inputs) + [m for n in graph.nodes for m in n.outputs]:
        if meta.device.type == pb.CPU:
            meta.device.type, meta.device.index = pb.CUDA, 0
    for node in graph.nodes:
        for a in list(node.args) + [kw.value for kw in node.kwargs]:
            if a.WhichOneof("kind") == "device" and a.device.type == pb.CPU:
                a.device.type, a.device.index = pb.CUDA, 0
    return graph


def _compile(stub, graph, *, cuda=True, options=None):
    target = (pb.Target(device_type=pb.CUDA, cuda_device_name="NVIDIA H100 80GB HBM3", cuda_cc_major=9,
                        cuda_cc_minor=0) if cuda else serialize.build_target(graph))
    request = pb.CompileRequest(
        graph=_to_cuda(graph) if cuda else graph,
        target=target,
        graph_name="backward",
        options=serialize.options_proto(None, options),
        client=serialize.client_info(),
    )
    return stub.Compile(request, timeout=600).manifest.plan


def _ops(plan):
    """(extern targets, ops fused into kernels) over every step, segments included."""
    externs, fused = [], []
    for step in plan.steps:
        kind = step.WhichOneof("kind")
        if kind == "extern_call":
            externs.append(step.extern_call.target)
        elif kind in ("segment", "native"):
            for k in getattr(step, kind).kernels:
                fused.extend(k.ops)
    return externs, fused


@pytest.mark.parametrize("autocast", [False, True], ids=["f32", "bf16_autocast"])
def test_cuda_plan_scatters_the_embedding_gradient(daemon, autocast):
    graph = _backward_graph(autocast=autocast)
    assert any(n.target == _EXTERN for n in graph.nodes)
    externs, fused = _ops(_compile(daemon.stub(), graph))
    assert _EXTERN not in externs
    assert fused.count(_SCATTER) == 1


def test_padding_idx_is_scattered_too(daemon):
    externs, fused = _ops(_compile(daemon.stub(), _backward_graph(padding_idx=0)))
    assert _EXTERN not in externs and fused.count(_SCATTER) == 1


def test_deterministic_algorithms_keep_atens_kernel(daemon):
    graph = _backward_graph()
    torch.use_deterministic_algorithms(True)
    try:
        options = serialize.options_proto(None, None)
    finally:
        torch.use_deterministic_algorithms(False)
    assert options.extra["deterministic_algorithms"] == "True"
    assert "deterministic_algorithms" not in serialize.options_proto(None, None).extra
    externs, fused = _ops(_compile(daemon.stub(), graph, options=dict(options.extra)))
    assert _EXTERN in externs and _SCATTER not in fused


def test_scale_grad_by_freq_and_the_cpu_keep_atens_kernel(daemon):
    externs, fused = _ops(_compile(daemon.stub(), _backward_graph(scale_grad_by_freq=True)))
    assert _EXTERN in externs and _SCATTER not in fused
    externs, fused = _ops(_compile(daemon.stub(), _backward_graph(), cuda=False))
    assert _EXTERN in externs and _SCATTER not in fused
