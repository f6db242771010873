"""Which extern steps of a model's CPU plans the native plan runtime would still run through the
Python callback (`python_steps`), by op, without running the model under tccd.

Captures the AOT forward/backward graphs of a model on the CPU (census_models.py), compiles them
with a running daemon for this machine's CPU (or, with --cuda, retargeted to an H100 as
cuda_plan_census.py does: NVRTC only, no GPU needed) and binds every extern step exactly as
client/tccd/native_plan.py does at load; prints per graph the extern steps bound natively and
those left to Python, by target.

  TCCD_ADDRESS=unix:/path/tccd.sock PYTHONPATH=client:tests/python \\
      python tests/tools/native_extern_census.py [--cuda] [--torch 2.11] tests/tools/census_models.py gpt2 [bert ...]

--torch X.Y classifies the steps as the client would under that torch release instead of the
installed one: the version-dependent rules of native_plan.py (before 2.15 the stable dispatcher
cannot return an undefined Tensor, so an unused Tensor return of an op not known to return only
defined tensors goes through Python). Typed and _out C shims (convolution, addmm, mm, copy_...)
are counted native on every release of the declared range (tccd_plan_torch_abi.h: their symbols
exist from 2.11 on); a release whose libtorch lacks one falls back to the dispatcher at load.

With --cuda, deterministic factories (arange...) count as native without being run (the runtime
computes them at load on the GPU).
"""

import collections
import functools
import importlib.util
import sys

from tccd import channel, config, native_plan, serialize
from tccd.serialize import pb
from tccd_testlib import capture_aot_graphs


def _is_constant_factory(step) -> bool:
    from tccd.runtime import _has_ref, decode_value

    call = step.extern_call
    values = [decode_value(v) for v in call.args] + [decode_value(kv.value) for kv in call.kwargs]
    return call.target in native_plan._CONSTANT_FACTORIES and not _has_ref(values)


def census(name, capture, cuda=False) -> int:
    stub = channel.connect(config.get())
    from tccd.backend import _partitioner

    _, partition_fn, decompositions = _partitioner()  # the graphs tccd would receive (TCCD_PARTITIONER)
    total_python = 0
    for kind, gm, _ in capture(functools.partial(capture_aot_graphs, partition_fn=partition_fn, decompositions=decompositions,
                                                 keep_inference_input_mutations=True)):
        graph, _ = serialize.encode_graph(gm)
        target = serialize.build_target(graph)
        if cuda:
            from cuda_plan_census import _to_cuda

            for meta in list(graph.inputs) + [m for n in graph.nodes for m in n.outputs]:
                if meta.device.type == pb.CPU:
                    meta.device.type, meta.device.index = pb.CUDA, 0
            for node in graph.nodes:
                for a in list(node.args) + [kw.value for kw in node.kwargs]:
                    _to_cuda(a)
            target = pb.Target(device_type=pb.CUDA, cuda_device_name="NVIDIA H100 80GB HBM3",
                               cuda_cc_major=9, cuda_cc_minor=0)
        request = pb.CompileRequest(graph=graph, target=target,
                                    graph_name=kind, options=serialize.options_proto(None, None),
                                    client=serialize.client_info())
        plan = stub.Compile(request, timeout=600).manifest.plan
        native, python = collections.Counter(), collections.Counter()
        # A symbolic plan's SymInt arguments bind by their expression's index in the descriptor
        # (any index classifies the step; the runtime has the real table).
        exprs = {text: i for i, text in enumerate(sorted(_sym_texts(plan)))}
        for step in plan.steps:
            if step.WhichOneof("kind") != "extern_call":
                continue
            target = step.extern_call.target
            bound = "constant" if cuda and _is_constant_factory(step) else native_plan.bind_extern(step, plan, exprs)
            if bound is None:
                why = []  # why it needs Python, as last_compile_stats()'s python_step_reasons say
                native_plan.complete_arguments(step, exprs, why)
                python[f"{target}: {why[0] if why else 'unknown'}"] += 1
            else:
                native[target] += 1
        total_python += sum(python.values())
        print(f"== {name} {kind}: {len(graph.nodes)} nodes, {sum(native.values())} native extern steps, "
              f"{sum(python.values())} python_steps")
        for target, n in python.most_common():
            print(f"{n:6d} python  {target}")
        for target, n in native.most_common():
            print(f"{n:6d} native  {target}")
    return total_python


def _sym_texts(plan) -> set:
    """Every sym_expr text of the plan's extern arguments and outputs."""
    texts = set()

    def walk(value):
        kind = value.WhichOneof("kind")
        if kind == "sym_expr":
            texts.add(value.sym_expr)
        elif kind == "list":
            for item in value.list.items:
                walk(item)

    for step in plan.steps:
        if step.WhichOneof("kind") == "extern_call":
            for v in list(step.extern_call.args) + [kw.value for kw in step.extern_call.kwargs]:
                walk(v)
    for v in plan.outputs:
        walk(v)
    return texts


def _set_torch_rules(version: str) -> None:
    """Applies the client's version-dependent binding rules of torch `version` ("2.11")."""
    major, minor = (int(p) for p in version.split(".")[:2])
    native_plan._UNDEFINED_TENSOR_RETURNS_CONVERT = (major, minor) >= (2, 15)
    print(f"classifying as torch {major}.{minor} would (installed: {__import__('torch').__version__})")


if __name__ == "__main__":
    cuda = "--cuda" in sys.argv
    argv = [a for a in sys.argv if a != "--cuda"]
    if "--torch" in argv:
        i = argv.index("--torch")
        _set_torch_rules(argv[i + 1])
        del argv[i:i + 2]
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
    spec = importlib.util.spec_from_file_location("models", argv[1])
    models = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(models)
    totals = {name: census(name, getattr(models, name), cuda) for name in argv[2:]}
    print("python_steps per model:", totals)
