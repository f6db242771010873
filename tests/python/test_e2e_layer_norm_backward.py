"""A transformer norm's backward on CUDA, without a GPU: the parameter-gradient column sums read
the bf16 matmul gradient the f32 one was cast from (layer-norm-param-grad-split with
layer-norm-grad-narrow-reads, codegen/passes/layer_norm_param_grad_split.h), and the compiled
graph matches eager.

A pre-norm residual block (x + fc2(norm(x + fc1(x)))) under bf16 autocast, its backward graph
captured on the CPU and compiled by the real daemon for an H100 target (as
tests/tools/cuda_plan_census.py does). Plan checks: with the default, the norm's row kernel
neither computes g * xhat nor has a pointwise kernel write xhat for it (the column kernel
recomputes both from bf16 g, f32 x and the statistics); with TCCD_DISABLE_PASSES=
layer-norm-grad-narrow-reads, the old plan (a `sub, mul` kernel and a `mul` in the row kernel).
Numerics: the daemon's last graph IR (TCCD_DUMP_DIR, every CUDA rewrite applied) evaluated op by
op with ATen on the CPU (tests/tools/ir_equivalence.py) against the captured graph run eagerly,
on the same inputs. The kernels themselves are the GPU tests' job.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
from pathlib import Path

import pytest
import torch
import torch.nn as nn

from conftest import TCCD_BINARY, Daemon, short_tempdir
from tccd import serialize
from tccd.serialize import pb
from tccd_testlib import capture_aot_graphs

# 1024 rows of 64: the split's B = 4 (A = 256), as ViT's 12608 rows of 768 get B = 4.
_BATCH, _SEQ, _D = 2, 512, 64
_LNB = "aten::native_layer_norm_backward.default"


def _ir_equivalence():
    path = Path(__file__).resolve().parents[1] / "tools" / "ir_equivalence.py"
    spec = importlib.util.spec_from_file_location("ir_equivalence", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Block(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc1, self.norm, self.fc2 = nn.Linear(_D, _D), nn.LayerNorm(_D), nn.Linear(_D, _D)

    def forward(self, x):
        h = x + self.fc1(x)  # f32 residual + bf16 matmul: the norm's input is f32
        return h + self.fc2(self.norm(h))


def _backward_graph():
    from tccd.backend import _partitioner

    block = _Block()
    _, partition_fn, decompositions = _partitioner()
    x = torch.randn(_BATCH, _SEQ, _D, requires_grad=True)

    def step(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return block(x).float().pow(2).mean()

    graphs = capture_aot_graphs(step, x, backward=True, partition_fn=partition_fn,
                                decompositions=decompositions)
    (gm,) = [g[1] for g in graphs if g[0] == "backward"]
    graph, _ = serialize.encode_graph(gm)
    return gm, graph


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


def _compile(graph, env):
    """The plan of `graph` for an H100 from a private daemon with `env`, and its dump dir."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-lnb-")
    dump = os.path.join(root, "dump")
    os.makedirs(dump)
    saved = {k: os.environ.get(k) for k in ("TCCD_DUMP_DIR", "TCCD_DISABLE_PASSES")}
    os.environ["TCCD_DUMP_DIR"] = dump
    for k, v in env.items():
        os.environ[k] = v
    daemon = Daemon(TCCD_BINARY, root, extra_args=["--compile_in_process"])
    try:
        daemon.start()
        target = pb.Target(device_type=pb.CUDA, cuda_device_name="NVIDIA H100 80GB HBM3",
                           cuda_cc_major=9, cuda_cc_minor=0)
        request = pb.CompileRequest(graph=_to_cuda(graph), target=target, graph_name="backward",
                                    options=serialize.options_proto(None, None),
                                    client=serialize.client_info())
        plan = daemon.stub().Compile(request, timeout=600).manifest.plan
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        assert daemon.stop() == 0
    return plan, root


def _kernels(plan):
    """The ops each generated kernel fused, over every step (segments included)."""
    out = []
    for step in plan.steps:
        kind = step.WhichOneof("kind")
        if kind in ("segment", "native"):
            out.extend([list(k.ops) for k in getattr(step, kind).kernels if k.ops])
    return out


def _short(ops):
    return [o.split("::")[-1].split(".")[0] for o in ops]


def _last_graph_ir(dump):
    files = sorted(glob.glob(os.path.join(dump, "*.ir")))
    assert files, f"no graph IR dumped in {dump}"
    return open(files[-1]).read()


def test_norm_parameter_gradients_recompute_from_the_bf16_gradient():
    gm, graph = _backward_graph()
    assert sum(n.target == _LNB for n in graph.nodes) == 1
    plan, root = _compile(graph, {})
    try:
        kernels = [_short(k) for k in _kernels(plan)]
        rows = [k for k in kernels if "native_layer_norm_backward" in k]
        assert len(rows) == 1, kernels
        # The row kernel: the cast of g, the norm's input gradient, the residual add (and casts);
        # no g * xhat for the column sums.
        assert "mul" not in rows[0], rows[0]
        assert ["sub", "mul"] not in kernels, kernels
        # One column kernel recomputes xhat and g * xhat from its own loads.
        columns = [k for k in kernels if "sum" in k and "sub" in k]
        assert len(columns) == 1 and "_to_copy" in columns[0], kernels

        # The rewritten graph computes what eager does.
        ir = _ir_equivalence()
        text = _last_graph_ir(os.path.join(root, "dump"))
        inputs = ir.random_inputs(text)
        names = [p.split(":")[0].strip()[1:] for p in ir.params(text)]
        expected = gm(*[inputs[n].clone() for n in names])
        got = ir.run(text, inputs)
        expected = [e for e in expected if isinstance(e, torch.Tensor)]
        got = [g for g in got if isinstance(g, torch.Tensor)]
        assert len(got) == len(expected)
        for e, g in zip(expected, got):
            assert e.shape == g.shape and e.dtype == g.dtype
            # f32 sums in another order; 16-bit outputs their rounding.
            tolerance = 1e-5 if e.dtype == torch.float32 else 1e-2
            e, g = e.double(), g.double()
            rel = float((e - g).norm() / max(float(e.norm()), 1e-30))
            assert rel < tolerance, (tuple(e.shape), rel)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_the_knob_keeps_the_old_decision():
    _, graph = _backward_graph()
    plan, root = _compile(graph, {"TCCD_DISABLE_PASSES": "layer-norm-grad-narrow-reads"})
    shutil.rmtree(root, ignore_errors=True)
    kernels = [_short(k) for k in _kernels(plan)]
    rows = [k for k in kernels if "native_layer_norm_backward" in k]
    assert len(rows) == 1 and "mul" in rows[0], kernels
    assert ["sub", "mul"] in kernels, kernels
