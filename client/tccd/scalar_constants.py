"""Fills by a lifted CPU scalar constant become fills by its number (TCCD_FOLD_SCALAR_FILLS).

On a CUDA tensor, ATen's `__setitem__` makes a Python scalar a CPU 0-dim tensor, so HF T5's
`_shift_right` (`shifted_input_ids[..., 0] = decoder_start_token_id`) reaches the backend as

    _tensor_constant0 = self._tensor_constant0          # i64[] on the CPU
    lift_fresh_copy = aten.lift_fresh_copy(_tensor_constant0)
    fill = aten.fill.Tensor(select, lift_fresh_copy)

A graph with a lifted constant gets no AOT recipe (the recipe rebuilds a runtime from plan keys,
and constants travel beside the plan: backend._wrap_plan abandons the capture), so it never
switches to the lean runtime (TCCD_LEAN_RUNTIME) and runs AOTAutograd's wrappers every step; and
the daemon plans the three nodes as extern steps between two segments. `fill.Tensor(x, v)` with
a 0-dim CPU `v` is ATen's `fill.Scalar(x, v.item())` (fill_'s Tensor overload reads the value on
the host and calls the Scalar one), so the fill takes the number and the constant, then unread,
is removed: the graph has no constant left, the fill fuses with its neighbours.

Only fills, and only constants of the graph itself (a get_attr, directly or through
lift_fresh_copy / lift_fresh): a CPU scalar graph input may change between calls.
"""

from __future__ import annotations

from typing import Optional, Union

import torch

aten = torch.ops.aten

_FILLS = {
    aten.fill.Tensor: aten.fill.Scalar,
    aten.fill_.Tensor: aten.fill_.Scalar,
}
_LIFTS = (aten.lift_fresh_copy.default, aten.lift_fresh.default)


def _attribute(gm: torch.fx.GraphModule, target: str):
    value = gm
    for part in target.split("."):
        value = getattr(value, part, None)
    return value


def _constant_number(gm: torch.fx.GraphModule, node: object) -> Optional[Union[bool, int, float]]:
    """The number a 0-dim CPU constant of the graph holds, or None."""
    if isinstance(node, torch.fx.Node) and node.op == "call_function" and node.target in _LIFTS:
        node = node.args[0]
    if not isinstance(node, torch.fx.Node) or node.op != "get_attr":
        return None
    value = _attribute(gm, node.target)
    if type(value) not in (torch.Tensor, torch.nn.Parameter) or value.device.type != "cpu" or value.dim() != 0:
        return None  # fake or subclass tensors, other devices, non-scalars: left alone
    if value.is_complex():
        return None
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily():  # compilers run under AOTAutograd's fake mode
        return value.item()


def fold_scalar_fills(gm: torch.fx.GraphModule) -> int:
    """Rewrites fill(x, <CPU scalar constant>) as fill(x, number) in place; returns how many."""
    folded = 0
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target not in _FILLS or len(node.args) != 2 or node.kwargs:
            continue
        number = _constant_number(gm, node.args[1])
        if number is None:
            continue
        node.target = _FILLS[node.target]
        node.args = (node.args[0], number)
        folded += 1
    if folded:
        # The lifts and constants now unread (lift_fresh_copy is pure; get_attr nodes too).
        for node in reversed(list(gm.graph.nodes)):
            if node.op == "call_function" and node.target in _LIFTS and not node.users:
                gm.graph.erase_node(node)
        for node in list(gm.graph.nodes):
            if node.op == "get_attr" and not node.users:
                gm.graph.erase_node(node)
        gm.recompile()
    return folded
