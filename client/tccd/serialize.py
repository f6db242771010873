"""FX GraphModule (ATen-level, from AOTAutograd) -> tccd.v1.CompileRequest.

The encoding is the one tccd.proto documents:
  * placeholders become Graph.inputs (TensorMeta from node.meta["val"]); a use of input i is
    ValueRef(node=-(i+1), output=0);
  * every call_function whose target is an OpOverload becomes one Node, target
    "ns::name.overload" ("aten::relu.default"); a use of it is ValueRef(node=id, output=0);
  * `operator.getitem(multi_output_node, i)` emits no Node: its uses are ValueRef(node=id,
    output=i). An output the op returns as None (convolution_backward with an output mask)
    keeps its position in Node.outputs as an empty placeholder: a 1-D tensor of 0 elements with
    the dtype and device of the node's first tensor output. Nothing ever references it (FX has no
    getitem of a None), so the daemon's plan leaves it undefined (Step.outputs id -1);
  * nodes that compute a Python scalar (sym_size on a SymInt, ...) emit no Node either: their
    uses encode the scalar (int_value, or sym_expr for a symbolic one);
  * `with_effects(token, op, *args)` (the higher-order op AOTAutograd wraps around ops with
    side effects, e.g. linalg's `_linalg_check_errors`, threading an effect token from a graph
    input to a graph output) becomes one Node of `op`; the token it returns (getitem 0) is the
    token it was given, its other results are the Node's outputs. The daemon keeps such a Node
    (ops it does not know as pure are never removed) and runs steps in graph order, which is
    the order the tokens impose;
  * the output node becomes Graph.outputs.
Anything else (call_module, get_attr, a non-OpOverload call_function, a non-tensor graph input)
raises Unsupported: the backend then runs that graph eagerly.
"""

from __future__ import annotations

import functools
import operator
import os
import platform
import socket
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
import torch.fx

from .errors import Unsupported
from .sym_eval import SymbolNames, symbol_index
from .v1 import tccd_pb2 as pb

# torch.dtype <-> tccd.v1.DType. Dtypes missing here (float8, quantized, ...) are Unsupported.
DTYPE_TO_PROTO: Dict[torch.dtype, int] = {
    torch.float32: pb.FLOAT32,
    torch.float64: pb.FLOAT64,
    torch.float16: pb.FLOAT16,
    torch.bfloat16: pb.BFLOAT16,
    torch.int8: pb.INT8,
    torch.int16: pb.INT16,
    torch.int32: pb.INT32,
    torch.int64: pb.INT64,
    torch.uint8: pb.UINT8,
    torch.bool: pb.BOOL,
    torch.complex64: pb.COMPLEX64,
    torch.complex128: pb.COMPLEX128,
    # Types only extern steps compute on.
    torch.complex32: pb.COMPLEX32,
    torch.uint16: pb.UINT16,
    torch.uint32: pb.UINT32,
    torch.uint64: pb.UINT64,
}
PROTO_TO_DTYPE: Dict[int, torch.dtype] = {v: k for k, v in DTYPE_TO_PROTO.items()}

DEVICE_TO_PROTO = {"cpu": pb.CPU, "cuda": pb.CUDA, "meta": pb.META}
PROTO_TO_DEVICE = {v: k for k, v in DEVICE_TO_PROTO.items()}

# Value.memory_format codes (tccd.proto).
MEMORY_FORMAT_TO_PROTO = {
    torch.contiguous_format: 0,
    torch.channels_last: 1,
    torch.preserve_format: 2,
    torch.channels_last_3d: 3,
}
PROTO_TO_MEMORY_FORMAT = {v: k for k, v in MEMORY_FORMAT_TO_PROTO.items()}
# Value.layout codes: only strided tensors exist in tccd graphs.
LAYOUT_TO_PROTO = {torch.strided: 0}
PROTO_TO_LAYOUT = {v: k for k, v in LAYOUT_TO_PROTO.items()}

_SYM_TYPES = (torch.SymInt, torch.SymFloat, torch.SymBool)


def op_target_name(op: "torch._ops.OpOverload") -> str:
    """"aten::add.Tensor" for torch.ops.aten.add.Tensor ("default" overloads are spelled out)."""
    return f"{op._schema.name}.{op._overloadname}"


# ---------------------------------------------------------------------------------------------
# Scalars, dims and tensor metadata
# ---------------------------------------------------------------------------------------------


def _sym_str(sym: Any) -> str:
    node = getattr(sym, "node", None)
    expr = getattr(node, "expr", None)
    return str(expr) if expr is not None else str(sym)


def _concrete(sym: Any) -> Optional[Any]:
    """The Python value of a SymInt/SymFloat/SymBool that is really a constant, else None."""
    node = getattr(sym, "node", None)
    if node is None:
        return None
    for attr in ("maybe_as_int", "maybe_as_float", "maybe_as_bool"):
        fn = getattr(node, attr, None)
        if fn is not None:
            try:
                value = fn()
            except Exception:  # deliberately ignored: only a probe for constness
                value = None
            if value is not None:
                return value
    return None


def _dim(value: Any, names: Optional[SymbolNames] = None) -> "pb.Dim":
    if isinstance(value, torch.SymInt):
        constant = _concrete(value)
        if constant is not None:
            return pb.Dim(value=int(constant))
        return pb.Dim(expr=names.text(value) if names is not None else _sym_str(value))
    return pb.Dim(value=int(value))


def _device(device: torch.device) -> "pb.Device":
    kind = DEVICE_TO_PROTO.get(device.type)
    if kind is None:
        raise Unsupported(f"device type {device.type!r} is not supported")
    return pb.Device(type=kind, index=-1 if device.index is None else device.index)


def tensor_meta(t: torch.Tensor, what: str, names: Optional[SymbolNames] = None) -> "pb.TensorMeta":
    """`names`: renames symbolic sizes canonically (a graph's encoder passes its own)."""
    if t.layout != torch.strided:
        raise Unsupported(f"{what}: layout {t.layout} is not supported (only strided)")
    dtype = DTYPE_TO_PROTO.get(t.dtype)
    if dtype is None:
        raise Unsupported(f"{what}: dtype {t.dtype} is not supported")
    return pb.TensorMeta(
        sizes=[_dim(s, names) for s in t.shape],
        strides=[_dim(s, names) for s in t.stride()],
        storage_offset=_dim(t.storage_offset(), names),
        dtype=dtype,
        device=_device(t.device),
        requires_grad=bool(t.requires_grad),
    )


# ---------------------------------------------------------------------------------------------
# Graph
# ---------------------------------------------------------------------------------------------


class _Multi:
    """Marker for a node returning several tensors: usable only through getitem."""

    __slots__ = ("node_id", "name", "scalars", "token")

    def __init__(
        self,
        node_id: int,
        name: str,
        scalars: Optional[Dict[int, Any]] = None,
        token: Optional["pb.ValueRef"] = None,
    ):
        self.node_id = node_id
        self.name = name
        # with_effects: getitem 0 is this effect token, getitem i the op's output i - 1.
        self.token = token
        # Outputs that are Python scalars (e.g. the max_q/max_k ints of cuDNN attention): their
        # getitem users see the traced value, like shape-derived scalars.
        self.scalars = scalars or {}


class _Scalar:
    """A node whose result is a Python scalar: uses encode the value itself."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


# Outputs whose dtype ATen's kernels take from an argument where PyTorch's meta function says
# otherwise, as (output, argument) pairs. The functional batch norm's new running mean and
# variance: the meta function computes them from the f32 batch statistics and types them f32,
# the CPU and CUDA kernels return them in the running statistics' own dtype, so a module whose
# buffers are bf16 (.to(bfloat16), no autocast) had plans declaring f32 for bf16 tensors (the
# kernel that copies them into the buffers refused them: "input 21 has dtype code 15, the kernel
# takes 6").
_OUTPUT_DTYPE_OF_ARGUMENT = {
    "aten::_native_batch_norm_legit_functional.default": ((3, 3), (4, 4)),
}


def _meta_val(node: torch.fx.Node) -> Any:
    if "val" not in node.meta:
        raise Unsupported(f"node {node.name} has no meta['val'] (not an AOTAutograd graph?)")
    return node.meta["val"]


class GraphEncoder:
    """Encodes one GraphModule. Use `encode_graph(gm)`; this class only holds the node map."""

    def __init__(self, gm: torch.fx.GraphModule):
        self.gm = gm
        self.graph = pb.Graph()
        # fx node -> pb.ValueRef | _Multi | _Scalar
        self.env: Dict[torch.fx.Node, Any] = {}
        self.has_symbols = False
        self.constant_bytes = 0
        self.names = SymbolNames()
        # Graph inputs that are integers (SymInts of dynamic shapes): (placeholder position,
        # "sN" when the input is exactly symbol sN, else None). They are no plan inputs: the
        # caller drops them from each call's arguments and passes the symbols' values.
        self.scalar_inputs: List[Tuple[int, Optional[str]]] = []
        self.num_placeholders = 0
        # The metas of tensors of plain-int sizes, strides and offset built so far, by those and
        # dtype, device and requires_grad (_meta).
        self.static_metas: Dict[Any, "pb.TensorMeta"] = {}

    def _meta(self, t: torch.Tensor, what: str) -> "pb.TensorMeta":
        """tensor_meta(t, what, self.names), noting whether it has symbolic sizes.

        A graph has a few hundred distinct static metas among thousands of tensors; building a
        meta's ~10 Dim messages in Python and looking through them for symbols was 40% of an
        encode (T5's backward, 1673 nodes): a static one is built once and copied."""
        if t.layout == torch.strided:
            shape, strides, offset = tuple(t.shape), t.stride(), t.storage_offset()
            # Only plain ints: a SymInt compares symbolically (and may not hash).
            if type(offset) is int and all(type(d) is int for d in shape) and all(type(d) is int for d in strides):
                key = (shape, tuple(strides), offset, t.dtype, t.device, bool(t.requires_grad))
                known = self.static_metas.get(key)
                if known is None:
                    known = self.static_metas[key] = tensor_meta(t, what)
                meta = pb.TensorMeta()
                meta.CopyFrom(known)
                return meta
        meta = tensor_meta(t, what, self.names)
        self._note_symbols(meta)
        return meta

    def encode(self) -> "pb.Graph":
        output_node = None
        for node in self.gm.graph.nodes:
            if node.op == "placeholder":
                self._placeholder(node)
            elif node.op == "call_function":
                self._call_function(node)
            elif node.op == "output":
                output_node = node
            elif node.op == "get_attr":
                self._constant(node)
            else:
                raise Unsupported(
                    f"node {node.name} is a {node.op} of {node.target!r}; tccd takes only ATen "
                    "call_function nodes"
                )
        if output_node is None:
            raise Unsupported("graph has no output node")
        results = output_node.args[0]
        if not isinstance(results, (tuple, list)):
            results = (results,)
        for value in results:
            self.graph.outputs.append(self._value(value, "graph output"))
        return self.graph

    def _placeholder(self, node: torch.fx.Node) -> None:
        val = _meta_val(node)
        position = self.num_placeholders
        self.num_placeholders += 1
        if isinstance(val, (torch.SymInt, int)) and not isinstance(val, bool):
            # An integer input (a dynamic size Dynamo or AOTAutograd passes): its uses carry
            # its expression, and each call binds its symbol from the argument.
            symbol = None
            if isinstance(val, torch.SymInt) and _concrete(val) is None:
                text = self.names.text(val)
                symbol = text if symbol_index(text) is not None else None
                self.has_symbols = True
            self.scalar_inputs.append((position, symbol))
            self.env[node] = _Scalar(val)
            return
        if not isinstance(val, torch.Tensor):
            raise Unsupported(
                f"graph input {node.name} is a {type(val).__name__}, not a tensor or an integer"
            )
        meta = self._meta(val, f"graph input {node.name}")
        index = len(self.graph.inputs)
        self.graph.inputs.append(meta)
        self.env[node] = pb.ValueRef(node=-(index + 1), output=0)

    def _constant(self, node: torch.fx.Node) -> None:
        """A tensor attribute (a constant AOTAutograd lifted): one more graph input whose bytes
        travel in Graph.constants; the caller appends its value to every call's inputs
        (constant_tensors(gm), in the same order)."""
        value = _attribute(self.gm, node.target)
        if not isinstance(value, torch.Tensor):
            raise Unsupported(
                f"node {node.name} reads graph attribute {node.target!r}, a "
                f"{type(value).__name__} (tccd graphs take tensor constants only)"
            )
        limit = config_max_constant_bytes()
        self.constant_bytes += value.numel() * value.element_size()
        if self.constant_bytes > limit:
            raise Unsupported(
                f"the graph's constants ({node.target!r} and earlier) take {self.constant_bytes} "
                f"bytes, over the limit of {limit} (TCCD_MAX_CONSTANT_MB)"
            )
        with _real_tensors():
            dense = value.detach().contiguous()
            data = _tensor_bytes(dense)
        meta = tensor_meta(dense, f"constant {node.target}")
        meta.requires_grad = False
        index = len(self.graph.inputs)
        self.graph.inputs.append(meta)
        self.graph.constants.append(pb.Constant(input=index, data=data))
        self.env[node] = pb.ValueRef(node=-(index + 1), output=0)

    def _call_function(self, node: torch.fx.Node) -> None:
        target = node.target
        val = node.meta.get("val")
        if target is operator.getitem:
            self._getitem(node)
            return
        if target is _with_effects():
            self._with_effects(node)
            return
        if isinstance(val, (bool, int, float) + _SYM_TYPES) and not isinstance(val, torch.Tensor):
            # A scalar computed from shapes (sym_size.int, sym arithmetic): no Node; its uses
            # carry the value (or its expression).
            self.env[node] = _Scalar(val)
            return
        if not isinstance(target, torch._ops.OpOverload):
            raise Unsupported(
                f"node {node.name} calls {getattr(target, '__name__', target)!r}, which is not "
                "an ATen operator overload"
            )
        self._op_node(node, target, node.args, _meta_val(node))

    def _with_effects(self, node: torch.fx.Node) -> None:
        token, op = node.args[0], node.args[1]
        if not isinstance(op, torch._ops.OpOverload):
            raise Unsupported(f"node {node.name} runs {op!r} with effects, which is not an ATen overload")
        token_ref = self.env.get(token) if isinstance(token, torch.fx.Node) else None
        if not isinstance(token_ref, pb.ValueRef):
            raise Unsupported(f"node {node.name}: its effect token is not a tensor of the graph")
        results = tuple(_meta_val(node))[1:]  # (token, *op outputs)
        if len(results) == 1:
            results = results[0]  # None, one tensor, or a tuple (a multi-output op)
        self._op_node(node, op, node.args[2:], results)
        entry = self.env.get(node)
        if isinstance(entry, pb.ValueRef):  # one tensor output: getitem 1
            entry = _Multi(entry.node, node.name)
        entry.token = token_ref
        self.env[node] = entry

    def _op_node(self, node: torch.fx.Node, target: Any, args: Sequence[Any], val: Any) -> None:
        """One Node calling `target` on `args` (and node.kwargs) whose result is `val`."""
        name = op_target_name(target)
        node_id = len(self.graph.nodes)
        # Built in place (an appended message is copied whole); an Unsupported below fails the
        # whole encode, so a half-built node is never sent.
        pb_node = self.graph.nodes.add(target=name)
        for i, arg in enumerate(args):
            pb_node.args.append(self._value(arg, f"{node.name} argument {i}"))
        for key, arg in node.kwargs.items():
            pb_node.kwargs.append(
                pb.NamedValue(name=key, value=self._value(arg, f"{node.name} argument {key!r}"))
            )
        if isinstance(val, torch.Tensor):
            pb_node.outputs.append(self._meta(val, f"output of {node.name}"))
            self.env[node] = pb.ValueRef(node=node_id, output=0)
        elif isinstance(val, (tuple, list)):
            tensors = [t for t in val if isinstance(t, torch.Tensor)]
            scalars: Dict[int, Any] = {}
            for i, item in enumerate(val):
                if item is None and tensors:
                    pb_node.outputs.append(self._absent_output(tensors[0]))
                elif isinstance(item, torch.Tensor):
                    pb_node.outputs.append(self._meta(item, f"output {i} of {node.name}"))
                elif isinstance(item, (bool, int, float) + _SYM_TYPES) and tensors:
                    # A scalar output: a placeholder slot in the node, its value in its users.
                    pb_node.outputs.append(self._absent_output(tensors[0]))
                    scalars[i] = item
                else:
                    raise Unsupported(
                        f"output {i} of {node.name} ({name}) is a {type(item).__name__}"
                    )
            self.env[node] = _Multi(node_id, node.name, scalars)
            for out_i, arg_i in _OUTPUT_DTYPE_OF_ARGUMENT.get(name, ()):
                stat = args[arg_i].meta.get("val") if len(args) > arg_i and isinstance(args[arg_i], torch.fx.Node) else None
                if isinstance(stat, torch.Tensor) and out_i < len(pb_node.outputs):
                    pb_node.outputs[out_i].dtype = tensor_meta(stat, f"argument {arg_i} of {node.name}").dtype
        elif val is None:
            self.env[node] = _Multi(node_id, node.name)  # returns nothing; unusable as a value
        else:
            raise Unsupported(f"{node.name} ({name}) returns a {type(val).__name__}")
        # Symbols were noted by _meta (absent outputs have none).

    @staticmethod
    def _absent_output(like: torch.Tensor) -> "pb.TensorMeta":
        """Stands in for an output the op returned as None (see the module comment)."""
        meta = tensor_meta(like, "absent output")
        return pb.TensorMeta(
            sizes=[pb.Dim(value=0)],
            strides=[pb.Dim(value=1)],
            storage_offset=pb.Dim(value=0),
            dtype=meta.dtype,
            device=meta.device,
        )

    def _getitem(self, node: torch.fx.Node) -> None:
        source, index = node.args
        producer = self.env.get(source) if isinstance(source, torch.fx.Node) else None
        if not isinstance(producer, _Multi) or not isinstance(index, int):
            raise Unsupported(
                f"node {node.name} indexes {getattr(source, 'name', source)!r}, which is not a "
                "multi-output ATen node"
            )
        if producer.token is not None:
            if index == 0:
                self.env[node] = producer.token
                return
            index -= 1
        if index in producer.scalars:
            self.env[node] = _Scalar(producer.scalars[index])
            return
        self.env[node] = pb.ValueRef(node=producer.node_id, output=index)

    def _note_symbols(self, meta: "pb.TensorMeta") -> None:
        for dim in list(meta.sizes) + list(meta.strides) + [meta.storage_offset]:
            if dim.WhichOneof("kind") == "expr":
                self.has_symbols = True
                return

    def _value(self, arg: Any, what: str) -> "pb.Value":
        if isinstance(arg, torch.fx.Node):
            entry = self.env.get(arg)
            if entry is None:
                raise Unsupported(f"{what} uses {arg.name}, which was not defined before it")
            if isinstance(entry, pb.ValueRef):
                return pb.Value(ref=entry)
            if isinstance(entry, _Scalar):
                return self._value(entry.value, what)
            raise Unsupported(
                f"{what} uses the tuple result of {entry.name} directly (expected getitem)"
            )
        if arg is None:
            return pb.Value(none=True)
        # bool before int: bool is an int subclass.
        if isinstance(arg, bool):
            return pb.Value(bool_value=arg)
        if isinstance(arg, int):
            return pb.Value(int_value=arg)
        if isinstance(arg, float):
            return pb.Value(float_value=arg)
        if isinstance(arg, str):
            return pb.Value(string_value=arg)
        if isinstance(arg, _SYM_TYPES):
            constant = _concrete(arg)
            if constant is not None:
                return self._value(constant, what)
            if not isinstance(arg, torch.SymInt):
                raise Unsupported(f"{what} is a symbolic {type(arg).__name__} (only SymInts are supported)")
            self.has_symbols = True
            return pb.Value(sym_expr=self.names.text(arg))
        if isinstance(arg, torch.dtype):
            dtype = DTYPE_TO_PROTO.get(arg)
            if dtype is None:
                raise Unsupported(f"{what}: dtype {arg} is not supported")
            return pb.Value(dtype=dtype)
        if isinstance(arg, torch.device):
            return pb.Value(device=_device(arg))
        if isinstance(arg, torch.layout):
            if arg not in LAYOUT_TO_PROTO:
                raise Unsupported(f"{what}: layout {arg} is not supported")
            return pb.Value(layout=LAYOUT_TO_PROTO[arg])
        if isinstance(arg, torch.memory_format):
            return pb.Value(memory_format=MEMORY_FORMAT_TO_PROTO[arg])
        if isinstance(arg, (list, tuple)):
            items = [self._value(item, what) for item in arg]
            return pb.Value(list=pb.ValueList(items=items))
        raise Unsupported(f"{what} is a {type(arg).__name__} ({arg!r}), which tccd cannot encode")


def _with_effects() -> Any:
    """torch.ops.higher_order.with_effects, or None in a torch without effect tokens."""
    try:
        from torch._higher_order_ops.effects import with_effects

        return with_effects
    except ImportError:
        return None


def _attribute(gm: torch.fx.GraphModule, target: str) -> Any:
    value: Any = gm
    for part in target.split("."):
        value = getattr(value, part)
    return value


def _real_tensors():
    """Compilers run under AOTAutograd's fake mode; constants are real tensors."""
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    return unset_fake_temporarily()


def _tensor_bytes(t: torch.Tensor) -> bytes:
    """The contiguous tensor's bytes, in memory order (little-endian on every target)."""
    flat = t.reshape(-1).cpu()
    if flat.dtype == torch.bool:
        flat = flat.to(torch.uint8)
    return flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""


def config_max_constant_bytes() -> int:
    from . import config

    return config.get().max_constant_bytes


def constant_tensors(gm: torch.fx.GraphModule) -> List[torch.Tensor]:
    """The values of the graph's constant inputs, in Graph.constants order (contiguous, as
    encoded): the plan takes them after the graph's own inputs."""
    with _real_tensors():
        return [
            _attribute(gm, node.target).detach().contiguous()
            for node in gm.graph.nodes
            if node.op == "get_attr"
        ]


def encode_graph(gm: torch.fx.GraphModule) -> Tuple["pb.Graph", bool]:
    """Returns the Graph and whether it mentions symbolic sizes."""
    encoder = GraphEncoder(gm)
    graph = encoder.encode()
    return graph, encoder.has_symbols


# ---------------------------------------------------------------------------------------------
# Request
# ---------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _cpu_features() -> Tuple[str, ...]:
    """The CPU flags as /proc/cpuinfo names them ("flags" on x86, "Features" on arm)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("flags", "Features"):
                    return tuple(value.split())
    except OSError:
        pass
    return ()


def build_target(graph: "pb.Graph") -> "pb.Target":
    metas = list(graph.inputs) + [m for n in graph.nodes for m in n.outputs if m.dtype]
    kinds = sorted({m.device.type for m in metas})
    if len(kinds) == 2 and pb.CPU in kinds and pb.CUDA in kinds:
        # A CUDA graph may hold CPU tensors (0-dim scalars, lifted constants): only extern
        # steps touch them, fusion never mixes devices.
        kinds = [pb.CUDA]
    if len(kinds) > 1:
        names = ", ".join(PROTO_TO_DEVICE.get(k, str(k)) for k in kinds)
        raise Unsupported(f"graph mixes devices ({names})")
    kind = kinds[0] if kinds else pb.CPU
    if kind == pb.CPU:
        return pb.Target(
            device_type=pb.CPU, cpu_arch=platform.machine(), cpu_features=_cpu_features()
        )
    if kind == pb.CUDA:
        index = next((m.device.index for m in metas if m.device.index >= 0), 0)
        major, minor = torch.cuda.get_device_capability(index)
        return pb.Target(
            device_type=pb.CUDA,
            cuda_device_name=torch.cuda.get_device_name(index),
            cuda_cc_major=major,
            cuda_cc_minor=minor,
        )
    raise Unsupported(f"graph runs on {PROTO_TO_DEVICE.get(kind, kind)}, which tccd cannot target")


def build_shape_env(example_inputs: Sequence[Any], names: Optional[SymbolNames] = None) -> "pb.ShapeEnv":
    """Guards and hints of the fake mode's ShapeEnv (only called for symbolic graphs).

    With `names` (the graph's encoder's): only the facts over the graph's own symbols, renamed
    as the graph names them, plus their value ranges (`s0 >= 2`), so that the key holds what the
    code may rely on and nothing about other graphs; hints (example sizes) renamed too. They
    are informational: the daemon keeps them out of keys and plans."""
    shape_env_msg = pb.ShapeEnv()
    if names is not None:
        if names.shape_env is None:
            return shape_env_msg  # symbols without a ShapeEnv: no facts to tell
        shape_env_msg.guards.extend(names.facts())
        hints = getattr(names.shape_env, "backed_var_to_val", None)
        if hints is None:
            hints = getattr(names.shape_env, "var_to_val", {})
        for original, ours in names.by_original.items():
            try:
                shape_env_msg.hints[str(ours)] = int(hints[original])
            except (KeyError, TypeError, ValueError):
                continue  # a symbol without an integer hint: nothing to tell
        return shape_env_msg
    try:
        from torch._guards import detect_fake_mode

        fake_mode = detect_fake_mode(list(example_inputs))
    except Exception:  # deliberately ignored: the facts are optional
        fake_mode = None
    shape_env = getattr(fake_mode, "shape_env", None)
    if shape_env is None:
        return shape_env_msg
    for guard in getattr(shape_env, "guards", []):
        shape_env_msg.guards.append(str(guard.expr))
    hints = getattr(shape_env, "backed_var_to_val", None)
    if hints is None:
        hints = getattr(shape_env, "var_to_val", {})
    for symbol, value in hints.items():
        try:
            shape_env_msg.hints[str(symbol)] = int(value)
        except (TypeError, ValueError):
            continue  # non-integer hints (SymFloat) have no place in the map
    return shape_env_msg


def client_info() -> "pb.ClientInfo":
    from . import __version__

    return pb.ClientInfo(
        client_version=__version__,
        torch_version=str(torch.__version__),
        python_version=platform.python_version(),
        hostname=socket.gethostname(),
        pid=os.getpid(),
    )


def options_proto(mode: Optional[str], options: Optional[Dict[str, Any]]) -> "pb.CompileOptions":
    msg = pb.CompileOptions(mode=mode or "default")
    for key, value in (options or {}).items():
        msg.extra[str(key)] = str(value)
    # torch._inductor.config.fallback_random (read only if the user imported that config): keep
    # ATen's random ops, as Inductor does, instead of the daemon's counter-based dropout.
    inductor_config = sys.modules.get("torch._inductor.config")
    if "fallback_random" not in msg.extra and getattr(inductor_config, "fallback_random", False):
        msg.extra["fallback_random"] = "True"
    # torch.use_deterministic_algorithms(True): the daemon keeps ops whose generated kernels add
    # with float atomics (embedding's backward) as ATen's, as Inductor does. Sent only when set,
    # so that other compile keys do not change.
    if "deterministic_algorithms" not in msg.extra and torch.are_deterministic_algorithms_enabled():
        msg.extra["deterministic_algorithms"] = "True"
    return msg


def build_request(
    gm: torch.fx.GraphModule,
    example_inputs: Sequence[Any],
    *,
    graph_name: str,
    mode: Optional[str] = None,
    options: Optional[Dict[str, Any]] = None,
    job_id: str = "",
    rank: int = 0,
) -> "pb.CompileRequest":
    return encode_request(
        gm, example_inputs, graph_name=graph_name, mode=mode, options=options, job_id=job_id, rank=rank
    )[0]


def encode_request(
    gm: torch.fx.GraphModule,
    example_inputs: Sequence[Any],
    *,
    graph_name: str,
    mode: Optional[str] = None,
    options: Optional[Dict[str, Any]] = None,
    job_id: str = "",
    rank: int = 0,
) -> Tuple["pb.CompileRequest", List[Tuple[int, Optional[str]]]]:
    """build_request's request and the graph's integer inputs (GraphEncoder.scalar_inputs),
    which the caller drops from each call's arguments (binding their symbols)."""
    encoder = GraphEncoder(gm)
    graph = encoder.encode()
    has_symbols = encoder.has_symbols
    request = pb.CompileRequest(
        graph=graph,
        target=build_target(graph),
        options=options_proto(mode, options),
        client=client_info(),
        job_id=job_id,
        rank=rank,
        graph_name=graph_name,
    )
    if has_symbols:
        request.shape_env.CopyFrom(build_shape_env(example_inputs, encoder.names))
    return request, encoder.scalar_inputs
