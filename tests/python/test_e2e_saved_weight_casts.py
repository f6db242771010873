"""A training forward's autocast weight casts share kernels on CUDA, without a GPU (horizontal
fusion counting values returned through views as held to the end: codegen/passes/
horizontal_fusion.h, FusionOptions::returned_views_held).

Under bf16 autocast every linear's weight is cast in the forward and the cast is saved for the
backward as its `t` view. Horizontal fusion's hoisting limit used to count those casts as made
early and held (only directly returned values were exempt), so each kept a kernel of its own:
T5's forward launched 64 single-cast kernels per step. A stack of same-shaped bias-free linears
(T5's q/k/v/o) under CPU autocast, its forward graph captured on the CPU and compiled by the real
daemon for an H100 target: with the default, the casts share one kernel; with
TCCD_DISABLE_PASSES=horizontal-returned-views, one kernel each (the old plan). The CPU e2e
training step checks the merged kernels' results against eager.
"""

from __future__ import annotations

import os
import shutil

import pytest
import torch
import torch.nn as nn

import tccd
from conftest import TCCD_BINARY, Daemon, short_tempdir
from tccd import serialize
from tccd.serialize import pb
from tccd_testlib import capture_aot_graphs

# 512 x 512 bf16 weights: 512 KiB each, above horizontal fusion's kMaxHoistedBytes (256 KiB).
_D, _LAYERS, _TOKENS = 512, 4, 8
_CAST = "aten::_to_copy.default"


class _Stack(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.layers = nn.ModuleList(nn.Linear(_D, _D, bias=False) for _ in range(_LAYERS))

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


def _step(model):
    def step(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return model(x).float().pow(2).mean()

    return step


def _forward_graph():
    from tccd.backend import _partitioner

    _, partition_fn, decompositions = _partitioner()
    x = torch.randn(_TOKENS, _D)
    graphs = capture_aot_graphs(_step(_Stack()), x, backward=True, partition_fn=partition_fn,
                                decompositions=decompositions)
    (gm,) = [g[1] for g in graphs if g[0] == "forward"]
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


def _cast_kernels(graph, env):
    """The ops of each kernel of `graph`'s H100 plan (from a private daemon with `env`) that
    casts a weight, i.e. holds _to_copy nodes only."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-casts-")
    saved = os.environ.get("TCCD_DISABLE_PASSES")
    os.environ.update(env)
    daemon = Daemon(TCCD_BINARY, root, extra_args=["--compile_in_process"])
    try:
        daemon.start()
        target = pb.Target(device_type=pb.CUDA, cuda_device_name="NVIDIA H100 80GB HBM3",
                           cuda_cc_major=9, cuda_cc_minor=0)
        request = pb.CompileRequest(graph=_to_cuda(graph), target=target, graph_name="forward",
                                    options=serialize.options_proto(None, None),
                                    client=serialize.client_info())
        plan = daemon.stub().Compile(request, timeout=600).manifest.plan
    finally:
        if saved is None:
            os.environ.pop("TCCD_DISABLE_PASSES", None)
        else:
            os.environ["TCCD_DISABLE_PASSES"] = saved
        assert daemon.stop() == 0
        shutil.rmtree(root, ignore_errors=True)
    kernels = []
    for step in plan.steps:
        kind = step.WhichOneof("kind")
        if kind in ("segment", "native"):
            kernels.extend(list(k.ops) for k in getattr(step, kind).kernels if k.ops)
    return [k for k in kernels if set(k) == {_CAST}]


# The input's cast ([8, 512], another shape) keeps a kernel of its own either way. The layers
# here are a few nodes apart (a model's are dozens): horizontal-near-groups, which would merge
# them anyway, is off in both tests.
def test_saved_weight_casts_share_one_kernel():
    casts = _cast_kernels(_forward_graph(), {"TCCD_DISABLE_PASSES": "horizontal-near-groups"})
    assert sorted(len(k) for k in casts) == [1, _LAYERS], casts


def test_the_knob_keeps_one_kernel_per_cast():
    casts = _cast_kernels(_forward_graph(),
                          {"TCCD_DISABLE_PASSES": "horizontal-returned-views,horizontal-near-groups"})
    assert [len(k) for k in casts] == [1] * (_LAYERS + 1), casts


def test_training_matches_eager(daemon_env):
    tccd.reset_compile_stats()
    x = torch.randn(_TOKENS, _D, generator=torch.Generator().manual_seed(1))
    results = []
    for compiled in (False, True):
        model = _Stack()
        step = _step(model)
        loss = (torch.compile(step, backend="tccd", dynamic=False) if compiled else step)(x)
        loss.backward()
        results.append([loss.detach()] + [p.grad for p in model.parameters()])
    for e, g in zip(*results):
        torch.testing.assert_close(g, e, rtol=2e-2, atol=1e-4)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
