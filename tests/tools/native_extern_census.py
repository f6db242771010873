"""Which extern steps of a model's CPU plans the native plan runtime would still run through the
Python callback (`python_steps`), by op, without running the model under tccd.

Captures the AOT forward/backward graphs of a model on the CPU (census_models.py), compiles them
with a running daemon for this machine's CPU and binds every extern step exactly as
client/tccd/native_plan.py does at load; prints per graph the extern steps bound natively and
those left to Python, by target and with the reason.

  TCCD_ADDRESS=unix:/path/tccd.sock PYTHONPATH=client:tests/python \\
      python tests/tools/native_extern_census.py tests/tools/census_models.py gpt2 [bert ...]
"""

import collections
import functools
import importlib.util
import sys

from tccd import channel, config, native_plan, serialize
from tccd.serialize import pb
from tccd_testlib import capture_aot_graphs


def census(name, capture) -> int:
    stub = channel.connect(config.get())
    from tccd.backend import _partitioner

    partition_fn = _partitioner()[1]  # the graphs tccd would receive (TCCD_PARTITIONER)
    total_python = 0
    for kind, gm, _ in capture(functools.partial(capture_aot_graphs, partition_fn=partition_fn)):
        graph, _ = serialize.encode_graph(gm)
        request = pb.CompileRequest(graph=graph, target=serialize.build_target(graph),
                                    graph_name=kind, options=serialize.options_proto(None, None),
                                    client=serialize.client_info())
        plan = stub.Compile(request, timeout=600).manifest.plan
        native, python = collections.Counter(), collections.Counter()
        for step in plan.steps:
            if step.WhichOneof("kind") != "extern_call":
                continue
            target = step.extern_call.target
            bound = native_plan.bind_extern(step, plan)
            if bound is None:
                python[target] += 1
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


if __name__ == "__main__":
    spec = importlib.util.spec_from_file_location("models", sys.argv[1])
    models = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(models)
    totals = {name: census(name, getattr(models, name)) for name in sys.argv[2:]}
    print("python_steps per model:", totals)
