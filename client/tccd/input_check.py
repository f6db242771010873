"""The ahead-of-time flow's input check: a saved function checks its graph inputs itself, in
place of the per-tensor guards (TENSOR_MATCH) Dynamo would otherwise save and rebuild at every
load (issue 11; README "Warm start: the AOT flow's tensor guards as one input check").

Why here and not in the native plan: the plan runtime (tccd_plan_runtime.c, check_input) sees a
kernel's inputs through AOTInductor's C shim, which exposes dtype, sizes, strides and device but
not requires_grad, the Python type or the dispatch keys (an inference tensor, a conjugate or
negative view, a tensor subclass or mode, a functorch wrapper), and it checks nothing of an
extern step's inputs. The check that covers all of them already exists in torch: the C++
TensorGuards (torch._C._dynamo.guards, in 2.11 and 2.15 alike), whose per-tensor TensorCheck is
what a TENSOR_MATCH guard runs. One TensorGuards per saved graph, built at load from the facts
saved beside the recipe, checks every covered input in one call (~0.1 us a tensor on the CPU
machine: input_check_bench.py), before AOTAutograd's runtime decides anything from
requires_grad.

What a covered input's TENSOR_MATCH guard checked, and what checks it now:
  - Python type (Tensor / Parameter), dispatch keys (device type, inference, conj/neg bits,
    Python key of subclasses and modes, functorch), dtype, device index, requires_grad, sizes
    and strides (static dims; a symbolic dim is None in both): TensorGuards, the same C++ check.
  - NO_TENSOR_ALIASING (Dynamo builds it from its TENSOR_MATCH guards, over the inputs that are
    not nn.Parameters: config.skip_no_tensor_aliasing_guards_on_parameters): TensorGuards
    refuses one tensor object at two of its positions, Parameters included (stricter than
    Dynamo's default, which lets a Parameter alias another unnoticed).
  - The dimension-marking attributes (`_dynamo_dynamic_indices` and kin, a recompile's
    bookkeeping: a loaded function never recompiles): not checked; a tensor marked dynamic
    runs the saved static plan when its sizes match. An input that carried such marks at save
    keeps its guard (covered() below).
Only inputs whose value at save was a plain strided tensor are covered (covered()); any other
keeps its TENSOR_MATCH guard. Not covered by either and still guarded by what lean_guards keeps:
DUPLICATE_INPUT (two sources that must be one tensor), grad mode / autocast / other global state.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import torch

# The attributes Dynamo's TENSOR_MATCH guards besides the tensor's facts (torch/_dynamo/guards.py:
# dim_marking_attrs and the gated ones). A tensor carrying any at save keeps its guard.
_DIM_MARKS = ("_dynamo_dynamic_indices", "_dynamo_weak_dynamic_indices", "_dynamo_unbacked_indices",
              "_dynamo_strict_unbacked_indices", "_dynamo_static_indices", "_has_dynamo_dim_marking")


def _reference(dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """A plain tensor's dispatch keys on `device`, whatever the caller's inference mode."""
    with torch.inference_mode(False):
        return torch.empty(0, dtype=dtype, device=device)


def covered(value: Any, size: Sequence[Optional[int]], stride: Sequence[Optional[int]]) -> bool:
    """Whether `value` (a graph input's real tensor while saving) is one whose TENSOR_MATCH guard
    the input check fully replaces: a Tensor or Parameter, strided, with a plain tensor's
    dispatch keys on its device, no dimension marks, and the traced sizes and strides (`size`,
    `stride`: the graph's, None where symbolic)."""
    if type(value) not in (torch.Tensor, torch.nn.Parameter) or value.layout != torch.strided:
        return False
    if any(hasattr(value, a) for a in _DIM_MARKS):
        return False
    if torch._C._dispatch_keys(value) != torch._C._dispatch_keys(_reference(value.dtype, value.device)):
        return False
    return (len(size) == value.dim() and len(stride) == value.dim()
            and all(s is None or s == v for s, v in zip(size, value.shape))
            and all(s is None or s == v for s, v in zip(stride, value.stride())))


def facts(index: int, name: str, value: torch.Tensor, size: Sequence[Optional[int]],
          stride: Sequence[Optional[int]]) -> Dict[str, Any]:
    """The JSON facts of a covered graph input (`index` in the graph's inputs, `name`: its
    source, as guard messages print it)."""
    return {
        "index": index,
        "name": name,
        "dtype": str(value.dtype).removeprefix("torch."),
        "device": str(value.device),
        "size": [None if s is None else int(s) for s in size],
        "stride": [None if s is None else int(s) for s in stride],
        "requires_grad": bool(value.requires_grad),
        "parameter": type(value) is torch.nn.Parameter,
    }


class InputCheck:
    """The check of one loaded graph's inputs, built from facts(): check(args) raises
    RuntimeError naming the input and what differs; returns None when they fit."""

    def __init__(self, inputs: List[Dict[str, Any]], n_args: int):
        from torch._C._dynamo.guards import TensorGuards

        self.names = [i["name"] for i in inputs]
        self.indices = [int(i["index"]) for i in inputs]
        self.n_args = n_args
        # Every argument a covered tensor, in order: check(*args) without building a list.
        self.all_args = self.indices == list(range(n_args))
        refs = []
        for i in inputs:
            try:
                ref = _reference(getattr(torch, i["dtype"]), torch.device(i["device"]))
            except (AttributeError, RuntimeError) as e:
                raise RuntimeError(f"tccd: the saved function's input {i['name']} was a {i['dtype']} tensor on "
                                   f"{i['device']}, which this process cannot make: {e}") from None
            refs.append(torch.nn.Parameter(ref, requires_grad=i["requires_grad"]) if i["parameter"]
                        else ref.requires_grad_(i["requires_grad"]))
        # TensorGuards records the dispatch-key state of this thread now, as a TENSOR_MATCH guard
        # built at load does: a call under other thread-local dispatch keys fails both alike.
        self.guards = TensorGuards(*refs, dynamic_dims_sizes=[i["size"] for i in inputs],
                                   dynamic_dims_strides=[i["stride"] for i in inputs])

    def check(self, args: Sequence[Any]) -> None:
        if len(args) != self.n_args:
            raise RuntimeError(f"tccd: the loaded function was saved for {self.n_args} graph inputs, called with "
                               f"{len(args)}")
        # One C++ call: every covered input's type, dispatch keys, dtype, device index,
        # requires_grad, sizes and strides, and no tensor at two positions.
        ok = self.guards.check(*args) if self.all_args else self.guards.check(*[args[i] for i in self.indices])
        if not ok:
            raise RuntimeError(f"tccd: the loaded function refuses its inputs: {self.why(args)} (the saved "
                               "function checks its graph inputs in place of Dynamo's tensor guards: "
                               "TCCD_AOT_INPUT_CHECK)")

    def why(self, args: Sequence[Any]) -> str:
        """What differs, in a guard failure's words (the slow path: only after a failed check)."""
        picked = [args[i] for i in self.indices]
        if not all(isinstance(a, torch.Tensor) for a in picked):
            bad = next(n for n, a in zip(self.names, picked) if not isinstance(a, torch.Tensor))
            return f"'{bad}' is not a tensor"
        verbose = self.guards.check_verbose(*picked, tensor_check_names=self.names)
        if verbose is True:
            return "an input differs from the saved ones"
        if str(verbose).startswith("Duplicate tensor"):  # torch's words run the name into the next one
            seen: Dict[int, str] = {}
            for name, value in zip(self.names, picked):
                if id(value) in seen:
                    return f"'{seen[id(value)]}' and '{name}' are one tensor; the function was saved for distinct ones"
                seen[id(value)] = name
        return str(verbose)
