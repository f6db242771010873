"""Helpers shared by the client tests and the e2e worker script (no pytest imports here)."""

from __future__ import annotations

import copy
import importlib.util
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import torch
import torch.nn as nn


def _deploy_module(name: str):
    """deploy/<name>.py, loaded by path (deploy/ is a directory of scripts, not a package on the
    tests' path), once per process under the name tccd_deploy_<name>."""
    qualified = f"tccd_deploy_{name}"
    if qualified not in sys.modules:
        path = Path(__file__).resolve().parents[2] / "deploy" / f"{name}.py"
        spec = importlib.util.spec_from_file_location(qualified, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[qualified] = module  # before running it: dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[qualified]


# The torch.profiler helper of the deploy tools (deploy/profiling.py), for the GPU tests.
_profiling = _deploy_module("profiling")
Kernel = _profiling.Kernel
kernel_launches = _profiling.kernel_launches
launches = _profiling.launches
device_time_per_iter = _profiling.device_time_per_iter
profile_kernels = _profiling.profile_kernels
summarize = _profiling.summarize


# ---------------------------------------------------------------------------------------------
# Models and training
# ---------------------------------------------------------------------------------------------


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, 4)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = torch.tanh(self.fc2(x)) * 0.5 + x * torch.sigmoid(x)
        return self.fc3(x)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn1(self.conv1(x))))
        x = self.pool(torch.relu(self.bn2(self.conv2(x))))
        return self.fc(torch.flatten(x, 1))


MODELS = {"mlp": (MLP, (8, 16), 4), "cnn": (SmallCNN, (4, 3, 16, 16), 5)}


def make_model(name: str, seed: int = 0) -> Tuple[nn.Module, List[Tuple[torch.Tensor, torch.Tensor]]]:
    """A model with deterministic initial weights and a deterministic list of batches."""
    cls, input_shape, classes = MODELS[name]
    torch.manual_seed(seed)
    model = cls()
    gen = torch.Generator().manual_seed(seed + 1)
    batches = [
        (torch.randn(*input_shape, generator=gen), torch.randint(0, classes, (input_shape[0],), generator=gen))
        for _ in range(8)
    ]
    return model, batches


def train(model: nn.Module, batches, steps: int, compile_fn: Callable[[nn.Module], Any] = None):
    """`steps` SGD steps (momentum, cross-entropy); returns (losses, final parameters)."""
    runner = compile_fn(model) if compile_fn else model
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    model.train()
    for step in range(steps):
        x, y = batches[step % len(batches)]
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(runner(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.detach().clone())
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    return torch.stack(losses), state


def run_training(name: str, steps: int = 5, backend: Any = None):
    model, batches = make_model(name)
    compile_fn = None
    if backend is not None:
        compile_fn = lambda m: torch.compile(m, backend=backend, dynamic=False)  # noqa: E731
    return train(model, batches, steps, compile_fn)


# ---------------------------------------------------------------------------------------------
# AOTAutograd graph capture
# ---------------------------------------------------------------------------------------------


def capture_aot_graphs(fn: Callable, *args, **kwargs) -> List[Tuple[str, torch.fx.GraphModule, List[Any]]]:
    """Runs fn(*args) under torch.compile with a backend that records every AOT graph.

    Returns [(kind, graph module, example inputs)] for forward/backward/inference graphs. The
    backward graph is only compiled when the caller runs backward: pass `backward=True` to call
    .sum().backward() on the result.
    """
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.aot_autograd import make_boxed_func

    backward = kwargs.pop("backward", False)
    partition_fn = kwargs.pop("partition_fn", None)  # None: AOTAutograd's default
    decompositions = kwargs.pop("decompositions", None)  # None: none
    # True as tccd's backend traces: buffer mutations stay in the graph as copy_ nodes.
    keep_mutations = kwargs.pop("keep_inference_input_mutations", False)
    graphs: List[Tuple[str, torch.fx.GraphModule, List[Any]]] = []

    def capture(kind):
        def compiler(gm, example_inputs):
            graphs.append((kind, gm, list(example_inputs)))
            return make_boxed_func(gm.forward)

        return compiler

    backend = aot_autograd(
        fw_compiler=capture("forward"),
        bw_compiler=capture("backward"),
        inference_compiler=capture("inference"),
        **({"partition_fn": partition_fn} if partition_fn is not None else {}),
        **({"decompositions": decompositions} if decompositions else {}),
        **({"keep_inference_input_mutations": True} if keep_mutations else {}),
    )
    torch._dynamo.reset()
    out = torch.compile(fn, backend=backend, dynamic=False)(*args)
    if backward:
        # backward=True: out.sum(); a callable picks the loss from a richer output.
        (backward(out) if callable(backward) else out.sum()).backward()
    return graphs


# ---------------------------------------------------------------------------------------------
# An all-extern plan, built the way the daemon builds one (for daemon-free runtime tests)
# ---------------------------------------------------------------------------------------------


def graph_to_extern_plan(graph) -> "Any":
    """tccd.v1.Graph -> Plan where every node is an ExternCall (mirrors the daemon's plan
    builder with fusion disabled: value ids are inputs first, then node outputs as defined)."""
    from tccd.v1 import tccd_pb2 as pb

    plan = pb.Plan(num_inputs=len(graph.inputs))
    ids: Dict[Tuple[int, int], int] = {}
    for i, meta in enumerate(graph.inputs):
        ids[(-(i + 1), 0)] = len(plan.values)
        plan.values.append(meta)

    def remap(value):
        kind = value.WhichOneof("kind")
        if kind == "ref":
            return pb.Value(ref=pb.ValueRef(node=ids[(value.ref.node, value.ref.output)], output=0))
        if kind == "list":
            return pb.Value(list=pb.ValueList(items=[remap(v) for v in value.list.items]))
        return value

    for node_id, node in enumerate(graph.nodes):
        call = pb.ExternCall(
            target=node.target,
            args=[remap(a) for a in node.args],
            kwargs=[pb.NamedValue(name=kv.name, value=remap(kv.value)) for kv in node.kwargs],
        )
        step = pb.Step(extern_call=call)
        for o, meta in enumerate(node.outputs):
            ids[(node_id, o)] = len(plan.values)
            step.outputs.append(len(plan.values))
            plan.values.append(meta)
        plan.steps.append(step)
    for value in graph.outputs:
        plan.outputs.append(remap(value))
    return plan


def clone_inputs(inputs: List[Any]) -> List[Any]:
    return [x.detach().clone() if isinstance(x, torch.Tensor) else copy.copy(x) for x in inputs]
