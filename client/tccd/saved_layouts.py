"""Layouts of saved activations chosen by the daemon (channels-last around convolutions).

The daemon may give a training forward's saved activations other strides than the trace had
(codegen/passes/channels_last_layout.h: NHWC around cuDNN convolutions, as Inductor does). Those
outputs are AOTAutograd's "tensors saved for backward": only the backward reads them, so their
strides are free as long as the backward is compiled for the strides they really have. This
module carries that contract:

  * forward: `saved_slice(gm)` finds the saved-tensor outputs (CUDA graphs with a convolution,
    or with a matmul the daemon pads: an LM head over an odd vocabulary, _has_padded_product;
    only those, so that no other graph's compile key changes) and `free_outputs` keeps those the
    backward reads through no view (a view's traced strides assume the traced input's) but row
    reshapes of a 2-D tensor; they are sent as CompileOptions.extra["tccd_free_layout_outputs"]
    ("3:6,8:9");
  * the forward's plan says the strides it chose (`output_strides`, from the plan's values);
  * backward: `restride_inputs(graph, ...)` gives the backward request's saved-tensor inputs
    those strides (and the reshapes of them the strides they then have), as AOTAutograd restrides its placeholders for Inductor (graph_compile.py,
    "saved activations can have different stride to eager if the compiler does layout
    optimization"). AOTAutograd passes the backward compiler restrided example inputs but leaves
    the graph's placeholder metadata, which the request is encoded from, as traced.

The strides are not reported to AOTAutograd (TracingContext.report_output_strides): with the
background compile (TCCD_ASYNC_COMPILE) the forward's plan is not there when the backend returns,
and the request is encoded from the graph, not from the example inputs AOTAutograd restrides.
The backward request takes them from the forward's plan instead, which is always resolved before
the backward compiles (the backward prefetch waits for it). TCCD_SAVED_LAYOUT=0 turns it off
(every output keeps its traced strides).
"""

import logging
from typing import Any, List, Optional, Sequence, Tuple

import torch

log = logging.getLogger("tccd")

OPTION = "tccd_free_layout_outputs"
_CONVOLUTION = torch.ops.aten.convolution.default


def _fw_metadata() -> Any:
    from torch._guards import TracingContext

    ctx = TracingContext.try_get()
    return getattr(ctx, "fw_metadata", None) if ctx is not None else None


def _is_cuda_conv_graph(gm: torch.fx.GraphModule) -> bool:
    for node in gm.graph.find_nodes(op="call_function", target=_CONVOLUTION):
        val = node.meta.get("val")
        if isinstance(val, torch.Tensor) and val.device.type == "cuda" and val.dim() == 4:
            return True
    return False


_MATMULS = (torch.ops.aten.mm.default, torch.ops.aten.addmm.default)


def _is_cuda(val: Any) -> bool:
    return isinstance(val, torch.Tensor) and val.device.type == "cuda"


def _has_padded_product(gm: torch.fx.GraphModule) -> bool:
    """A CUDA matmul whose result rows are not a multiple of 8 elements: the daemon pads it
    (pad_matmul_operands.h) and may hand a saved result over as the padded product's strided view
    (padded_output_views.h: BERT's and GPT-2's logits, saved for the loss backward) instead of a
    contiguous copy. Only with TCCD_SAVED_PADDED=1 (config.py; default off: the backward's
    compile then waits for the forward's plan, a cold-start cost)."""
    from . import config

    if not config.get().saved_padded:
        return False
    for target in _MATMULS:
        for node in gm.graph.find_nodes(op="call_function", target=target):
            val = node.meta.get("val")
            if _is_cuda(val) and val.dim() == 2 and val.shape[1] % 8 != 0:
                return True
    return False


def saved_slice(gm: torch.fx.GraphModule, bw: Optional[torch.fx.GraphModule] = None) -> Optional[Tuple[int, int, int]]:
    """(start, stop, saved symints) of the forward's saved-tensor outputs, or None: not a CUDA
    graph with a 2-D convolution, or neither AOTAutograd's metadata nor the backward graph says.

    AOTAutograd's metadata has the slice (without saved SymInts it runs to the end: stop None,
    or a negative stop with them); where the metadata is not readable, the backward graph the
    partitioner made gives it: its non-tangent inputs are the saved SymInts and tensors, which
    are the forward's last outputs (tensors, then SymInts)."""
    if not _is_cuda_conv_graph(gm) and not _has_padded_product(gm):
        return None
    outputs = gm.graph.find_nodes(op="output")[0].args[0]
    md = _fw_metadata()
    try:
        if md is not None and md.num_symints_saved_for_bw is not None:
            saved = md.tensors_saved_for_backwards_slice
            # Without saved SymInts the slice runs to the end (torch 2.11: stop None).
            start, stop = saved.start or 0, saved.stop if saved.stop is not None else len(outputs)
            if stop < 0:
                stop += len(outputs)
            if stop > start:
                return start, stop, int(md.num_symints_saved_for_bw)
    except Exception:  # deliberately ignored: the backward graph below answers instead
        log.debug("tccd: no saved-tensor slice in AOTAutograd's metadata", exc_info=True)
    if bw is None:
        return None
    saved_inputs = [n for n in bw.graph.find_nodes(op="placeholder") if not n.name.startswith("tangents")]
    num_symints = sum(1 for n in saved_inputs if not isinstance(n.meta.get("val"), torch.Tensor))
    num_tensors = len(saved_inputs) - num_symints
    stop = len(outputs) - num_symints
    start = stop - num_tensors
    if num_tensors <= 0 or start < 0:
        return None
    return start, stop, num_symints


_IDENTITY_VIEWS = (torch.ops.aten.detach.default, torch.ops.aten.alias.default)


_RESHAPES = (torch.ops.aten.view.default, torch.ops.aten._unsafe_view.default,
             torch.ops.aten.reshape.default)


def _shape(node: torch.fx.Node):
    val = node.meta.get("val")
    return tuple(val.shape) if isinstance(val, torch.Tensor) else None


def _read_as_is(node: torch.fx.Node, shape=None) -> bool:
    """Whether every user of a backward placeholder takes any strides: no views (their traced
    output strides assume the traced input's) other than detach/alias read the same way, and no
    graph output (returned as traced). Reshapes that only regroup the dims before the last and
    lead back to the placeholder's own 2-D shape (BERT's saved logits: [1024, V] -> [2, 512, V]
    -> [1024, V], then the loss reads them) are read as is too: restride_inputs gives the chain
    the strides the restrided input gives it."""
    shape = _shape(node) if shape is None else shape
    for user in node.users:
        target = user.target
        if user.op != "call_function" or not isinstance(target, torch._ops.OpOverload):
            return False
        if target in _IDENTITY_VIEWS:
            if not _read_as_is(user, shape):
                return False
        elif target in _RESHAPES:
            # Only over 2-D values: splitting and merging the rows of [M, N] is a view for any
            # row stride the daemon picks (a 4-D channels-last saved tensor is not so viewed).
            out = _shape(user)
            if shape is None or len(shape) != 2 or out is None or not out or out[-1] != shape[-1]:
                return False
            if out == shape:
                if not _read_as_is(user, shape):
                    return False
            elif any(u.op != "call_function" or u.target not in _RESHAPES for u in user.users) or \
                    not _read_as_is(user, shape):
                return False
        elif target.is_view:
            return False
    return True


def free_outputs(bw: Optional[torch.fx.GraphModule], start: int, stop: int, num_symints: int) -> List[int]:
    """The saved-tensor outputs [start, stop) whose strides the daemon may choose: those the
    backward graph `bw` reads through no view (backward input i is saved tensor i - num_symints,
    AOTAutograd's calling convention). Without the backward graph: none."""
    if bw is None:
        return []
    placeholders = list(bw.graph.find_nodes(op="placeholder"))
    free = []
    for j in range(stop - start):
        i = j + num_symints
        if i < len(placeholders) and _read_as_is(placeholders[i]):
            free.append(start + j)
    return free


def option_value(outputs: Sequence[int]) -> str:
    """Output indices as the option's ranges: [3, 4, 5, 8] -> "3:6,8:9"."""
    ranges: List[Tuple[int, int]] = []
    for i in sorted(outputs):
        if ranges and ranges[-1][1] == i:
            ranges[-1] = (ranges[-1][0], i + 1)
        else:
            ranges.append((i, i + 1))
    return ",".join(f"{a}:{b}" for a, b in ranges)


def output_strides(plan: "pb.Plan") -> List[Optional[Tuple[int, ...]]]:
    """The strides of each plan output (None for non-tensors and symbolic strides)."""
    out: List[Optional[Tuple[int, ...]]] = []
    for value in plan.outputs:
        if value.WhichOneof("kind") != "ref" or not 0 <= value.ref.node < len(plan.values):
            out.append(None)
            continue
        meta = plan.values[value.ref.node]
        if any(d.WhichOneof("kind") != "value" for d in meta.strides):
            out.append(None)
            continue
        out.append(tuple(d.value for d in meta.strides))
    return out


def restride_inputs(graph: "pb.Graph", saved: Sequence[Optional[Tuple[int, ...]]], num_symints: int) -> int:
    """Gives the backward graph's saved-tensor inputs the strides the forward's plan chose
    (backward input i is saved tensor i - num_symints). Returns how many inputs changed."""
    changed = 0
    restrided = set()  # (node, output) refs whose strides changed
    for i, meta in enumerate(graph.inputs):
        j = i - num_symints
        if not 0 <= j < len(saved) or saved[j] is None:
            continue
        stride = saved[j]
        if len(stride) != len(meta.sizes) or any(d.WhichOneof("kind") != "value" for d in meta.strides):
            continue
        if tuple(d.value for d in meta.strides) == tuple(stride):
            continue
        for d, s in zip(meta.strides, stride):
            d.value = s
        changed += 1
        restrided.add((-(i + 1), 0))
    if restrided:
        _restride_views(graph, restrided)
    return changed


_VIEW_TARGETS = ("aten::view.default", "aten::_unsafe_view.default", "aten::reshape.default",
                 "aten::detach.default", "aten::alias.default")


def _restride_views(graph: "pb.Graph", restrided: set) -> None:
    """The reshapes (and detach/alias) of restrided inputs take the strides the restrided input
    gives them, as the op would at run time (_read_as_is let through only chains that stay
    views: the leading dims regrouped, the last kept); their traced metadata assumed the traced
    input's. Without this the daemon declared BERT's [2, 512, V] view of the padded logits
    contiguous and the runtime copied it back into that layout."""
    def meta_of(ref):
        if ref.node < 0:
            return graph.inputs[-ref.node - 1]
        return graph.nodes[ref.node].outputs[ref.output]

    def dims(ds):
        return [d.value for d in ds] if all(d.WhichOneof("kind") == "value" for d in ds) else None

    for index, node in enumerate(graph.nodes):
        if node.target not in _VIEW_TARGETS or not node.args or len(node.outputs) != 1:
            continue
        arg = node.args[0]
        if arg.WhichOneof("kind") != "ref" or (arg.ref.node, arg.ref.output) not in restrided:
            continue
        src, out = meta_of(arg.ref), node.outputs[0]
        sizes, strides, out_sizes = dims(src.sizes), dims(src.strides), dims(out.sizes)
        if sizes is None or strides is None or out_sizes is None or len(out.strides) != len(out_sizes):
            continue
        try:
            base = torch.empty_strided(sizes, strides, device="meta")
            new = base.view(out_sizes).stride()
        except RuntimeError:  # not a view of the restrided input: leave the traced strides
            continue
        for d, s in zip(out.strides, new):
            d.value = s
        restrided.add((index, 0))
