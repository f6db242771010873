"""Which ops of a training graph stay ATen steps on CUDA, without a GPU.

Captures the AOT forward/backward graphs of a model on the CPU, retargets every tensor (and
device argument) to CUDA, compiles them with a running daemon for an H100 target (NVRTC only, no
driver needed) and prints per graph the generated kernels and the extern steps by target.

  TCCD_ADDRESS=unix:/path/tccd.sock PYTHONPATH=client:tests/python \\
      python tests/tools/cuda_plan_census.py [--kernels] [--cpu] [--dump-plans DIR] \\
          tests/tools/census_models.py llama

--dump-plans DIR writes each graph's tccd.v1.Plan in protobuf text format to
DIR/<model>_<n>_<kind>.plan.txt, to diff the plans two daemon builds produce (a refactor of the
back half must leave them byte-identical). --cpu compiles for this machine's CPU instead (the
graphs as captured, no retargeting).

--padded-outputs: a forward's user outputs are sent free to take the daemon's strides, as the
client does with TCCD_PADDED_OUTPUTS=1.

--entries: also count the plan's CUDA kernels by the entry point they were compiled with
(`_contig`: vectorised, operands dense or in a fixed layout; `_tile`: a tiled kernel,
cuda_host/tile_kernels.h; `_strided`: one element per thread
with run-time strides; entry_points.h) and by kind (pw, col, red, idx). Needs a daemon started
with TCCD_DUMP_DIR=DIR (compiling in process, so that the dump is this graph's) and
CENSUS_DAEMON_DUMP_DIR=DIR here: the counts come from the dumped kernels.cu.

--dump-graphs DIR writes each captured graph as readable Python (GraphModule.print_readable(),
no colour) to DIR/<model>_<n>_<kind>.py: what census_models._traced_graphs reads back, so that
graphs traced on the GPU machine (CENSUS_DEVICE=cuda: CUDA autocast's casts, which CPU autocast
does not make) can be censused on a machine without one. --graphs-only: only that, no daemon
needed (nothing is compiled).

--dump-requests DIR writes each graph's CompileRequest as sent (binary protobuf) to
DIR/<model>_<n>_<kind>.request.pb: `build/bin/tccd_lower_bench DIR/*.request.pb` then times the
daemon's stages before machine code (partition, kernel IR, schedule) on them, without a daemon.
--requests-only: write them and compile nothing (no daemon; a backward's saved inputs keep their
traced strides instead of the forward plan's).

--memory: also the static peak memory of every plan (tests/tools/plan_memory.py: the bytes it
allocates, step by step, views sharing their base's, a segment's outputs allocated before its call
and its workspace for the call; the caller's inputs apart, but a backward's saved activations,
which the client releases to the plan (TCCD_RELEASED_INPUTS), are the plan's until their last
reader); prints the peak, its step and what is
live there, largest first. The *_infer models of census_models.py are the zoo's inference graphs.

CPU capture differs from a real CUDA trace where ops decompose per device (attention on the CPU
is the math path, for example); casts, copies, views and index ops trace alike.
"""

import collections
import functools
import math
import importlib.util
import os
import shutil
import sys

from tccd import channel, config, released_inputs, saved_layouts, serialize
from tccd.serialize import pb
from tccd_testlib import capture_aot_graphs


def _to_cuda(value) -> None:
    kind = value.WhichOneof("kind")
    if kind == "device" and value.device.type == pb.CPU:
        value.device.type, value.device.index = pb.CUDA, 0
    elif kind == "list":
        for item in value.list.items:
            _to_cuda(item)


# --kernels: also list every generated kernel with the ops it fused (to map profiler names back).
KERNELS = False
MEMORY = False
# --cpu: compile for this machine's CPU (serialize.build_target), not for an H100.
CPU = False
# --layouts: print each 4-D convolution operand's layout (NCHW / NHWC) as the plan declares it,
# and the layout copies (clone to contiguous) the plan added.
LAYOUTS = False
# --no-saved-layout: the forward's saved tensors keep their traced strides (as before the
# channels-last pass; the client's TCCD_SAVED_LAYOUT=0).
SAVED_LAYOUT = True
# --padded-outputs: a forward's user outputs free to take the daemon's strides (the client's
# TCCD_PADDED_OUTPUTS=1: GPT-2's logits as the strided view of the padded vocabulary product).
PADDED_OUTPUTS = False
# --dump-requests DIR: write each graph's CompileRequest (binary protobuf, as sent) to
# DIR/<model>_<n>_<kind>.request.pb, for tccd_lower_bench (the daemon's stages without NVRTC).
REQUEST_DIR = None
# --requests-only (with --dump-requests): write the requests, compile nothing (no daemon needed;
# a backward's saved inputs then keep their traced strides, not the forward plan's).
REQUESTS_ONLY = False
# --entries: count kernels by compiled entry point (see the module docstring).
ENTRIES = False
# --dump-plans DIR: write every plan as text (see the module docstring); MODEL names the files.
DUMP_DIR = None
# --dump-graphs DIR: write every captured graph as readable Python (see the module docstring);
# --graphs-only: and stop there.
GRAPH_DIR = None
GRAPHS_ONLY = False
MODEL = ""


def _saved_range(graphs, number):
    """(start, stop, free outputs) of a forward's saved-tensor outputs, from the backward graph
    that follows it: its non-tangent placeholders are the saved values, the forward's last
    outputs (static graphs save no SymInts). None for other graphs and for graphs without a 2-D
    convolution (or, with TCCD_SAVED_PADDED=1, a matmul with odd rows)."""
    kind, gm, _ = graphs[number]
    if kind != "forward" or number + 1 >= len(graphs) or graphs[number + 1][0] != "backward":
        return None
    import torch

    # As the client with TCCD_SAVED_PADDED=1: a padded vocabulary product's graph too.
    odd = config.get().saved_padded and any(
        len(n.meta["val"].shape) == 2 and n.meta["val"].shape[1] % 8 != 0
        for t in (torch.ops.aten.mm.default, torch.ops.aten.addmm.default)
        for n in gm.graph.find_nodes(op="call_function", target=t) if "val" in n.meta)
    if not odd and not any(True for _ in gm.graph.find_nodes(op="call_function", target=torch.ops.aten.convolution.default)):
        return None
    bw = graphs[number + 1][1]
    num_saved = sum(1 for n in bw.graph.find_nodes(op="placeholder") if not n.name.startswith("tangents"))
    outputs = gm.graph.find_nodes(op="output")[0].args[0]
    start, stop = len(outputs) - num_saved, len(outputs)
    return start, stop, saved_layouts.free_outputs(bw, start, stop, 0)


def _user_outputs(graphs, number):
    """--padded-outputs: a forward's user outputs (those before its saved tensors, which the
    following backward's non-tangent placeholders count) that no other output aliases; the
    census graphs mutate no inputs. A capture has no AOTAutograd metadata, so aliasing is read
    from the graph: an output that views another output is left out, and so is that base (a
    view of an intermediate returned alone is what AOTAutograd calls non_alias when it came
    from _unsafe_view, as transformers' LM heads do: padded_outputs.py frees those)."""
    kind, gm, _ = graphs[number]
    # Backwards run in the reverse order of their forwards (a graph break: forward 0, forward 1,
    # backward 1, backward 0).
    pending, backward_of = [], {}
    for i, (k, _, _) in enumerate(graphs):
        if k == "forward":
            pending.append(i)
        elif k == "backward" and pending:
            backward_of[pending.pop()] = i
    if not (kind == "inference" or (kind == "forward" and number in backward_of)):
        return []
    import torch

    if any(True for _ in gm.graph.find_nodes(op="call_function", target=torch.ops.aten.convolution.default)):
        return []
    outputs = gm.graph.find_nodes(op="output")[0].args[0]
    if kind == "inference":  # an inference graph saves nothing: every output is a user output
        num_saved = 0
    else:
        bw = graphs[backward_of[number]][1]
        num_saved = sum(1 for n in bw.graph.find_nodes(op="placeholder") if not n.name.startswith("tangents"))
    user = outputs[: len(outputs) - num_saved]

    def is_view(node):
        return isinstance(getattr(node, "target", None), torch._ops.OpOverload) and node.target.is_view

    returned = set(outputs)
    aliased = {n for n in user if is_view(n) and n.args[0] in returned}
    bases = {n.args[0] for n in aliased}
    return [i for i, n in enumerate(user)
            if isinstance(n, torch.fx.Node) and n not in aliased and n not in bases
            and isinstance(n.meta.get("val"), torch.Tensor) and n.meta["val"].dim() >= 2]


def print_layouts(graph, plan) -> None:
    """Per convolution step: the declared layout of its input, weight and output."""
    def layout(value_id):
        meta = plan.values[value_id]
        sizes = [d.value for d in meta.sizes]
        strides = [d.value for d in meta.strides]
        if len(sizes) != 4:
            return "-"
        c, h, w = sizes[1], sizes[2], sizes[3]
        nhwc = [h * w * c, 1, w * c, c]
        nchw = [c * h * w, h * w, w, 1]
        if strides == nhwc and strides != nchw:
            return "NHWC"
        return "NCHW" if strides == nchw else f"{strides}"

    counts = collections.Counter()
    for step in plan.steps:
        if step.WhichOneof("kind") != "extern_call":
            continue
        target = step.extern_call.target
        if target not in ("aten::convolution.default", "aten::convolution_backward.default"):
            continue
        args = [a.ref.node for a in step.extern_call.args[:3] if a.HasField("ref")]
        outs = [layout(o) for o in step.outputs if o >= 0]
        counts[(target.split("::")[1], tuple(layout(a) for a in args), tuple(outs))] += 1
    for (target, ins, outs), n in sorted(counts.items()):
        print(f"   {n:4d} x {target}: operands {'/'.join(ins)} -> {'/'.join(outs)}")


def entry_counts(dump_dir):
    """{(kind, entry): kernels} of the kernels.cu a daemon dumped into dump_dir, or None."""
    import re

    path = os.path.join(dump_dir or "", "kernels.cu")
    if not dump_dir or not os.path.exists(path):
        return None
    source = open(path).read()
    names = re.findall(r"__global__ void __launch_bounds__\(\d+\)(?: __cluster_dims__\([^)]*\))?\n(tccd_\w+?)_(contig|strided|tile|dw)\(", source)
    return collections.Counter((name.split("_")[1], entry) for name, entry in names)


def print_entries(counts) -> None:
    if counts is None:
        print("   entries: unknown (start the daemon with TCCD_DUMP_DIR=DIR, set CENSUS_DAEMON_DUMP_DIR=DIR)")
        return
    for entry in ("contig", "strided", "tile", "dw"):
        kinds = {k: n for (k, e), n in sorted(counts.items()) if e == entry}
        detail = ", ".join(f"{k} {n}" for k, n in kinds.items())
        print(f"   entries: {entry:7s} {sum(kinds.values()):4d} ({detail})")


def census(capture) -> None:
    stub = None if GRAPHS_ONLY or REQUESTS_ONLY else channel.connect(config.get())
    target = pb.Target(device_type=pb.CUDA, cuda_device_name="NVIDIA H100 80GB HBM3",
                       cuda_cc_major=9, cuda_cc_minor=0)
    from tccd.backend import _partitioner

    _, partition_fn, decompositions = _partitioner()  # the graphs tccd would receive (TCCD_PARTITIONER)
    graphs = capture(functools.partial(capture_aot_graphs, partition_fn=partition_fn, decompositions=decompositions))
    saved = None  # the forward plan's strides of its saved tensors (saved_layouts.py)
    if GRAPH_DIR:
        os.makedirs(GRAPH_DIR, exist_ok=True)
        for number, (kind, gm, _) in enumerate(graphs):
            with open(f"{GRAPH_DIR}/{MODEL}_{number}_{kind}.py", "w") as f:
                f.write(gm.print_readable(print_output=False, colored=False))
        if GRAPHS_ONLY:
            print(f"{len(graphs)} graphs written to {GRAPH_DIR}")
            return
    for number, (kind, gm, _) in enumerate(graphs):
        graph, _ = serialize.encode_graph(gm)
        options = serialize.options_proto(None, None)
        free = _saved_range(graphs, number) if SAVED_LAYOUT and not CPU else None
        if free is not None:
            # As the client does for CUDA graphs with convolutions: the saved tensors' strides
            # are the daemon's to choose, and the backward is compiled for the chosen ones.
            options.extra[saved_layouts.OPTION] = saved_layouts.option_value(free[2])
            print(f"   (forward: {len(free[2])} of {free[1] - free[0]} saved outputs free to take the chosen layout)")
        padded = _user_outputs(graphs, number) if PADDED_OUTPUTS and not CPU else []
        if padded:
            # As the client does with TCCD_PADDED_OUTPUTS=1 (padded_outputs.py).
            free_all = sorted(set(padded) | set(free[2] if free is not None else []))
            options.extra[saved_layouts.OPTION] = saved_layouts.option_value(free_all)
            print(f"   (forward: user outputs {padded} free to take padded strides)")
        released = []
        if kind == "backward" and config.get().released_inputs and not CPU:
            # The graph is retargeted to CUDA below: its saved activations as the client names them.
            released = released_inputs.released(gm, devices=("cpu", "cuda"))
        if released:
            # As the client does (TCCD_RELEASED_INPUTS): the saved activations are the plan's.
            options.extra[released_inputs.OPTION] = saved_layouts.option_value(released)
            print(f"   (backward: {len(released)} saved inputs released to the plan)")
        if kind == "backward" and saved is not None:
            changed = saved_layouts.restride_inputs(graph, saved, 0)
            print(f"   (backward: {changed} saved inputs take the forward plan's strides)")
        if CPU:
            target = serialize.build_target(graph)
        for meta in list(graph.inputs) + [m for n in graph.nodes for m in n.outputs]:
            if meta.device.type == pb.CPU and not CPU:
                meta.device.type, meta.device.index = pb.CUDA, 0
        for node in graph.nodes if not CPU else []:
            for a in node.args:
                _to_cuda(a)
            for kw in node.kwargs:
                _to_cuda(kw.value)
        request = pb.CompileRequest(graph=graph, target=target, graph_name=kind,
                                    options=options, client=serialize.client_info())
        if REQUEST_DIR:
            os.makedirs(REQUEST_DIR, exist_ok=True)
            with open(f"{REQUEST_DIR}/{MODEL}_{number}_{kind}.request.pb", "wb") as f:
                f.write(request.SerializeToString())
            if REQUESTS_ONLY:
                print(f"== {kind}: {len(graph.nodes)} nodes, request written")
                continue
        plan = stub.Compile(request, timeout=600).manifest.plan
        if free is not None:
            saved = saved_layouts.output_strides(plan)[free[0]:free[1]]
        if LAYOUTS:
            print_layouts(graph, plan)
        entries = entry_counts(os.environ.get("CENSUS_DAEMON_DUMP_DIR")) if ENTRIES else None
        if DUMP_DIR:
            from google.protobuf import text_format

            with open(f"{DUMP_DIR}/{MODEL}_{number}_{kind}.plan.txt", "w") as f:
                f.write(text_format.MessageToString(plan))
            # A daemon started with TCCD_DUMP_DIR=$CENSUS_DAEMON_DUMP_DIR (compile-in-process)
            # overwrites its dumps per compile: keep each graph's (kernels.cu maps the content
            # names a profiler shows back to kernel_N.txt).
            daemon_dump = os.environ.get("CENSUS_DAEMON_DUMP_DIR")
            if daemon_dump and os.path.isdir(daemon_dump):
                keep = f"{DUMP_DIR}/{MODEL}_{number}_{kind}.dump"
                shutil.rmtree(keep, ignore_errors=True)
                shutil.copytree(daemon_dump, keep)
                for name in os.listdir(daemon_dump):
                    os.remove(os.path.join(daemon_dump, name))
        counts = collections.Counter()
        for step in plan.steps:
            which = step.WhichOneof("kind")
            if which == "extern_call":
                counts[step.extern_call.target] += 1
            elif which == "segment":
                counts["<kernels and gemms in segments>"] += len(step.segment.kernels)
            else:
                counts[f"<{which}>"] += 1
        print(f"== {kind}: {len(graph.nodes)} nodes")
        for name, n in counts.most_common():
            print(f"{n:6d} {name}")
        if ENTRIES:
            print_entries(entries)
        if MEMORY:
            memory_profile(plan, released)
        if KERNELS:
            for step in plan.steps:
                for k in step.segment.kernels if step.WhichOneof("kind") == "segment" else []:
                    print(f"    {k.name:14s} {k.kind:22s} grid={list(k.grid)} block={list(k.block)} "
                          f"ops={','.join(k.ops)}")


def memory_profile(plan, released=()) -> None:
    """Static peak memory of `plan` (tests/tools/plan_memory.py); `released`: the inputs the
    caller gives up (a backward's saved activations, released_inputs.py)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import plan_memory

    profile = plan_memory.profile(plan, pb, released)
    print("   memory: " + plan_memory.describe(plan, pb, profile).replace("\n", "\n   "))


if __name__ == "__main__":
    if "--memory" in sys.argv:
        sys.argv.remove("--memory")
        MEMORY = True
    if "--kernels" in sys.argv:
        sys.argv.remove("--kernels")
        KERNELS = True
    if "--entries" in sys.argv:
        sys.argv.remove("--entries")
        ENTRIES = True
    if "--cpu" in sys.argv:
        sys.argv.remove("--cpu")
        CPU = True
    if "--layouts" in sys.argv:
        sys.argv.remove("--layouts")
        LAYOUTS = True
    if "--padded-outputs" in sys.argv:
        sys.argv.remove("--padded-outputs")
        PADDED_OUTPUTS = True
    if "--no-saved-layout" in sys.argv:
        sys.argv.remove("--no-saved-layout")
        SAVED_LAYOUT = False
    if "--dump-plans" in sys.argv:
        at = sys.argv.index("--dump-plans")
        DUMP_DIR = sys.argv[at + 1]
        del sys.argv[at : at + 2]
    if "--dump-requests" in sys.argv:
        at = sys.argv.index("--dump-requests")
        REQUEST_DIR = sys.argv[at + 1]
        del sys.argv[at : at + 2]
    if "--requests-only" in sys.argv:
        sys.argv.remove("--requests-only")
        REQUESTS_ONLY = True
    if "--graphs-only" in sys.argv:
        sys.argv.remove("--graphs-only")
        GRAPHS_ONLY = True
    if "--dump-graphs" in sys.argv:
        at = sys.argv.index("--dump-graphs")
        GRAPH_DIR = sys.argv[at + 1]
        del sys.argv[at : at + 2]
    spec = importlib.util.spec_from_file_location("models", sys.argv[1])
    models = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(models)
    MODEL = sys.argv[2]
    census(getattr(models, sys.argv[2]))
