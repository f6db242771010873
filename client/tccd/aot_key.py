"""The key of an AOT recipe: what decides what AOTAutograd makes of one Dynamo graph.

    key, why_not = recipe_key(gm, example_inputs, mode=..., options=..., partitioner=...)

`key` is a SHA-256 hex digest, or None with `why_not` saying why this graph gets no recipe (the
backend then takes the normal AOTAutograd path, which is always correct).

In the key (everything that changes the forward/backward graphs or the runtime metadata
AOTAutograd derives from the Dynamo graph):
  - RECIPE_KEY_VERSION, the torch version, the tccd client version;
  - the Dynamo graph: per node in order, its op, name, type and the qualified name of its
    target, and the repr of its args and kwargs (nodes print as their names): what its Python
    code (`gm.code`) is generated from, without generating it (Dynamo's graph modules are lazy:
    on a recipe hit nothing else asks for the code, and generating it was 0.04 CPU s of GPT-2's
    warm backend call, profiled); a graph with its own code generator (pytree in/out specs) or a
    node printed by a custom repr takes its generated code instead;
  - every example input: type, sizes, strides, storage offset, dtype, device, layout,
    requires_grad, is_leaf, whether it is a view, whether it is an inference tensor;
  - the global state AOTAutograd reads while tracing: grad mode, inference mode, per-device
    autocast state and dtype, deterministic algorithms, the default dtype, the SDPA backend
    flags (they pick the attention op that ends up in the ATen graph), and the functorch config;
  - the backend's mode, options and partitioner.
Not in it: FX node names beyond what the code prints, the job id, the rank.

No key (bypass) for anything whose behaviour the key cannot pin down: get_attr and call_module
nodes (constants and submodules whose values are not hashed), a graph module with parameters
or buffers, call_function targets outside the ops Dynamo puts in graphs (torch ops, builtins,
public torch functions), higher-order ops, non-tensor inputs (SymInts, Python scalars),
tensor subclasses, symbolic shapes, inputs that alias each other, and active saved-tensor hooks.
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any, List, Optional, Sequence, Tuple

import torch

# Bump when what enters the key changes, or when the meaning of a stored recipe does.
#   1: initial version.
#   2: the log_softmax recompute tags follow dtype casts (other forward/backward split).
#   3: input data mutations stay in the graph (keep_inference_input_mutations): other plans.
#   4: a 16-bit log_softmax's decomposition takes its logsumexp in f32 (other graphs, other
#      saved tensors).
#   5: the graph enters as its nodes' text, not as its generated Python code (_graph_text).
RECIPE_KEY_VERSION = 5

# Modules whose public callables Dynamo leaves in graphs as call_function targets.
_SAFE_MODULES = ("torch", "torch.functional", "torch.nn.functional", "_operator", "operator", "math")
# Functions Dynamo leaves in graphs whose effect is fixed by their (hashed) arguments: the
# autocast regions of a `with torch.autocast(...)` inside the compiled code (AOTAutograd traces
# through them; transformers' models open such regions, e.g. around rotary embeddings).
_SAFE_FUNCTIONS = ("torch.amp.autocast_mode._enter_autocast", "torch.amp.autocast_mode._exit_autocast")


class _Bypass(Exception):
    pass


def _target_name(target: Any) -> str:
    """A name that identifies a node's target across processes (or _Bypass)."""
    if isinstance(target, str):  # call_method
        return target
    if isinstance(target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return f"op:{target}"
    if isinstance(target, torch._ops.HigherOrderOperator):
        raise _Bypass(f"higher-order op {target} (its subgraphs are not hashed)")
    owner = getattr(target, "__objclass__", None)  # a method descriptor: torch.Tensor.add
    if owner is not None:
        return f"{owner.__module__}.{owner.__qualname__}.{target.__name__}"
    module = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", None) or ""
    # Stable means: importable under that name (torch.nn.functional.max_pool2d is a closure
    # whose __name__ is set, and resolves).
    if getattr(sys.modules.get(module), name, None) is not target:
        raise _Bypass(f"call_function target {target!r} is not reachable by its name")
    builtin = type(target).__name__ == "builtin_function_or_method"
    if (not builtin and module not in _SAFE_MODULES and f"{module}.{name}" not in _SAFE_FUNCTIONS
            and not _in_graph_torch_function(target)):
        raise _Bypass(f"call_function target {module}.{name} is not a torch op or builtin")
    return f"{module}.{name}"


def _in_graph_torch_function(target: Any) -> bool:
    try:
        from torch._dynamo.trace_rules import torch_non_c_binding_in_graph_functions as allowed
    except ImportError:  # deliberately ignored: older torch, fewer functions count as safe
        return False
    return f"{target.__module__}.{getattr(target, '__name__', '')}" in allowed


def _graph_part(gm: torch.fx.GraphModule) -> List[str]:
    if any(True for _ in gm.parameters()) or any(True for _ in gm.buffers()):
        raise _Bypass("the graph module owns parameters or buffers")
    if hasattr(gm, "saved_tensors_hooks_pack_0"):
        raise _Bypass("saved-tensor hooks were inlined into the graph")
    lines = _graph_text(gm)
    for node in gm.graph.nodes:
        if node.op in ("get_attr", "call_module"):
            raise _Bypass(f"{node.op} node {node.name} (its value is not hashed)")
        if node.op == "placeholder":
            value = node.meta.get("example_value")
            if isinstance(value, torch.Tensor) and _is_symbolic(value):
                raise _Bypass(f"input {node.name} has symbolic shapes")
            lines.append(f"placeholder {node.name}")
        elif node.op in ("call_function", "call_method"):
            lines.append(f"{node.op} {_target_name(node.target)}")
        else:
            lines.append(node.op)
    return lines


def _graph_text(gm: torch.fx.GraphModule) -> List[str]:
    """The graph's nodes as text: what gm.code is generated from (FX's default code generator
    prints each node from its op, name, target, args, kwargs and type), so two graphs with the same
    text have the same code. Reading gm.code of a lazy graph module generates the code (FX's
    recompile); this does not. The generated code is used where it holds more than the nodes: a
    graph whose code generator is not FX's default one (pytree in/out specs), or a node printed
    by a custom repr function."""
    graph = gm.graph
    if type(getattr(graph, "_codegen", None)) is not torch.fx.graph.CodeGen:
        return [gm.code]
    lines = []
    for node in graph.nodes:
        if getattr(node, "_repr_fn", None) is not None:
            return [gm.code]
        target = node.target if isinstance(node.target, str) else _target_name(node.target)
        lines.append(f"{node.op} {node.name} {target} {node.type!r} {_arg_text(node.args)} {_arg_text(node.kwargs)}")
    return lines


# Argument types whose repr names the value completely (FX's code prints them the same way).
_PLAIN_ARGS = (bool, int, float, complex, str, bytes, type(None), type(...), slice, torch.dtype, torch.device,
               torch.memory_format, torch.layout)


def _arg_text(arg: Any) -> str:
    """A node argument as text: nodes by name, containers element by element, plain values by
    repr, anything else by its type's qualified name and its repr (a repr with an address in it
    makes the key differ between processes: a miss, never a wrong hit)."""
    if isinstance(arg, torch.fx.Node):
        return f"%{arg.name}"
    # FX's immutable_list and immutable_dict included; a named tuple keeps its type's name below.
    if isinstance(arg, (list, tuple)) and not hasattr(arg, "_fields"):
        inner = ", ".join(_arg_text(a) for a in arg)
        return f"[{inner}]" if isinstance(arg, list) else f"({inner})"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k!r}: {_arg_text(v)}" for k, v in arg.items()) + "}"
    if type(arg) in _PLAIN_ARGS:
        return repr(arg)
    return f"{type(arg).__module__}.{type(arg).__qualname__}:{arg!r}"


def _is_symbolic(t: torch.Tensor) -> bool:
    dims = list(t.shape) + list(t.stride()) + [t.storage_offset()]
    return any(isinstance(d, torch.SymInt) for d in dims)


def _inputs_part(example_inputs: Sequence[Any]) -> List[str]:
    lines = []
    storages = {}
    for i, x in enumerate(example_inputs):
        if type(x) not in (torch.Tensor, torch.nn.Parameter):
            raise _Bypass(f"input {i} is a {type(x).__name__}, not a plain tensor")
        if x.layout != torch.strided or _is_symbolic(x):
            raise _Bypass(f"input {i} is not a strided tensor with static shape")
        storage = x.untyped_storage().data_ptr() if x.device.type != "meta" else None
        if storage is None or storage in storages:
            raise _Bypass(f"input {i} may alias input {storages.get(storage)}")
        storages[storage] = i
        lines.append(
            f"{type(x).__name__} {tuple(x.shape)} {x.stride()} {x.storage_offset()} {x.dtype} "
            f"{x.device} rg={x.requires_grad} leaf={x.is_leaf} view={x._is_view()} "
            f"inference={x.is_inference()}"
        )
    return lines


def _state_part() -> List[str]:
    import torch._functorch.config as functorch_config

    if torch._C._autograd._top_saved_tensors_default_hooks(False) is not None:
        raise _Bypass("saved-tensor hooks are active")
    autocast = []
    for device_type in torch._C._autocast_supported_devices():
        try:
            autocast.append(
                (device_type, torch.is_autocast_enabled(device_type), str(torch.get_autocast_dtype(device_type)))
            )
        except (RuntimeError, TypeError):  # deliberately ignored: a device type without autocast
            continue
    functorch = repr(sorted(functorch_config.save_config_portable().items()))
    if " at 0x" in functorch:
        raise _Bypass("the functorch config holds a value without a stable repr")
    sdpa = torch.backends.cuda
    return [
        f"grad={torch.is_grad_enabled()} inference_mode={torch.is_inference_mode_enabled()}",
        f"autocast={autocast} any={torch._C._is_any_autocast_enabled()}",
        f"deterministic={torch.are_deterministic_algorithms_enabled()}",
        f"default_dtype={torch.get_default_dtype()}",
        f"sdpa={sdpa.flash_sdp_enabled()},{sdpa.mem_efficient_sdp_enabled()},"
        f"{sdpa.math_sdp_enabled()},{getattr(sdpa, 'cudnn_sdp_enabled', lambda: None)()}",
        f"functorch={functorch}",
    ]


def recipe_key(
    gm: torch.fx.GraphModule,
    example_inputs: Sequence[Any],
    *,
    mode: Optional[str],
    options: Optional[dict],
    partitioner: str,
) -> Tuple[Optional[str], Optional[str]]:
    """(key, None), or (None, why this graph gets no recipe)."""
    from . import __version__

    try:
        parts = [
            f"tccd-aot-recipe/{RECIPE_KEY_VERSION}/{torch.__version__}/{__version__}",
            f"mode={mode!r} partitioner={partitioner}",
            "options=" + json.dumps(options, sort_keys=True, default=repr),
            *_state_part(),
            *_graph_part(gm),
            *_inputs_part(example_inputs),
        ]
    except _Bypass as e:
        return None, str(e)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest(), None
