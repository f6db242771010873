"""User outputs whose strides the daemon may choose (TCCD_PADDED_OUTPUTS, default on).

A 16-bit matmul whose result rows are not a multiple of 8 elements (GPT-2's 50257-token logits)
runs aligned cuBLAS kernels only on a padded result; returned with the strides AOTAutograd
traced, the result's first N columns are then copied back to contiguous (0.84 ms per training
step for GPT-2 at 16 x 512 tokens on an H200, and the copy lives beside the padded buffer). With
this knob a forward's (or inference graph's) user outputs are sent as "free"
(CompileOptions.extra["tccd_free_layout_outputs"], as the saved tensors of saved_layouts.py) and
the daemon returns such an output as the strided view of the padded product
(codegen/passes/padded_output_views.h): the logits come back with row stride 50264, as
Inductor returns them (its pad_mm; measured on the GPU machine, torch 2.11: the same padded
cuBLAS kernel, no copy).

What it changes for the caller: only strides. Neither Dynamo nor AOTAutograd checks the strides
a compiled forward returns (AOTAutograd coerces the backward's tangents to the traced layout;
the graph after a graph break is traced from the real tensor), but user code that calls .view()
on such an output in a way that merges its rows (logits.view(-1)) raises where eager's
contiguous tensor would not. TCCD_PADDED_OUTPUTS=0 keeps eager's strides for every user output.

Only outputs AOTAutograd returns as they are qualify: not aliases of inputs or intermediates
(those it regenerates from a base, possibly by as_strided with the traced strides), nor the
base of such an alias, and only in graphs without convolutions (there the free outputs would
also be free to go channels-last, channels_last_layout.h).
"""

import logging
from typing import Any, List, Sequence

import torch

log = logging.getLogger("tccd")

_CONVOLUTION = torch.ops.aten.convolution.default
_MATMULS = (torch.ops.aten.mm.default, torch.ops.aten.addmm.default)


def _odd_rows(node: torch.fx.Node) -> bool:
    val = node.meta.get("val")
    return isinstance(val, torch.Tensor) and val.dim() == 2 and val.shape[1] % 8 != 0


def _fw_metadata() -> Any:
    from torch._guards import TracingContext

    ctx = TracingContext.try_get()
    return getattr(ctx, "fw_metadata", None) if ctx is not None else None


def free_user_outputs(gm: torch.fx.GraphModule, devices: Sequence[str] = ("cuda",)) -> List[int]:
    """Forward-graph output indices of the user outputs the daemon may lay out (see above):
    tensors of at least two dimensions on `devices` (the daemon pads CUDA matmuls only)."""
    if any(True for _ in gm.graph.find_nodes(op="call_function", target=_CONVOLUTION)):
        return []
    # Only where the daemon may pad a product's rows (pad_matmul_operands.h): other graphs keep
    # their requests, and compile keys, as they were.
    if not any(_odd_rows(n) for t in _MATMULS for n in gm.graph.find_nodes(op="call_function", target=t)):
        return []
    md = _fw_metadata()
    if md is None:
        return []
    outputs = gm.graph.find_nodes(op="output")[0].args[0]
    try:
        infos = list(md.output_info)
        start = int(md.num_mutated_inp_runtime_indices)
        # Bases of outputs AOTAutograd regenerates from another user output.
        bases = {i.base_idx for i in infos if i.output_type.name == "alias_of_intermediate_base_is_user_output"}
    except Exception:  # deliberately ignored: an unknown metadata layout frees nothing
        log.debug("tccd: no output metadata for padded outputs", exc_info=True)
        return []
    free = []
    for j, info in enumerate(infos):
        i = start + j
        if info.output_type.name != "non_alias" or j in bases or i >= len(outputs):
            continue
        node = outputs[i]
        val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
        if isinstance(val, torch.Tensor) and val.device.type in devices and val.dim() >= 2:
            free.append(i)
    return free
