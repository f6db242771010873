"""The dynamic-shapes bench's graphs (symbolic sizes), compiled for CUDA without a GPU.

Captures the forward and backward AOT graphs of deploy/dynamic_shapes_bench.py's block under
torch.compile(dynamic=True) on the CPU, retargets every tensor to CUDA, compiles each with a
running daemon for an H100 target (NVRTC only) and prints per graph the plan's native steps
(kernels and gemms with run-time sizes) and its extern steps by target, as the GPU bench's
`--compare-static` counts them. The CPU trace takes the same decompositions as the CUDA one for
this model (matmul attention, layer norm, GELU, embeddings).

  TCCD_ADDRESS=unix:/path/tccd.sock PYTHONPATH=client:tests/python:deploy \\
      python tests/tools/dynamic_plan_census.py [--d 256] [--dtype bfloat16] [--kernels] \\
          [--dump-plans DIR]
"""

import argparse
import collections
import os
import sys

import torch

from tccd import channel, config, serialize
from tccd.serialize import pb


def _to_cuda(value) -> None:
    kind = value.WhichOneof("kind")
    if kind == "device" and value.device.type == pb.CPU:
        value.device.type, value.device.index = pb.CUDA, 0
    elif kind == "list":
        for item in value.list.items:
            _to_cuda(item)


def capture(model, ids, dynamic=True):
    """[(kind, graph module, example inputs)] of model(ids) under torch.compile(dynamic=dynamic),
    backward too."""
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.aot_autograd import make_boxed_func

    from tccd.backend import _partitioner

    _, partition_fn, decompositions = _partitioner()
    graphs = []

    def recorder(kind):
        def compiler(gm, example_inputs):
            graphs.append((kind, gm, list(example_inputs)))
            return make_boxed_func(gm.forward)

        return compiler

    backend = aot_autograd(fw_compiler=recorder("forward"), bw_compiler=recorder("backward"),
                           inference_compiler=recorder("inference"), partition_fn=partition_fn,
                           decompositions=decompositions)
    torch._dynamo.reset()
    out = torch.compile(model, backend=backend, dynamic=dynamic)(ids)
    out.float().pow(2).mean().backward()
    return graphs


H100 = dict(device_type=pb.CUDA, cuda_device_name="NVIDIA H100 80GB HBM3", cuda_cc_major=9, cuda_cc_minor=0)


def compile_for_h100(stub, graphs):
    """[(kind, request graph, plan)] of the captured graphs compiled for an H100."""
    out = []
    for kind, gm, example_inputs in graphs:
        request, _ = serialize.encode_request(gm, example_inputs, graph_name=kind)
        graph = request.graph
        for meta in list(graph.inputs) + [m for n in graph.nodes for m in n.outputs]:
            if meta.device.type == pb.CPU:
                meta.device.type, meta.device.index = pb.CUDA, 0
        for node in graph.nodes:
            for a in node.args:
                _to_cuda(a)
            for kw in node.kwargs:
                _to_cuda(kw.value)
        request.target.CopyFrom(pb.Target(**H100))
        out.append((kind, graph, stub.Compile(request, timeout=600).manifest.plan))
    return out


def steps(plan):
    """(native kernel infos, Counter of extern targets) of a plan."""
    counts, native = collections.Counter(), []
    for step in plan.steps:
        which = step.WhichOneof("kind")
        if which == "extern_call":
            counts[step.extern_call.target] += 1
        elif which == "native":
            native.extend(step.native.kernels)
        elif which == "segment":
            native.extend(step.segment.kernels)
        else:
            counts[f"<{which}>"] += 1
    return native, counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--d", type=int, default=256)
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--kernels", action="store_true", help="list every native step's kernel")
    parser.add_argument("--dump-plans", default=None, help="write each plan as text into this folder")
    parser.add_argument("--static", action="store_true",
                        help="capture with dynamic=False (the static plans the bench compares against)")
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "deploy"))
    import dynamic_shapes_bench

    model = dynamic_shapes_bench.build(args.d, "cpu", args.dtype)
    ids = torch.randint(0, 1000, (16, 128), generator=torch.Generator().manual_seed(0))
    stub = channel.connect(config.get())
    for number, (kind, graph, plan) in enumerate(compile_for_h100(stub, capture(model, ids, dynamic=not args.static))):
        if args.dump_plans:
            from google.protobuf import text_format

            os.makedirs(args.dump_plans, exist_ok=True)
            with open(f"{args.dump_plans}/dynamic_{number}_{kind}.plan.txt", "w") as f:
                f.write(text_format.MessageToString(plan))
        native, counts = steps(plan)
        print(f"== {kind}: {len(graph.nodes)} nodes, {len(plan.steps)} steps, "
              f"{len(plan.steps) - sum(counts.values())} native ({len(native)} kernels and gemms), "
              f"{sum(counts.values())} extern")
        for name, n in counts.most_common():
            print(f"{n:6d} {name}")
        if args.kernels:
            for k in native:
                print(f"    {k.name:14s} {k.kind:22s} ops={','.join(k.ops)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
