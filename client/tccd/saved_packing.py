"""Small saved tensors packed into one (TCCD_PACK_SAVED, CUDA graphs only, off by default).

Under CUDA graphs a replayed training step is host-bound, and every tensor the forward saves
for the backward costs host time per step whatever its size: one more forward output for the
CUDA graph trees to reconstruct and track, one more saved variable for autograd, one more
backward input. ResNet-50's forward saves 106 batch-norm means and inverse standard deviations
of a few hundred floats each (a third of its 323 saved tensors). This pass rewrites the
partitioned graphs so that the forward concatenates such tensors (contiguous, one floating
dtype and device, at most MAX_NUMEL elements each: batch and layer norms' statistics) into one
saved tensor and the backward reads each back as a view of a slice of it: one concat kernel
inside the forward's CUDA graph for ~100 fewer saved tensors.

    changed = pack_small_saved(fw_module, bw_module)

The two graphs are changed together and consistently (the saved tensors are the forward's last
outputs and the backward's first placeholders, in the same order), before AOTAutograd reads
their signatures. Anything unexpected leaves both graphs as they were.
"""

from __future__ import annotations

import logging
from typing import Any, List

import torch

log = logging.getLogger(__name__)

MAX_NUMEL = 1 << 16  # larger tensors are not worth a copy
MIN_PACKED = 4  # fewer: not worth the concat
NAME = "tccd_packed_saved"  # the packed tensor's node in both graphs (the partitioner's convention)


def _val(node: Any) -> Any:
    return node.meta.get("val") if isinstance(node, torch.fx.Node) else None


def _packable(node: Any) -> bool:
    v = _val(node)
    return (
        isinstance(node, torch.fx.Node)
        and node.op != "placeholder"
        and isinstance(v, torch.Tensor)
        and v.dim() >= 1
        and v.is_contiguous()
        and 0 < v.numel() <= MAX_NUMEL
        and v.dtype.is_floating_point
        and v.storage_offset() == 0
    )


def _refresh_views(node: torch.fx.Node, fake_mode: Any) -> None:
    """Recomputes the metadata of the views (transitively) of `node`, which now reads a slice
    of the packed tensor: a view's storage offset is its base's plus its own, so a view made of
    the old saved tensor (offset 0) is at the slice's offset now. The daemon takes a value's
    layout from this metadata: a stale offset made the backward read another packed tensor's
    elements (the zoo's tiny GPT-2 trained to NaN: its MLP activation packed after a layer
    norm's statistics, viewed [64, 256] -> [2, 32, 256]; Llama's through _unsafe_view, which
    aliases without a view schema). Other ops make new tensors, whose metadata does not depend
    on where their inputs lie."""
    aten = torch.ops.aten
    aliasing = {aten._unsafe_view.default, aten.reshape.default}  # alias without a view schema
    todo = [u for u in node.users]
    while todo:
        user = todo.pop()
        if user.op != "call_function" or not (getattr(user.target, "is_view", False) or user.target in aliasing):
            continue
        args, kwargs = torch.fx.node.map_arg((user.args, user.kwargs), lambda n: _val(n))
        with fake_mode:
            user.meta["val"] = user.target(*args, **kwargs)
        todo.extend(user.users)


def pack_small_saved(fw: torch.fx.GraphModule, bw: torch.fx.GraphModule) -> bool:
    """Packs the forward's small saved tensors (see the module docstring). True if it did."""
    fw_out = fw.graph.output_node()
    outs = list(fw_out.args[0])
    bw_inputs = [n for n in bw.graph.nodes if n.op == "placeholder"]
    num_saved = sum(1 for n in bw_inputs if not n.name.startswith("tangents"))
    if num_saved == 0 or num_saved > len(outs):
        return False
    saved = outs[len(outs) - num_saved:]
    if any(isinstance(_val(n), torch.SymInt) or not isinstance(_val(n), torch.Tensor) for n in saved):
        return False  # saved SymInts follow the tensors; not handled
    if [n.name for n in bw_inputs[:num_saved]] != [n.name for n in saved]:
        return False  # the partitioner names a saved value alike in both graphs
    groups = {}
    for i, node in enumerate(saved):
        if _packable(node):
            v = _val(node)
            groups.setdefault((v.dtype, v.device), []).append(i)
    if not groups:
        return False
    (dtype, device), picked = max(groups.items(), key=lambda kv: len(kv[1]))
    if len(picked) < MIN_PACKED:
        return False
    fake_mode = getattr(_val(saved[picked[0]]), "fake_mode", None)
    if fake_mode is None or any(name == NAME for name in (n.name for g in (fw, bw) for n in g.graph.nodes)):
        return False
    aten = torch.ops.aten

    # Forward: one concat before the output; the picked outputs leave, the packed one is the
    # last saved tensor.
    flat = []
    for i in picked:
        node, val = saved[i], _val(saved[i])
        if val.dim() != 1:
            with fw.graph.inserting_before(fw_out):
                node = fw.graph.call_function(aten.view.default, (node, [val.numel()]))
            with fake_mode:
                node.meta["val"] = aten.view.default(val, [val.numel()])
        flat.append(node)
    with fw.graph.inserting_before(fw_out):
        packed = fw.graph.create_node("call_function", aten.cat.default, (flat, 0), name=NAME)
    with fake_mode:
        packed.meta["val"] = aten.cat.default([_val(n) for n in flat], 0)
    keep = [n for i, n in enumerate(saved) if i not in set(picked)]
    fw_out.args = (tuple(outs[: len(outs) - num_saved]) + tuple(keep) + (packed,),)

    # Backward: one placeholder after the kept saved ones, each picked one a slice of it.
    anchor = bw_inputs[num_saved] if num_saved < len(bw_inputs) else None
    if anchor is not None:
        ctx = bw.graph.inserting_before(anchor)
    else:
        ctx = bw.graph.inserting_after(bw_inputs[num_saved - 1])
    with ctx:
        packed_in = bw.graph.placeholder(NAME)
    packed_in.meta["val"] = packed.meta["val"]
    if packed.name != NAME or packed_in.name != NAME:
        raise AssertionError(f"packed saved tensor named {packed.name} / {packed_in.name}")
    first_op = next(n for n in bw.graph.nodes if n.op != "placeholder")
    offset = 0
    for i in picked:
        old = bw_inputs[i]
        n = _val(old).numel()
        with bw.graph.inserting_before(first_op):
            piece = bw.graph.call_function(aten.slice.Tensor, (packed_in, 0, offset, offset + n))
        with fake_mode:
            piece.meta["val"] = aten.slice.Tensor(packed_in.meta["val"], 0, offset, offset + n)
        shape = list(_val(old).shape)
        if len(shape) != 1:
            with bw.graph.inserting_before(first_op):
                piece_1d, piece = piece, bw.graph.call_function(aten.view.default, (piece, shape))
            with fake_mode:
                piece.meta["val"] = aten.view.default(piece_1d.meta["val"], shape)
        offset += n
        old.replace_all_uses_with(piece)
        bw.graph.erase_node(old)
        _refresh_views(piece, fake_mode)
    fw.graph.lint()
    bw.graph.lint()
    fw.recompile()
    bw.recompile()
    log.debug("tccd: packed %d small saved tensors (%d elements) into one", len(picked), offset)
    return True
