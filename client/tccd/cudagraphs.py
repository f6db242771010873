"""CUDA graphs for tccd plans: torch.compile(model, backend="tccd", mode="reduce-overhead").

With a mode whose Inductor meaning includes CUDA graphs ("reduce-overhead", "max-autotune"), the
boxed callables the backend returns for a CUDA graph's forward, backward and inference ATen graphs
are handed to torch's CUDA graph trees (torch._inductor.cudagraph_trees.cudagraphify_impl), the
machinery Inductor and Dynamo's "cudagraphs" backend use. The first call of a callable runs it
eagerly (warm-up, allocating from the tree's pool), the next records it, later calls replay it.

Why the trees and not a hand-rolled torch.cuda.CUDAGraph per callable: a training step is a
chain (forward, then backward reading the forward's saved tensors, then the next forward), and
only the trees get the whole chain right.
  * Memory: every graph of a device shares one private pool, and the backward's inputs (the
    forward's saved tensors) are already at fixed addresses in it; separate graphs would each
    need a pool and copies of every input.
  * Liveness: a replay overwrites the outputs of the previous replay. The trees know which
    outputs are still alive, re-record instead of clobbering them, and raise a clear error when
    user code reads an output that a later replay overwrote; a plain CUDAGraph silently returns
    changed data.
  * Inputs: parameters and buffers (static inputs) are read in place and their addresses are
    checked at every replay (a changed address re-records); other inputs are copied into graph
    buffers. Generations (one per call of the compiled module, or
    torch.compiler.cudagraph_mark_step_begin) and input mutation are handled as for Inductor.

The decision (`decide`) mirrors Inductor's and Dynamo's skip rules; a graph runs without CUDA
graphs, with one logged warning naming the graph and the reason, when
  * its tensors are not all on one CUDA device (CPU graphs, CPU scalar inputs, several
    devices; 0-dim CPU constants the graph makes itself are allowed: `_cpu_constants`),
  * it contains an op that cannot be captured (torch's get_first_incompatible_cudagraph_node:
    host syncs such as .item(), data-dependent output sizes, ops tagged cudagraph_unsafe),
  * it mutates an input that is not a parameter or buffer (a static input),
  * tccd could not compile it (it runs eagerly as an ordinary fallback), or
  * anything else fails while setting graphs up (e.g. a torch without these APIs).
A skip also counts in torch._dynamo.utils.counters["inductor"]["cudagraph_skips"], as
Inductor's do. When a forward graph is skipped its backward is skipped too (it would have
nothing to gain: its inputs would not be in the pool), and a backward that runs without graphs
after a graphed forward tells the tree manager so (the trees' "backward generation handling"),
so the next step's forward starts a new generation.

Around the wrapped callables, a graph runs in AOTAutograd's runtime wrappers for its first step
and, once its AOT recipe is captured (its first backward, or its inference plan), in tccd's
recipe runtime (aot_runtime.py, TCCD_LEAN_CUDAGRAPHS; backend.py): the same callables, so the
same trees' functions, with less Python per replayed step.

The native part of a plan launches on the caller's current stream without host
synchronisation, and each kernels .so is loaded (tccd_cuda_init) when the plan is loaded, at
compile time, never during capture; ExternCall steps are ordinary ATen ops. So a plan is as
capturable as the ATen graph it came from.

torch 2.11 to 2.15: cudagraphify_impl(model, inputs, static_input_idxs, **kwargs) has the same
shape in all of them; the keyword arguments of cudagraphify that newer versions added
(kernel_free_cudagraph, rerecord limits, ...) all have defaults, so the ones passed here are
filtered against the installed signature.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import sys
from typing import Any, Callable, List, Optional, Sequence, Tuple

import torch

log = logging.getLogger(__name__)

# torch.compile modes that, for Inductor, include CUDA graphs (torch._inductor.list_mode_options:
# "reduce-overhead" and "max-autotune" set triton.cudagraphs; "max-autotune-no-cudagraphs" and
# "default" do not).
MODES_WITH_CUDA_GRAPHS = frozenset({"reduce-overhead", "max-autotune"})


def wanted(mode: Optional[str]) -> bool:
    """Whether torch.compile's `mode` asks for CUDA graphs."""
    return mode in MODES_WITH_CUDA_GRAPHS


@dataclasses.dataclass(frozen=True)
class Decision:
    """Whether and how one ATen graph runs under CUDA graphs."""

    skip: Optional[str]  # None: wrap it; else why not (a sentence for the log)
    device_index: Optional[int] = None
    static_input_idxs: Tuple[int, ...] = ()
    mutated_input_idxs: Tuple[int, ...] = ()


def _node_val(node: torch.fx.Node) -> Any:
    return node.meta.get("val", node.meta.get("fake_result"))


def _tensors(value: Any):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item)


def _cpu_constants(gm: torch.fx.GraphModule) -> set:
    """The nodes whose value is a 0-dim CPU tensor fixed by the graph itself: a lifted constant
    (get_attr) and what deterministic ops make of such constants alone (lift_fresh_copy, casts).

    HF T5's `shifted_input_ids[..., 0] = decoder_start_token_id` traces to a CPU 0-dim
    `_tensor_constant0`, lift_fresh_copy'd and read by fill.Tensor on a CUDA tensor. The ops that
    read such a scalar take its value on the host when they launch (ATen's CPU-scalar operands:
    no copy, no sync), and the value is the same at every call, so a replay of the captured graph
    computes what the plan would; Inductor folds these scalars and graphs T5, Dynamo's
    "cudagraphs" backend refuses it. A CPU scalar that is a graph input (its value may change
    between calls) is not a constant and still refuses capture."""
    constants = set()
    for node in gm.graph.nodes:
        val = _node_val(node)
        if not (isinstance(val, torch.Tensor) and val.device.type == "cpu" and val.dim() == 0):
            continue
        if node.op == "get_attr":
            constants.add(node)
            continue
        if node.op != "call_function":
            continue
        tags = getattr(node.target, "tags", ())
        if torch.Tag.nondeterministic_seeded in tags:
            continue  # a random draw: a replay would repeat the captured value
        if all(arg in constants for arg in node.all_input_nodes):
            constants.add(node)
    return constants


def _device_skip(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> Tuple[Optional[str], Optional[int]]:
    """(reason, None) unless every tensor of the graph is on one CUDA device (CPU scalar
    constants aside, `_cpu_constants`); else (None, index)."""
    from . import config

    ignored = _cpu_constants(gm) if config.get().cudagraph_cpu_constants else set()
    found = {}  # device -> name of the first node with a tensor there
    for node in gm.graph.nodes:
        if node in ignored:
            continue
        for t in _tensors(_node_val(node)):
            found.setdefault(t.device, node.name)
    for i, value in enumerate(example_inputs):
        for t in _tensors(value):
            found.setdefault(t.device, f"input {i}")
    found.pop(torch.device("meta"), None)  # no memory, no kernels
    if not found:
        return "it has no CUDA tensors", None
    not_cuda = [(d, n) for d, n in found.items() if d.type != "cuda"]
    if not_cuda:
        device, name = not_cuda[0]
        return f"it has {device.type} tensors ({name}); CUDA graphs need every tensor on the GPU", None
    if len(found) > 1:
        return f"it uses several devices ({', '.join(sorted(str(d) for d in found))})", None
    device = next(iter(found))
    return None, device.index if device.index is not None else torch.cuda.current_device()


def _static_input_idxs(kind: str, gm: torch.fx.GraphModule, num_inputs: int, num_dynamo_inputs: int) -> Tuple[int, ...]:
    """Inputs at fixed addresses, read in place by the graph (the rest is copied in per replay).

    Forward/inference: parameters and buffers, as AOTAutograd records them in the tracing
    context (Inductor's get_static_input_idxs); without one, the inputs AOTAutograd lifted.
    Backward: the saved tensors (everything before the tangents), minus placeholders the
    partitioner marks as not static (newer torch stamps meta["is_static_input"] on saved
    plain user inputs), as Inductor's compile_fx_backward does.
    """
    from torch._inductor.utils import count_tangents, num_fw_fixed_arguments

    if kind == "backward":
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        return tuple(
            i for i in range(count_tangents(gm)) if placeholders[i].meta.get("is_static_input", True)
        )
    context = torch._guards.TracingContext.try_get()
    if context is not None and context.fw_metadata is not None:
        return tuple(context.fw_metadata.static_input_indices)
    return tuple(range(num_fw_fixed_arguments(num_dynamo_inputs, num_inputs)))


def decide(kind: str, gm: torch.fx.GraphModule, example_inputs: Sequence[Any], num_dynamo_inputs: int) -> Decision:
    """Whether the ATen graph `gm` (kind: forward, backward or inference) can run under CUDA
    graphs. Reads only graph metadata (fake tensors), so it needs no GPU."""
    skip, device_index = _device_skip(gm, example_inputs)
    if skip:
        return Decision(skip)
    from torch._dynamo.backends.cudagraphs import find_input_mutations
    from torch._inductor.utils import get_first_incompatible_cudagraph_node

    node = get_first_incompatible_cudagraph_node(gm)
    if node is not None:
        return Decision(f"it contains an op that cannot be captured ({node.name}: {node.target})")
    static = _static_input_idxs(kind, gm, len(example_inputs), num_dynamo_inputs)
    mutated = tuple(sorted(find_input_mutations(gm.graph)))
    not_static = [i for i in mutated if i not in set(static)]
    if not_static:
        names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
        which = ", ".join(names[i] if i < len(names) else str(i) for i in not_static)
        return Decision(f"it mutates inputs that are not parameters or buffers ({which})")
    return Decision(None, device_index, static, mutated)


def _cudagraphify_kwargs(kind: str, gm: torch.fx.GraphModule, decision: Decision) -> dict:
    from torch._dynamo.backends.cudagraphs import get_stack_traces
    from torch._inductor import cudagraph_trees
    from torch._inductor.cudagraph_utils import get_placeholder_info

    try:
        from torch._guards import CompileContext

        compile_id = CompileContext.current_compile_id()
    except Exception:  # deliberately ignored: only names the graph in torch's logs
        compile_id = None
    kwargs = dict(
        device_index=decision.device_index,
        is_backward=kind == "backward",
        is_inference=kind == "inference",
        stack_traces=get_stack_traces(gm),
        placeholders=tuple(get_placeholder_info(gm.graph)),
        mutated_input_idxs=decision.mutated_input_idxs,
        compile_id=compile_id,
    )
    accepted = inspect.signature(cudagraph_trees.cudagraphify).parameters
    return {k: v for k, v in kwargs.items() if k in accepted}


def _count_skip() -> None:
    try:
        from torch._dynamo.utils import counters

        counters["inductor"]["cudagraph_skips"] += 1
    except Exception:  # deliberately ignored: the counter is a convenience for tests and tools
        pass


class Session:
    """CUDA graph state shared by the forward, backward and inference graphs of one Dynamo graph
    (Inductor's BoxedBool cudagraphs flag and BoxedDeviceIndex)."""

    def __init__(self, num_dynamo_inputs: int):
        self.num_dynamo_inputs = num_dynamo_inputs
        self.enabled = True  # False once the forward was skipped: its backward is skipped too
        self.forward_device_index: Optional[int] = None  # set when a forward is graphed

    def wrap(
        self,
        kind: str,
        name: str,
        gm: torch.fx.GraphModule,
        example_inputs: Sequence[Any],
        compiled: Callable[[List[Any]], Any],
        fallback: Optional[str],
    ) -> Tuple[Callable[[List[Any]], Any], Optional[str]]:
        """(callable, skip reason) for a boxed callable the backend produced for `gm`. `fallback`
        is the reason tccd runs the graph eagerly, or None for a tccd plan. Never raises."""
        if kind == "backward" and not self.enabled:
            return compiled, "its forward graph runs without CUDA graphs"
        if fallback is not None:
            skip = "tccd could not compile it"
        else:
            try:
                decision = decide(kind, gm, example_inputs, self.num_dynamo_inputs)
                skip = decision.skip
                if skip is None:
                    wrapped = self._cudagraphify(kind, gm, example_inputs, compiled, decision)
            except Exception as e:
                log.debug("tccd: %s: setting up CUDA graphs failed", name, exc_info=True)
                skip = f"setting up CUDA graphs failed: {type(e).__name__}: {e}"
        if skip is None:
            log.info("tccd: %s runs under CUDA graphs (device %d)", name, decision.device_index)
            return wrapped, None
        if kind != "backward":
            self.enabled = False
        log.warning("tccd: %s runs without CUDA graphs: %s", name, skip)
        _count_skip()
        if kind == "backward":
            return self._backward_without_graphs(compiled), skip
        return compiled, skip

    def _cudagraphify(self, kind, gm, example_inputs, compiled, decision):
        from torch._inductor.cudagraph_trees import cudagraphify_impl

        kwargs = _cudagraphify_kwargs(kind, gm, decision)
        # cudagraphify_impl reads only which inputs are ints (dynamic-shape keys) from the
        # example inputs; recording happens on real inputs at the second call.
        wrapped = cudagraphify_impl(compiled, list(example_inputs), decision.static_input_idxs, **kwargs)
        wrapped._boxed_call = True  # type: ignore[attr-defined]
        if hasattr(compiled, "plan"):
            wrapped.plan = compiled.plan  # type: ignore[attr-defined]
        if kind != "backward":
            self.forward_device_index = decision.device_index
        else:
            # For the recipe runtime (aot_runtime.py): the backward without tangents that got
            # no gradient (TCCD_CUDAGRAPH_ZERO_TANGENTS).
            wrapped.with_zero_tangents = ZeroTangents(gm, example_inputs, compiled, decision)  # type: ignore[attr-defined]
        return wrapped

    def _backward_without_graphs(self, compiled):
        """A backward that runs eagerly after a graphed forward must tell the tree manager, or
        the next forward finds "pending backwards" and cannot start a new generation."""
        device_index = self.forward_device_index
        if device_index is None:
            return compiled

        def run(args: List[Any]) -> Any:
            from torch._inductor.cudagraph_trees import get_manager

            manager = get_manager(device_index, create_if_none_exists=False)
            if manager is not None:
                manager.set_to_running_backward()
            return compiled(args)

        run._boxed_call = True  # type: ignore[attr-defined]
        if hasattr(compiled, "plan"):
            run.plan = compiled.plan  # type: ignore[attr-defined]
        return run


class ZeroTangents:
    """Backward callables for steps where some differentiable outputs got no gradient.

    A transformers model compiled whole returns its loss and its logits; a training step
    backpropagates the loss alone, and autograd hands the backward zeros for the logits (every
    output of an autograd.Function that gets no gradient is materialised as zeros_like it). Under
    CUDA graphs those zeros are an ordinary allocation made at every step outside any graph,
    which the trees then copy into the backward's input buffer: GPT-2's bf16 logits, 98 MiB,
    were all of its reduce-overhead peak above Inductor's (358 vs 262 MiB, session 15), since
    the graphs' own memory, in their pool, is not counted there and the zeros were.

    `variant(positions)` is the backward, graphed by its own tree function, taking the plan's
    inputs less the tangents at `positions` (plan input indices, ascending): inside the
    captured function those tangents are made as zeros in the plan's layout, so the graph
    allocates them from its pool and replays their fill with the rest; nothing is allocated
    or copied outside. One variant per set of missing tangents, made at its first use (its
    first call warms up, its second records, as any tree function). The recipe runtime calls
    it when autograd gives None for a tangent (aot_runtime.py, ctx.set_materialize_grads(False));
    `zeros(position)` makes one such tangent eagerly, for a set no variant can take (a
    mutated tangent: then the full callable runs with it, as before)."""

    def __init__(self, gm: torch.fx.GraphModule, example_inputs: Sequence[Any], compiled: Callable[[List[Any]], Any],
                 decision: Decision):
        self._gm = gm
        # cudagraphify_impl reads only which inputs are ints: keep nothing else alive.
        self._example_inputs = [x if isinstance(x, int) else None for x in example_inputs]
        self._compiled = compiled
        self._decision = decision
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        self._layouts = []
        for node in placeholders:
            val = _node_val(node)
            is_tensor = isinstance(val, torch.Tensor) and not any(
                isinstance(d, torch.SymInt) for d in list(val.shape) + list(val.stride())
            )
            self._layouts.append(
                (tuple(val.shape), tuple(val.stride()), val.dtype, val.device) if is_tensor else None
            )
        self._variants: dict = {}

    def zeros(self, position: int) -> torch.Tensor:
        """The tangent at plan input `position` as zeros in the plan's layout, made now."""
        size, stride, dtype, device = self._layouts[position]
        if device.type == "cuda" and self._decision.device_index is not None:
            device = torch.device("cuda", self._decision.device_index)
        return torch.empty_strided(size, stride, dtype=dtype, device=device).zero_()

    def variant(self, positions: Tuple[int, ...]) -> Optional[Callable[[List[Any]], Any]]:
        """The graphed backward without the tangents at `positions`, or None if it cannot be
        made (then the caller passes zeros to the full callable)."""
        if positions in self._variants:
            return self._variants[positions]
        made = None
        try:
            made = self._make(positions)
        except Exception:  # deliberately ignored: the full callable with eager zeros is correct
            log.debug("tccd: a backward without tangents %s could not be graphed", positions, exc_info=True)
        self._variants[positions] = made
        return made

    def _make(self, positions: Tuple[int, ...]) -> Optional[Callable[[List[Any]], Any]]:
        from torch._inductor.cudagraph_trees import cudagraphify_impl

        decision = self._decision
        dropped = set(positions)
        if any(self._layouts[p] is None for p in positions):
            return None  # not a tensor of a static layout
        if dropped & set(decision.mutated_input_idxs) or min(positions) <= max(decision.static_input_idxs, default=-1):
            return None  # the tangents come after the saved tensors; a mutated one stays an input
        kept = [i for i in range(len(self._example_inputs)) if i not in dropped]
        new_index = {old: new for new, old in enumerate(kept)}
        narrowed = dataclasses.replace(
            decision, mutated_input_idxs=tuple(new_index[i] for i in decision.mutated_input_idxs)
        )
        kwargs = _cudagraphify_kwargs("backward", self._gm, narrowed)
        if "placeholders" in kwargs:
            kwargs["placeholders"] = tuple(kwargs["placeholders"][i] for i in kept)
        compiled, zeros = self._compiled, self.zeros
        order = sorted(positions)

        def with_zeros(args: List[Any]) -> Any:
            # Inside the trees' warm-up and recording: the zeros come from the graph's pool and
            # their fill is captured with the plan.
            full = list(args)
            args.clear()
            for position in order:
                full.insert(position, zeros(position))
            return compiled(full)

        example = [self._example_inputs[i] for i in kept]
        made = cudagraphify_impl(with_zeros, example, decision.static_input_idxs, **kwargs)
        made._boxed_call = True  # type: ignore[attr-defined]
        return made


def reset() -> None:
    """Frees every CUDA graph tree (torch._dynamo.reset() calls the backend's reset)."""
    if "torch._inductor.cudagraph_trees" in sys.modules:
        from torch._inductor.cudagraph_trees import reset_cudagraph_trees

        reset_cudagraph_trees()
