"""The backward inputs the caller gives up to the plan: its saved activations.

A training backward's plan takes AOTAutograd's saved tensors and the tangents. The runtimes
(aot_runtime.py, and AOTAutograd's own CompiledFunction.backward) clear the node's saved
variables and hand the list over (the boxed convention), so the plan holds the only reference
to each saved activation and frees it after its last reader (the plan's release lists). The
forward's inputs that the backward reads again (`primals_*` placeholders: parameters, the batch)
stay the caller's, and so do the tangents (autograd's `grads` tuple holds them for the whole
call). The daemon's segment builder needs to know which is which: a segment holds every input
that dies inside it until the segment returns, and for released ones that is memory the
stepwise plan would have freed (BERT's train-small backward was one segment that held all its
saved activations, 324.5 MiB, to the end beside the gradients). They are sent as
CompileOptions.extra["tccd_released_inputs"] ("3:6,8:9", graph input indices, in
saved_layouts.option_value's form). TCCD_RELEASED_INPUTS=0 sends nothing (the plans before
2026-11-27's `peak2`).
"""

from typing import List, Sequence

import torch

OPTION = "tccd_released_inputs"


def _is_caller_held(name: str) -> bool:
    # As torch's partitioners name the backward's placeholders (torch/_functorch/partitioners.py
    # _is_primal / _is_tangent): a saved forward input keeps its primal's name.
    return name.startswith("primals") or "tangents" in name


def released(gm: torch.fx.GraphModule, devices: Sequence[str] = ("cuda",)) -> List[int]:
    """Graph input indices (tensor placeholders in order, as serialize.GraphEncoder numbers
    them; integer placeholders are no graph inputs) of a backward graph's saved activations;
    none unless an input is on one of `devices` (only CUDA plans have segments: other graphs
    keep their requests, and compile keys, as they were)."""
    indices, index, on_device = [], 0, False
    for node in gm.graph.find_nodes(op="placeholder"):
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            continue
        on_device = on_device or val.device.type in devices
        if not _is_caller_held(str(node.target)):
            indices.append(index)
        index += 1
    return indices if on_device else []
