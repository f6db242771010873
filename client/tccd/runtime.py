"""Runs a tccd.v1.Plan in Python: native entry points from the daemon's shared objects, and ATen ops.

The Python interpreter of plans: the fallback of the native plan runtime (native_plan.py, one
native call per graph), used when TCCD_NATIVE_RUNTIME=0, when the running torch is outside the
runtime's declared ABI range, or when a manifest has no plan descriptor.

Loading (`load_plan`) does all the lookups once: it resolves every ExternCall target to its
torch.ops overload, decodes constant arguments, opens the shared objects with ctypes, binds
every NativeCall symbol and prebuilds its stride array. Calling the result then only walks a list
of step closures over an environment list indexed by plan value id (inputs first).

The callable uses AOTAutograd's boxed convention: it takes one list of inputs and clears it, so
inputs the plan releases early are freed early.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import math
import os
import struct
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

from .errors import ArtifactError
from .sym_eval import compile_expr, input_bindings
from .serialize import PROTO_TO_DEVICE, PROTO_TO_DTYPE, PROTO_TO_LAYOUT, PROTO_TO_MEMORY_FORMAT
from .v1 import tccd_pb2 as pb

ABI_CPU = "tccd-cpu-1"
ABI_CUDA = "tccd-cuda-1"
ABI_CUDA_SEGMENT = "tccd-cuda-segment-1"
# A CPU kernel with run-time sizes (symbolic plans): void f(void* const* data,
# const int64_t* strides, const int64_t* shape); shape: the iteration space at this call.
ABI_CPU_SYM = "tccd-cpu-sym-1"
# Its CUDA twin: int f(void* const* data, const int64_t* strides, const int64_t* shape,
# void* cuda_stream), returning a cudaError_t.
ABI_CUDA_SYM = "tccd-cuda-sym-1"
# A cuBLASLt matmul with run-time sizes (codegen/symbolic_gemms.h): int f(void** data,
# const int64_t* dims, void* workspace, uint64_t workspace_bytes, stream), data A, B[, bias], D.
ABI_CUDA_SYM_GEMM = "tccd-cuda-sym-gemm-1"
_GEMM_WORKSPACE_BYTES = 8 << 20  # sized gemms: TCCD_GEMM_WORKSPACE_BYTES (tccd_plan_format.h)
# tccd_cuda_runtime.h: TCCD_RT_ERROR_INVALID_CONTEXT (no current context and no stream to ask).
_RT_ERROR_INVALID_CONTEXT = 201

Env = List[Optional[torch.Tensor]]


class _Ref:
    """A decoded ValueRef: a plan value id to read from the environment at call time."""

    __slots__ = ("id",)

    def __init__(self, value_id: int):
        self.id = value_id


class _Sym:
    """A decoded sym_expr: an integer computed at call time from the call's symbol values,
    which a symbolic plan keeps in the environment's last slot (LoadedPlan.__call__)."""

    __slots__ = ("text", "fn")

    def __init__(self, text: str):
        self.text = text
        self.fn = compile_expr(text)

    def value(self, env: "Env") -> int:
        try:
            return self.fn(env[-1])
        except NameError as e:
            raise RuntimeError(f"tccd: symbolic value {self.text!r}: {e} (no input size binds it)") from None


def resolve_op(target: str) -> "torch._ops.OpOverload":
    """"aten::add.Tensor" -> torch.ops.aten.add.Tensor (ArtifactError if there is none)."""
    namespace, sep, rest = target.partition("::")
    if not sep or not namespace or not rest:
        raise ArtifactError(f"extern target {target!r} is not of the form ns::name.overload")
    name, _, overload = rest.partition(".")
    try:
        packet = getattr(getattr(torch.ops, namespace), name)
        return getattr(packet, overload or "default")
    except (AttributeError, RuntimeError) as e:
        raise ArtifactError(f"extern target {target!r} is not an operator of this torch: {e}")


def _device(msg: "pb.Device") -> torch.device:
    kind = PROTO_TO_DEVICE.get(msg.type)
    if kind is None:
        raise ArtifactError(f"unknown device type {msg.type}")
    return torch.device(kind, msg.index) if msg.index >= 0 else torch.device(kind)


def _dtype(code: int) -> torch.dtype:
    dtype = PROTO_TO_DTYPE.get(code)
    if dtype is None:
        raise ArtifactError(f"unknown dtype code {code}")
    return dtype


def decode_value(value: "pb.Value") -> Any:
    """A Value as a Python object; tensor refs become _Ref placeholders."""
    kind = value.WhichOneof("kind")
    if kind is None or kind == "none":
        return None
    if kind == "ref":
        return _Ref(value.ref.node)
    if kind in ("int_value", "float_value", "bool_value", "string_value"):
        return getattr(value, kind)
    if kind == "dtype":
        return _dtype(value.dtype)
    if kind == "device":
        return _device(value.device)
    if kind == "layout":
        if value.layout not in PROTO_TO_LAYOUT:
            raise ArtifactError(f"unknown layout code {value.layout}")
        return PROTO_TO_LAYOUT[value.layout]
    if kind == "memory_format":
        if value.memory_format not in PROTO_TO_MEMORY_FORMAT:
            raise ArtifactError(f"unknown memory_format code {value.memory_format}")
        return PROTO_TO_MEMORY_FORMAT[value.memory_format]
    if kind == "list":
        return [decode_value(item) for item in value.list.items]
    if kind == "sym_expr":
        return _Sym(value.sym_expr)
    raise ArtifactError(f"unknown Value kind {kind!r}")


def _has_ref(obj: Any) -> bool:
    """Whether the decoded argument depends on the call (a tensor or a symbolic size)."""
    if isinstance(obj, (_Ref, _Sym)):
        return True
    if isinstance(obj, list):
        return any(_has_ref(item) for item in obj)
    return False


def _materialize(obj: Any, env: Env) -> Any:
    if isinstance(obj, _Ref):
        return env[obj.id]
    if isinstance(obj, _Sym):
        return obj.value(env)
    if isinstance(obj, list):
        return [_materialize(item, env) for item in obj]
    return obj


def _is_symbolic(meta: "pb.TensorMeta") -> bool:
    dims = list(meta.sizes) + list(meta.strides) + [meta.storage_offset]
    return any(d.WhichOneof("kind") == "expr" for d in dims)


def _static_meta(meta: "pb.TensorMeta", what: str) -> Tuple[Tuple[int, ...], Tuple[int, ...], int]:
    def ints(dims, part):
        out = []
        for d in dims:
            if d.WhichOneof("kind") != "value":
                raise ArtifactError(f"{what}: symbolic {part} {d.expr!r} (static plans only)")
            out.append(d.value)
        return tuple(out)

    sizes = ints(meta.sizes, "size")
    strides = ints(meta.strides, "stride")
    if len(strides) != len(sizes):
        raise ArtifactError(f"{what}: {len(sizes)} sizes but {len(strides)} strides")
    offset = ints([meta.storage_offset], "storage offset")[0] if meta.HasField("storage_offset") else 0
    return sizes, strides, offset


# ---------------------------------------------------------------------------------------------
# Steps
# ---------------------------------------------------------------------------------------------


def _extern_step(step: "pb.Step", index: int) -> Callable[[Env], None]:
    call = step.extern_call
    op = resolve_op(call.target)
    template = [decode_value(v) for v in call.args]
    kwargs_template = {kv.name: decode_value(kv.value) for kv in call.kwargs}
    # Top-level refs are filled by index; refs nested in lists (Tensor[] args) by rebuilding.
    ref_slots = [(i, a.id) for i, a in enumerate(template) if isinstance(a, _Ref)]
    nested_slots = [
        (i, a) for i, a in enumerate(template) if isinstance(a, (list, _Sym)) and _has_ref(a)
    ]
    kw_dynamic = {k: v for k, v in kwargs_template.items() if _has_ref(v)}
    kw_static = {k: v for k, v in kwargs_template.items() if k not in kw_dynamic}
    outputs = list(step.outputs)
    release = list(step.release)
    target = call.target

    def run(env: Env) -> None:
        args = template.copy()
        for i, value_id in ref_slots:
            args[i] = env[value_id]
        for i, nested in nested_slots:
            args[i] = _materialize(nested, env)
        if kw_dynamic:
            kwargs = dict(kw_static)
            for k, v in kw_dynamic.items():
                kwargs[k] = _materialize(v, env)
        else:
            kwargs = kw_static
        try:
            result = op(*args, **kwargs)
        except Exception as e:
            raise RuntimeError(f"tccd plan step {index} ({target}) failed: {e}") from e
        if isinstance(result, torch.Tensor):
            if outputs and outputs[0] >= 0:
                env[outputs[0]] = result
        elif outputs and result is not None:
            for value_id, item in zip(outputs, result):
                if value_id >= 0:
                    env[value_id] = item
        for value_id in release:
            env[value_id] = None

    return run


def _bind(libraries: Dict[str, ctypes.CDLL], artifact: str, symbol: str, index: int):
    """(library, its function `symbol`) for step `index`, or ArtifactError."""
    library = libraries.get(artifact)
    if library is None:
        raise ArtifactError(f"step {index}: artifact {artifact!r} is not in the manifest")
    try:
        return library, getattr(library, symbol)
    except AttributeError:
        raise ArtifactError(f"step {index}: {artifact} has no symbol {symbol!r}")


class _NativeOperand:
    __slots__ = ("id", "sizes", "strides", "dtype", "aligned")

    def __init__(self, value_id: int, sizes, strides, dtype, aligned: bool):
        self.id = value_id
        self.sizes = sizes
        self.strides = strides
        self.dtype = dtype
        self.aligned = aligned  # declared 16-byte aligned (storage offset x item size)


def _native_step(
    step: "pb.Step",
    index: int,
    values: Sequence[Tuple[Tuple[int, ...], Tuple[int, ...], int, torch.dtype, torch.device]],
    libraries: Dict[str, ctypes.CDLL],
    num_inputs: int = 0,
) -> Callable[[Env], None]:
    call = step.native
    if call.abi not in (ABI_CPU, ABI_CUDA):
        raise ArtifactError(f"step {index}: unknown native ABI {call.abi!r}")
    library, fn = _bind(libraries, call.artifact, call.symbol, index)
    fn.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int64)]
    if call.abi == ABI_CUDA:
        fn.argtypes.append(ctypes.c_void_p)
        fn.restype = ctypes.c_int
    else:
        fn.restype = None

    shape = tuple(call.shape)
    rank = len(shape)
    inputs = []
    for value_id in call.inputs:
        sizes, strides, offset, dtype, _ = values[value_id]
        # Declared 16-byte aligned (bases are: every allocation is): a CUDA kernel may have been
        # compiled with only its vectorised entry for it (codegen/cuda_host/entry_points.h).
        inputs.append(_NativeOperand(value_id, sizes, strides, dtype, offset * dtype.itemsize % 16 == 0))
    output_ids = list(step.outputs)
    into = _write_into(step, index, len(values))
    allocations = []  # (value_id, sizes, strides, dtype, device) of each output
    for value_id in output_ids:
        if value_id < 0:
            raise ArtifactError(f"step {index}: a native call must define all its outputs")
        sizes, strides, offset, dtype, device = values[value_id]
        if offset != 0:
            raise ArtifactError(f"step {index}: output {value_id} has storage offset {offset}")
        allocations.append((value_id, sizes, strides, dtype, device))
    num_operands = len(inputs) + len(allocations)
    expected = list(call.expected_strides)
    if len(expected) != num_operands * rank:
        raise ArtifactError(
            f"step {index}: expected_strides has {len(expected)} entries, not "
            f"{num_operands} operands x rank {rank}"
        )
    is_cuda = call.abi == ABI_CUDA
    last_error = _cuda_last_error_fn(library) if is_cuda else None
    PtrArray = ctypes.c_void_p * num_operands
    StrideArray = ctypes.c_int64 * (num_operands * rank)
    expected_array = StrideArray(*expected)
    output_rows = expected[len(inputs) * rank:]  # outputs are ours: always as declared
    release = list(step.release)
    # Index-aware kernels (KernelInfo.kind "*_index") take gather operands' own strides, which
    # cannot be recomputed from the iteration space: inputs in another layout are copied into
    # the declared one instead.
    # Reordered kernels (loop_order.h) state strides in their own dim order: the same.
    # CUDA kernels are compiled with the one entry point their declared layout takes
    # (codegen/cuda_host/entry_points.h): an input in another layout, or misaligned where the
    # plan declared it aligned, is copied into the declared layout at the call (as Inductor
    # copies misaligned inputs; rare, AOTAutograd hands over the layouts it traced).
    copy_to_declared = is_cuda or any(k.kind.endswith(("_index", "_reordered")) for k in call.kernels)

    def strides_for(tensors: List[torch.Tensor]) -> "ctypes.Array":
        # Some input differs from its declared layout: recompute every input's strides in the
        # iteration space (broadcast right-aligned, stride 0 where broadcast).
        rows: List[int] = []
        for t in tensors:
            try:
                rows.extend(t.expand(shape).stride())
            except RuntimeError as e:
                raise RuntimeError(
                    f"tccd plan step {index}: input of shape {tuple(t.shape)} does not broadcast "
                    f"to the kernel's iteration space {shape}: {e}"
                ) from e
        return StrideArray(*rows, *output_rows)

    def run(env: Env) -> None:
        tensors = [env[op.id] for op in inputs]
        as_declared = True
        for position, (t, op) in enumerate(zip(tensors, inputs)):
            if t.dtype != op.dtype:
                raise RuntimeError(
                    f"tccd plan step {index}: input {op.id} is {t.dtype}, the kernel takes {op.dtype}"
                )
            if t.shape != op.sizes:
                raise RuntimeError(
                    f"tccd plan step {index}: input {op.id} has shape {tuple(t.shape)}, the plan "
                    f"was compiled for {op.sizes}"
                )
            misaligned = is_cuda and op.aligned and t.data_ptr() % 16 != 0
            if not _same_layout(t.stride(), op.strides, op.sizes) or misaligned:
                if copy_to_declared:
                    tensors[position] = torch.empty_strided(
                        op.sizes, op.strides, dtype=t.dtype, device=t.device
                    ).copy_(t)
                else:
                    as_declared = False
        outs = []
        pending = []
        for (value_id, sizes, strides, dtype, device), target in zip(allocations, into):
            out, copy_into = _bind_output(env, value_id, sizes, strides, dtype, device, target, is_cuda)
            outs.append(out)
            if copy_into is not None:
                pending.append((copy_into, out))
        pointers = PtrArray(*[t.data_ptr() for t in tensors], *[o.data_ptr() for o in outs])
        strides = expected_array if as_declared else strides_for(tensors)
        if is_cuda:
            stream = torch.cuda.current_stream(outs[0].device if outs else None).cuda_stream
            err = fn(pointers, strides, ctypes.c_void_p(stream))
            if err == _RT_ERROR_INVALID_CONTEXT:
                _make_context_current(outs[0].device if outs else None)
                err = fn(pointers, strides, ctypes.c_void_p(stream))
            if err != 0:
                raise RuntimeError(
                    f"tccd plan step {index} ({call.symbol}): CUDA error {err}: {last_error()}"
                )
        else:
            fn(pointers, strides)
        for target, out in pending:
            target.copy_(out.reshape(target.shape))
        for value_id in release:
            env[value_id] = None

    return run


def _symbolic_native_step(step: "pb.Step", index: int, metas: Sequence["pb.TensorMeta"],
                          libraries: Dict[str, ctypes.CDLL]) -> Callable[[Env], None]:
    """A kernel with run-time sizes in a symbolic plan (codegen/symbolic_kernels.h).

    Every output of such a kernel has the run-time sizes of its iteration space, so they come
    from the first output's meta, evaluated from the call's symbols (env[-1]) like every other
    size of the plan; strides are the tensors' own, broadcast to that space."""
    call = step.native
    if call.abi not in (ABI_CPU_SYM, ABI_CPU, ABI_CUDA_SYM, ABI_CUDA):
        raise ArtifactError(f"step {index}: native ABI {call.abi!r} in a symbolic plan")
    library, fn = _bind(libraries, call.artifact, call.symbol, index)
    # A kernel of a symbolic plan whose iteration space happens to be static is a plain
    # "tccd-cpu-1" / "tccd-cuda-1" kernel: no sizes argument.
    takes_shape = call.abi in (ABI_CPU_SYM, ABI_CUDA_SYM)
    is_cuda = call.abi in (ABI_CUDA_SYM, ABI_CUDA)
    fn.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int64)]
    if takes_shape:
        fn.argtypes.append(ctypes.POINTER(ctypes.c_int64))
    if is_cuda:
        fn.argtypes.append(ctypes.c_void_p)
        fn.restype = ctypes.c_int
        last_error = _cuda_last_error_fn(library)
    else:
        fn.restype = None
    output_ids = list(step.outputs)
    if not output_ids or any(i < 0 for i in output_ids):
        raise ArtifactError(f"step {index}: a native call must define all its outputs")
    rank = len(call.shape)

    def dims_fn(dims):
        fns = []
        for d in dims:
            if d.WhichOneof("kind") == "expr":
                fns.append(compile_expr(d.expr))
            else:
                fns.append(lambda _symbols, v=d.value: v)
        return fns

    allocations = []  # (value id, size fns, stride fns, dtype, device)
    for value_id in output_ids:
        meta = metas[value_id]
        # A column kernel's per-column outputs drop the reduced dims: right-aligned.
        if len(meta.sizes) > rank or len(meta.strides) != len(meta.sizes):
            raise ArtifactError(f"step {index}: output {value_id} has a higher rank than the kernel's {rank}")
        if meta.HasField("storage_offset") and meta.storage_offset.WhichOneof("kind") != "value":
            raise ArtifactError(f"step {index}: output {value_id} has a symbolic storage offset")
        allocations.append((value_id, dims_fn(meta.sizes), dims_fn(meta.strides),
                            _dtype(meta.dtype), _device(meta.device)))
    # Static dims from the call, run-time ones from the first operand (outputs first) with an
    # expression there, right-aligned: every operand has the space's size or a static 1 in each
    # dim (symbolic_kernels.h); a column kernel's column outputs lack the run-time row dims, its
    # element inputs have them (plan_descriptor.cc does the same).
    # Gather operands and scatter outputs (index kernels) are not aligned to the space: skipped.
    aligned = [v for v, s in zip(output_ids, list(call.scatter_outputs) or [False] * len(output_ids)) if not s]
    aligned += [v for v, g in zip(call.inputs, list(call.gather_inputs) or [False] * len(call.inputs)) if not g]

    def runtime_dim(d):
        for value_id in aligned:
            sizes = metas[value_id].sizes
            at = d - (rank - len(sizes))
            if at >= 0 and sizes[at].WhichOneof("kind") == "expr":
                return compile_expr(sizes[at].expr)
        raise ArtifactError(f"step {index}: run-time dim {d} and no operand with an expression there")

    shape_fns = [runtime_dim(d) if size < 0 else (lambda _symbols, v=size: v) for d, size in enumerate(call.shape)]
    # Index kernels' gather operands take their own strides, dim k in slot k (NativeCall.gather_inputs).
    gathers = list(call.gather_inputs) or [False] * len(call.inputs)
    if len(gathers) != len(call.inputs):
        raise ArtifactError(f"step {index}: {len(gathers)} gather flags for {len(call.inputs)} inputs")
    inputs = [(value_id, _dtype(metas[value_id].dtype), gather) for value_id, gather in zip(call.inputs, gathers)]
    num_operands = len(inputs) + len(allocations)
    PtrArray = ctypes.c_void_p * num_operands
    StrideArray = ctypes.c_int64 * (num_operands * rank)
    ShapeArray = ctypes.c_int64 * max(rank, 1)
    # Scatter kernels' outputs take their own strides too (NativeCall.scatter_outputs).
    scatters = list(call.scatter_outputs) or [False] * len(allocations)
    if len(scatters) != len(allocations):
        raise ArtifactError(f"step {index}: {len(scatters)} scatter flags for {len(allocations)} outputs")
    release = list(step.release)

    def run(env: Env) -> None:
        symbols = env[-1]
        try:
            shape = tuple(f(symbols) for f in shape_fns)
        except NameError as e:
            raise RuntimeError(f"tccd plan step {index}: {e} (no input size binds it)") from None
        tensors = []
        rows: List[int] = []
        for value_id, dtype, gather in inputs:
            t = env[value_id]
            if t.dtype != dtype:
                raise RuntimeError(f"tccd plan step {index}: input {value_id} is {t.dtype}, the kernel takes {dtype}")
            if gather:
                if t.dim() > rank:
                    raise RuntimeError(f"tccd plan step {index}: gather operand of rank {t.dim()} in a rank-{rank} kernel")
                rows.extend(list(t.stride()) + [0] * (rank - t.dim()))
                tensors.append(t)
                continue
            try:
                rows.extend(t.expand(shape).stride())
            except RuntimeError as e:
                raise RuntimeError(
                    f"tccd plan step {index}: input of shape {tuple(t.shape)} does not broadcast "
                    f"to the kernel's iteration space {shape}: {e}"
                ) from e
            tensors.append(t)
        for (value_id, sizes, strides, dtype, device), scatter in zip(allocations, scatters):
            out = torch.empty_strided(
                tuple(f(symbols) for f in sizes), tuple(f(symbols) for f in strides), dtype=dtype, device=device
            )
            env[value_id] = out
            if scatter:
                rows.extend(list(out.stride()) + [0] * (rank - out.dim()))
            else:
                rows.extend(out.expand(shape).stride() if out.dim() < rank else out.stride())
            tensors.append(out)
        args = [PtrArray(*[t.data_ptr() for t in tensors]), StrideArray(*rows)]
        if takes_shape:
            args.append(ShapeArray(*shape))
        if is_cuda:
            device = tensors[-1].device
            stream = ctypes.c_void_p(torch.cuda.current_stream(device).cuda_stream)
            err = fn(*args, stream)
            if err == _RT_ERROR_INVALID_CONTEXT:
                _make_context_current(device)
                err = fn(*args, stream)
            if err != 0:
                raise RuntimeError(f"tccd plan step {index} ({call.symbol}): CUDA error {err}: {last_error()}")
        else:
            fn(*args)
        for value_id in release:
            env[value_id] = None

    return run


def _symbolic_gemm_step(step: "pb.Step", index: int, metas: Sequence["pb.TensorMeta"],
                        libraries: Dict[str, ctypes.CDLL]) -> Callable[[Env], None]:
    """A cuBLASLt matmul with run-time sizes in a symbolic plan (codegen/symbolic_gemms.h).

    Its ten sizes (m, n, k, lda, ldb, ldd, batch, stride_a, stride_b, stride_d) are the call's
    shape words: a number, or (negative) the size or stride of an operand (inputs, then the
    output), evaluated from that value's meta like every other size (plan_descriptor.h
    GemmDimRef). Inputs must have their declared strides and 16-byte alignment (the daemon
    proved them dense for every size); one that does not is copied into them, as a segment's."""
    call = step.native
    library, fn = _bind(libraries, call.artifact, call.symbol, index)
    fn.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p,
                   ctypes.c_uint64, ctypes.c_void_p]
    fn.restype = ctypes.c_int
    last_error = _cuda_last_error_fn(library)
    output_ids = list(step.outputs)
    if len(output_ids) != 1 or output_ids[0] < 0 or len(call.inputs) not in (2, 3) or len(call.shape) != 10:
        raise ArtifactError(f"step {index}: a malformed sized gemm")

    def dims_fn(dims):
        return [compile_expr(d.expr) if d.WhichOneof("kind") == "expr" else (lambda _symbols, v=d.value: v)
                for d in dims]

    operands = list(call.inputs) + output_ids
    operand_fns = [(dims_fn(metas[v].sizes), dims_fn(metas[v].strides)) for v in operands]
    word_fns = []
    for word in call.shape:
        if word >= 0:
            word_fns.append(lambda _symbols, v=word: v)
            continue
        code = -(word + 1)
        operand, part, dim = code // 32, (code // 16) % 2, code % 16
        if operand >= len(operands) or dim >= len(operand_fns[operand][part]):
            raise ArtifactError(f"step {index}: sized gemm word {word} names no operand dim")
        word_fns.append(operand_fns[operand][part][dim])
    inputs = [(value_id, _dtype(metas[value_id].dtype), operand_fns[i]) for i, value_id in enumerate(call.inputs)]
    out_id = output_ids[0]
    out_sizes, out_strides = operand_fns[-1]
    out_dtype = _dtype(metas[out_id].dtype)
    PtrArray = ctypes.c_void_p * len(operands)
    DimArray = ctypes.c_int64 * 10
    release = list(step.release)

    def run(env: Env) -> None:
        symbols = env[-1]
        try:
            dims = DimArray(*(f(symbols) for f in word_fns))
        except NameError as e:
            raise RuntimeError(f"tccd plan step {index}: {e} (no input size binds it)") from None
        pointers, keep = [], []
        for value_id, dtype, (size_fns, stride_fns) in inputs:
            t = env[value_id]
            sizes = tuple(f(symbols) for f in size_fns)
            strides = tuple(f(symbols) for f in stride_fns)
            if t.dtype != dtype or tuple(t.shape) != sizes:
                raise RuntimeError(
                    f"tccd plan step {index}: input {value_id} is {t.dtype}{list(t.shape)}, the "
                    f"plan declares {dtype}{list(sizes)}"
                )
            if not _same_layout(t.stride(), strides, sizes) or t.data_ptr() % 16:
                copy = torch.empty_strided(sizes, strides, dtype=dtype, device=t.device)
                copy.copy_(t)
                keep.append(copy)
                t = copy
            pointers.append(t.data_ptr())
        device = env[call.inputs[0]].device  # plans leave the index unset: the operands' device
        out = torch.empty_strided(tuple(f(symbols) for f in out_sizes), tuple(f(symbols) for f in out_strides),
                                  dtype=out_dtype, device=device)
        env[out_id] = out
        pointers.append(out.data_ptr())
        workspace = torch.empty(_GEMM_WORKSPACE_BYTES, dtype=torch.uint8, device=out.device)
        stream = ctypes.c_void_p(torch.cuda.current_stream(out.device).cuda_stream)
        args = (PtrArray(*pointers), dims, ctypes.c_void_p(workspace.data_ptr()), _GEMM_WORKSPACE_BYTES, stream)
        err = fn(*args)
        if err == _RT_ERROR_INVALID_CONTEXT:
            _make_context_current(out.device)
            err = fn(*args)
        if err != 0:
            raise RuntimeError(f"tccd plan step {index} ({call.symbol}): CUDA error {err}: {last_error()}")
        # The caching allocator reuses `workspace` and `keep` only for work ordered after this
        # call on the same stream, so dropping them here is safe.
        for value_id in release:
            env[value_id] = None

    return run


def _make_context_current(device: Optional[torch.device]) -> None:
    """Makes the device's primary CUDA context current on this thread.

    The kernel libraries use the driver API, which needs a current context; a thread that has
    made no CUDA runtime call yet (autograd's backward thread, on the default stream) has none.
    A stream query is a cheap runtime call, and the runtime's lazy initialisation makes the
    primary context current. Called only after a launch reported that error, then retried."""
    torch.cuda.current_stream(device).query()


def _raw_stream(device_index: int) -> int:
    """The current stream of a device as a CUstream integer: torch's C++ accessor (what
    Inductor's generated code calls), which skips building a torch.cuda.Stream object."""
    getter = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if getter is not None:
        return getter(device_index)
    return torch.cuda.current_stream(device_index).cuda_stream


def _same_layout(actual: Tuple[int, ...], declared: Tuple[int, ...], sizes: Tuple[int, ...]) -> bool:
    """Strides address the same elements: they agree on every dim of size > 1."""
    return all(a == d or n == 1 for a, d, n in zip(actual, declared, sizes))


def _write_into(step: "pb.Step", index: int, num_values: int) -> List[int]:
    """Per output of a native call or segment: -1, or the value whose buffer it is written into
    (tccd.v1.Step.write_into: a graph input, the daemon's MutationsIntoProducers pass, or a
    value that dies at the step, its DyingInputsIntoOutputs pass). `num_values`: the plan's."""
    into = list(step.write_into) or [-1] * len(step.outputs)
    if len(into) != len(step.outputs) or any(not -1 <= k < num_values for k in into):
        raise ArtifactError(f"step {index}: write_into {into} does not fit its outputs")
    return into


def _bind_output(
    env: Env, value_id: int, sizes, strides, dtype, device, into: int, aligned: bool
) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
    """A native step's output tensor, and the input to copy it into after the step (or None).

    An output written into a graph input (`into` >= 0) is that input's storage in the output's
    layout (the same bytes: the same layout, or both contiguous over the same elements,
    schedule::CanWriteInto) when the input has its declared layout (and is 16-byte aligned
    where the kernels may assume it); otherwise a fresh tensor that the caller copies into the
    input after the step."""
    if into >= 0:
        target = env[into]
        declared = target.is_contiguous() if tuple(target.shape) != tuple(sizes) else _same_layout(
            target.stride(), strides, sizes)
        if (
            target.dtype == dtype
            and target.numel() == math.prod(sizes)
            and declared
            and (not aligned or target.data_ptr() % 16 == 0)
        ):
            out = target if tuple(target.shape) == tuple(sizes) else target.as_strided(sizes, strides)
            env[value_id] = out
            return out, None
        out = torch.empty_strided(sizes, strides, dtype=dtype, device=device)
        env[value_id] = out
        return out, target
    out = torch.empty_strided(sizes, strides, dtype=dtype, device=device)
    env[value_id] = out
    return out, None


def _segment_step(
    step: "pb.Step",
    index: int,
    values: Sequence[Tuple[Tuple[int, ...], Tuple[int, ...], int, torch.dtype, torch.device]],
    libraries: Dict[str, ctypes.CDLL],
    num_inputs: int = 0,
) -> Callable[[Env], None]:
    """A NativeSegment: one call runs a sequence of kernels and matmuls (ABI tccd-cuda-segment-1).

    The segment was compiled for its inputs' declared layouts, so an input that arrives with
    other strides, or misaligned for the vectorised kernels and cuBLASLt (16 bytes), is copied
    into the declared layout first (rare: AOTAutograd hands over the layouts it traced)."""
    seg = step.segment
    if seg.abi != ABI_CUDA_SEGMENT:
        raise ArtifactError(f"step {index}: unknown segment ABI {seg.abi!r}")
    library, fn = _bind(libraries, seg.artifact, seg.symbol, index)
    fn.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_void_p]
    fn.restype = ctypes.c_int
    inputs = []
    for value_id in seg.inputs:
        if not 0 <= value_id < len(values):
            raise ArtifactError(f"step {index} reads value {value_id}")
        sizes, strides, _, dtype, _ = values[value_id]
        inputs.append((value_id, sizes, strides, dtype))
    into = _write_into(step, index, len(values))
    allocations = []
    for value_id in step.outputs:
        if value_id < 0:
            raise ArtifactError(f"step {index}: a segment must define all its outputs")
        sizes, strides, offset, dtype, device = values[value_id]
        if offset != 0:
            raise ArtifactError(f"step {index}: output {value_id} has storage offset {offset}")
        allocations.append((value_id, sizes, strides, dtype, device))
    devices = {values[v][4] for v in list(seg.inputs) + list(step.outputs)} - {None}
    if len(devices) != 1:
        raise ArtifactError(f"step {index}: a segment's operands must be on one device, not {devices}")
    device = devices.pop()
    device_index = device.index if device.index is not None else torch.cuda.current_device()
    workspace_bytes = seg.workspace_bytes
    PtrArray = ctypes.c_void_p * (len(inputs) + len(allocations))
    release = list(step.release)
    last_error = _cuda_last_error_fn(library)
    symbol = seg.symbol

    def run(env: Env) -> None:
        pointers = []
        keep = []
        for value_id, sizes, strides, dtype in inputs:
            t = env[value_id]
            if t.dtype != dtype or t.shape != sizes:
                raise RuntimeError(
                    f"tccd plan step {index}: input {value_id} is {t.dtype}{list(t.shape)}, the "
                    f"plan was compiled for {dtype}{list(sizes)}"
                )
            if not _same_layout(t.stride(), strides, sizes) or t.data_ptr() % 16:
                copy = torch.empty_strided(sizes, strides, dtype=dtype, device=t.device)
                copy.copy_(t)
                keep.append(copy)
                t = copy
            pointers.append(t.data_ptr())
        pending = []
        for (value_id, sizes, strides, dtype, dev), target in zip(allocations, into):
            out, copy_into = _bind_output(env, value_id, sizes, strides, dtype, dev, target, True)
            pointers.append(out.data_ptr())
            if copy_into is not None:
                pending.append((copy_into, out))
        workspace = (
            torch.empty(workspace_bytes, dtype=torch.uint8, device=device) if workspace_bytes else None
        )
        stream = _raw_stream(device_index)
        err = fn(
            PtrArray(*pointers),
            ctypes.c_void_p(workspace.data_ptr() if workspace is not None else None),
            ctypes.c_void_p(stream),
        )
        if err == _RT_ERROR_INVALID_CONTEXT:
            _make_context_current(device)
            err = fn(
                PtrArray(*pointers),
                ctypes.c_void_p(workspace.data_ptr() if workspace is not None else None),
                ctypes.c_void_p(stream),
            )
        if err != 0:
            raise RuntimeError(f"tccd plan step {index} ({symbol}): CUDA error {err}: {last_error()}")
        for target, out in pending:
            target.copy_(out.reshape(target.shape))
        # The caching allocator reuses `workspace` and `keep` only for work ordered after this
        # call on the same stream, so dropping them here is safe.
        for value_id in release:
            env[value_id] = None

    return run


def _alias_step(
    step: "pb.Step",
    index: int,
    values: Sequence[Tuple[Tuple[int, ...], Tuple[int, ...], int, torch.dtype, torch.device]],
) -> Callable[[Env], None]:
    """An Alias: a view of a tensor the plan allocated (so its layout is the declared one)."""
    base_id = step.alias.base
    if len(step.outputs) != 1 or not 0 <= base_id < len(values) or not 0 <= step.outputs[0] < len(values):
        raise ArtifactError(f"step {index}: malformed alias")
    out_id = step.outputs[0]
    _, _, base_offset, base_dtype, _ = values[base_id]
    sizes, strides, offset, dtype, _ = values[out_id]
    if dtype != base_dtype:
        raise ArtifactError(f"step {index}: alias of a {base_dtype} value as {dtype}")
    delta = offset - base_offset
    release = list(step.release)

    def run(env: Env) -> None:
        base = env[base_id]
        env[out_id] = base.as_strided(sizes, strides, base.storage_offset() + delta)
        for value_id in release:
            env[value_id] = None

    return run


# ---------------------------------------------------------------------------------------------
# Plans
# ---------------------------------------------------------------------------------------------


class LoadedPlan:
    """A Plan bound to its artifacts. Call it with a list of input tensors (boxed)."""

    _boxed_call = True  # AOTAutograd: pass one list of arguments

    def __init__(self, plan: "pb.Plan", libraries: Dict[str, ctypes.CDLL], name: str = "graph"):
        self.name = name
        self.num_inputs = plan.num_inputs
        self.num_values = len(plan.values)
        self.libraries = libraries  # keeps the shared objects loaded while the plan lives
        if not 0 <= self.num_inputs <= self.num_values:
            raise ArtifactError(f"plan has {self.num_inputs} inputs but {self.num_values} values")
        values = []
        # A symbolic plan (a graph with dynamic sizes: extern steps, and CPU kernels with
        # run-time sizes): its symbols' values come from the inputs' sizes at each call.
        self.symbolic = plan.symbolic or any(_is_symbolic(m) for m in plan.values) or any(
            _has_ref(decode_value(v)) and not isinstance(decode_value(v), _Ref) for v in plan.outputs
        )
        self.bindings = input_bindings(plan.values[: self.num_inputs]) if self.symbolic else []
        for i, meta in enumerate(plan.values):
            if meta.dtype == pb.DTYPE_UNSPECIFIED:
                values.append(((), (), 0, None, None))  # an absent value (a None output)
                continue
            if _is_symbolic(meta):
                values.append(None)  # only extern steps may touch it (checked per step below)
                continue
            sizes, strides, offset = _static_meta(meta, f"plan value {i}")
            values.append((sizes, strides, offset, _dtype(meta.dtype), _device(meta.device)))
        self.num_native = 0
        self.num_fused_kernels = 0
        self.num_extern = 0
        steps: List[Callable[[Env], None]] = []
        for index, step in enumerate(plan.steps):
            for value_id in list(step.outputs) + list(step.release):
                if not -1 <= value_id < self.num_values:
                    raise ArtifactError(f"step {index} names value {value_id} (of {self.num_values})")
            kind = step.WhichOneof("kind")
            if self.symbolic and kind not in ("extern_call", "native"):
                raise ArtifactError(f"step {index}: a symbolic plan has a {kind} step")
            if kind == "native" and self.symbolic:
                for value_id in step.native.inputs:
                    if not 0 <= value_id < self.num_values:
                        raise ArtifactError(f"step {index} reads value {value_id}")
                make = _symbolic_gemm_step if step.native.abi == ABI_CUDA_SYM_GEMM else _symbolic_native_step
                steps.append(make(step, index, plan.values, libraries))
                self.num_native += 1
                self.num_fused_kernels += max(1, len(step.native.kernels))
            elif kind == "native":
                for value_id in step.native.inputs:
                    if not 0 <= value_id < self.num_values:
                        raise ArtifactError(f"step {index} reads value {value_id}")
                steps.append(_native_step(step, index, values, libraries, plan.num_inputs))
                self.num_native += 1
                self.num_fused_kernels += max(1, len(step.native.kernels))
            elif kind == "segment":
                steps.append(_segment_step(step, index, values, libraries, plan.num_inputs))
                self.num_native += 1
                self.num_fused_kernels += max(1, len(step.segment.kernels))
            elif kind == "alias":
                steps.append(_alias_step(step, index, values))
            elif kind == "extern_call":
                steps.append(_extern_step(step, index))
                self.num_extern += 1
            else:
                raise ArtifactError(f"step {index} has no kind")
        self.steps = steps
        self.python_steps = len(steps)  # every step is a Python call here (native_plan.py: fewer)
        # Why (native_plan.load says, when it leaves a plan here): "what: reason" -> steps.
        self.python_step_reasons: Dict[str, int] = (
            {"every step (TCCD_NATIVE_RUNTIME=0: the Python interpreter)": len(steps)} if steps else {}
        )
        # Per input: (sizes, strides, dtype, device) as declared, or None (symbolic, absent).
        self.input_layouts = [
            None if v is None or v[3] is None else (v[0], v[1], v[3], v[4]) for v in values[: self.num_inputs]
        ]
        self.outputs = [decode_value(v) for v in plan.outputs]
        for out in self.outputs:
            if isinstance(out, _Ref) and not 0 <= out.id < self.num_values:
                raise ArtifactError(f"plan output names value {out.id}")
        self.output_is_ref = [isinstance(o, _Ref) for o in self.outputs]

    def __call__(self, args: List[Any], symbols: Optional[Dict[str, int]] = None) -> List[Any]:
        """`symbols`: values of symbols no input size carries (SymInt graph inputs), by name."""
        if len(args) != self.num_inputs:
            raise RuntimeError(
                f"tccd plan {self.name} takes {self.num_inputs} inputs, got {len(args)}"
            )
        env: Env = [None] * (self.num_values + 1)
        env[: self.num_inputs] = args
        if self.symbolic:
            bound = dict(symbols) if symbols else {}
            for i, part, d, index in self.bindings:
                t = args[i]
                bound[f"s{index}"] = t.shape[d] if part == 0 else t.stride(d)
            env[-1] = bound
        args.clear()  # boxed convention: the plan owns the inputs now
        for step in self.steps:
            step(env)
        return [
            env[out.id] if is_ref else _materialize(out, env)
            for out, is_ref in zip(self.outputs, self.output_is_ref)
        ]


def _cuda_last_error_fn(library: ctypes.CDLL) -> Callable[[], str]:
    fn = library.tccd_cuda_last_error
    fn.argtypes = []
    fn.restype = ctypes.c_char_p
    return lambda: (fn() or b"").decode("utf-8", "replace")


# Wall seconds this process spent in tccd_cuda_init (module loads, cuBLASLt objects and the
# matmuls' autotuning, TCCD_GEMM_AUTOTUNE): what plan loading costs on the GPU side, for the
# benchmarks (cuda_init_seconds). Summed over threads; guarded by the GIL (+= on a float).
_cuda_init_seconds = 0.0


def cuda_init_seconds() -> float:
    """Seconds spent loading kernels_cuda.so modules into CUDA contexts so far in this process."""
    return _cuda_init_seconds


# ---- The table of matmul autotuning's choices (codegen/cuda_host/runtime/tccd_cuda_tune.h) ----
# A kernels_cuda.so with tuned matmuls exports tccd_cuda_set_tune_table: every such library of a
# device gets one table of the process, so a choice timed by one plan's library serves the
# others, and the table is saved in the local cache (beside the manifests) and read back by the
# next process on the same GPU model and cuBLASLt, whose warm start then times nothing already
# timed. These constants mirror the C header (tests/python/test_gemm_tune_table.py checks).
_TUNE_MAGIC = 0x326E757464636374  # "tccdtun2"
_TUNE_SLOTS = 1024
_TUNE_KEY_WORDS = 14  # the last is the device ordinal
# key, algo[8], workspace_size, used (uint64 each), chosen_ms, first_ms (float each)
_TUNE_USED_OFFSET = (_TUNE_KEY_WORDS + 8 + 1) * 8
_TUNE_TIMES_OFFSET = _TUNE_USED_OFFSET + 8
_TUNE_ENTRY_BYTES = _TUNE_TIMES_OFFSET + 8
_TUNE_HEADER = struct.Struct("<QIIII")  # magic, entry_bytes, slots, lock, filled
_TUNE_TABLE_BYTES = _TUNE_HEADER.size + _TUNE_SLOTS * _TUNE_ENTRY_BYTES


class _TuneTable:
    """One device's table: the C struct in a ctypes buffer, where it was read from, and how
    many entries it had when last saved."""

    def __init__(self, path: Optional[str], device_index: int):
        self.buffer = ctypes.create_string_buffer(_TUNE_TABLE_BYTES)
        self.path = path
        _TUNE_HEADER.pack_into(self.buffer, 0, _TUNE_MAGIC, _TUNE_ENTRY_BYTES, _TUNE_SLOTS, 0, 0)
        if path:
            try:
                with open(path, "rb") as f:
                    data = f.read()
                _import_tune_table(self.buffer, data, device_index)
            except OSError:
                pass  # none saved yet (or unreadable): start empty
        self.saved = self.filled()

    def filled(self) -> int:
        return _TUNE_HEADER.unpack_from(self.buffer, 0)[4]

    def save_if_grown(self) -> None:
        """Writes the table when entries were added since it was read or last written
        (temp file + rename: readers see the old table or the new one)."""
        filled = self.filled()
        if not self.path or filled <= self.saved:
            return
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            tmp = f"{self.path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as f:
                f.write(self.buffer.raw)
            os.replace(tmp, self.path)
            self.saved = filled
        except OSError:
            pass  # a read-only or full cache: the next process times again


def _import_tune_table(buffer, data: bytes, device_index: int) -> bool:
    """Copies a saved table into `buffer` when its header is this layout's, with the lock free
    and each used entry's device word set to `device_index` (the slot of an entry does not
    depend on it). False, `buffer` untouched, for anything else."""
    if len(data) != _TUNE_TABLE_BYTES:
        return False
    magic, entry_bytes, slots, _, filled = _TUNE_HEADER.unpack_from(data, 0)
    if (magic, entry_bytes, slots) != (_TUNE_MAGIC, _TUNE_ENTRY_BYTES, _TUNE_SLOTS):
        return False
    table = bytearray(data)
    _TUNE_HEADER.pack_into(table, 0, magic, entry_bytes, slots, 0, filled)
    device_offset = (_TUNE_KEY_WORDS - 1) * 8
    used_offset = _TUNE_USED_OFFSET
    for i in range(_TUNE_SLOTS):
        entry = _TUNE_HEADER.size + i * _TUNE_ENTRY_BYTES
        if struct.unpack_from("<Q", table, entry + used_offset)[0]:
            struct.pack_into("<Q", table, entry + device_offset, device_index)
    ctypes.memmove(buffer, bytes(table), _TUNE_TABLE_BYTES)
    return True


_tune_tables: Dict[int, _TuneTable] = {}
_tune_tables_lock = threading.Lock()


def _cublaslt_version() -> Optional[int]:
    """The version of the cuBLASLt PyTorch loaded (the runtime uses the same one), or None."""
    for name in ("libcublasLt.so.13", "libcublasLt.so.12"):
        try:
            lib = ctypes.CDLL(name, mode=os.RTLD_NOLOAD)
        except OSError:
            continue
        fn = lib.cublasLtGetVersion
        fn.restype = ctypes.c_size_t
        fn.argtypes = []
        return int(fn())
    return None


_prewarm_lock = threading.Lock()
_prewarmed: set = set()  # device indices, guarded by _prewarm_lock


def prewarm_cuda(device_index: int) -> bool:
    """The process-wide part of a first CUDA plan load, done ahead (TCCD_PREWARM_CUDA): on the
    GPU host the first kernels library a process loaded took 195-249 ms after the daemon's answer
    (T5's forward, r1 of session 19) and the next one 43-69 ms (its backward), on the cold first
    step's path. Here, once per device and process, on the caller's thread (a background one,
    while the daemon compiles): CUDA initialised and the device's primary context current on this
    thread, cuBLASLt's first handle created and destroyed (the libcublasLt PyTorch loaded, which
    the kernels libraries use), the matmul tune table opened. Nothing it does changes a result;
    a failure is logged at debug level and the load does it all as before. True if it ran."""
    with _prewarm_lock:
        if device_index in _prewarmed:
            return False
        _prewarmed.add(device_index)
    try:
        torch.cuda.init()
        _make_context_current(torch.device("cuda", device_index))
        for name in ("libcublasLt.so.13", "libcublasLt.so.12"):
            try:
                lib = ctypes.CDLL(name, mode=os.RTLD_NOLOAD)
            except OSError:
                continue
            create, destroy = lib.cublasLtCreate, lib.cublasLtDestroy
            create.argtypes, create.restype = [ctypes.POINTER(ctypes.c_void_p)], ctypes.c_int
            destroy.argtypes, destroy.restype = [ctypes.c_void_p], ctypes.c_int
            handle = ctypes.c_void_p()
            if create(ctypes.byref(handle)) == 0:
                destroy(handle)
            break
        _tune_table(device_index)
    except Exception as e:  # deliberately ignored: the plan's load does the same and reports
        logging.getLogger(__name__).debug("tccd: CUDA pre-warm of device %d failed: %s", device_index, e)
    return True


def _tune_table_path(device_index: int) -> Optional[str]:
    """Where the table of this device's GPU model and this process's cuBLASLt is saved (None:
    no local cache, or the cuBLASLt version is unknown)."""
    from . import config

    cfg = config.get()
    version = _cublaslt_version()
    if not cfg.local_cache or version is None:
        return None
    props = torch.cuda.get_device_properties(device_index)
    identity = f"{props.name}|sm{props.major}{props.minor}|cublaslt{version}|{_TUNE_MAGIC:x}"
    digest = hashlib.sha256(identity.encode()).hexdigest()[:24]
    return os.path.join(cfg.cache_dir, "gemm-tune", f"{digest}.bin")


def _tune_table(device_index: int) -> _TuneTable:
    with _tune_tables_lock:
        table = _tune_tables.get(device_index)
        if table is None:
            table = _tune_tables[device_index] = _TuneTable(_tune_table_path(device_index), device_index)
        return table


def _init_cuda_library(artifact: str, library: ctypes.CDLL, device_index: int) -> None:
    """Loads the module of a kernels_cuda.so on `device_index`, outside any CUDA graph capture
    (launches then never load anything, so they are safe to capture).

    Loading means cuModuleLoadData, every kernel's functions and occupancy, and the module's
    cuBLASLt descriptors and heuristics: done here, at load, it runs in the thread that loads
    the plan (a background compile's or the backward prefetch's, which hold no GIL in it) rather
    than inside the plan's first call, on the step's path."""
    torch.cuda.init()
    try:
        init = library.tccd_cuda_init
    except AttributeError:
        raise ArtifactError(f"{artifact} has no tccd_cuda_init entry point")
    init.argtypes = []
    init.restype = ctypes.c_int
    global _cuda_init_seconds
    start = time.perf_counter()
    table = None
    try:
        set_table = library.tccd_cuda_set_tune_table
    except AttributeError:
        set_table = None  # no tuned matmuls in this library
    sharing = None
    if set_table is not None:
        from . import gemm_tunes

        set_table.argtypes = [ctypes.c_void_p]
        set_table.restype = ctypes.c_int
        table = _tune_table(device_index)
        # Loads of tuned libraries of a device take turns: the daemon's choices are written
        # into the table between them (and timings on one GPU would disturb each other).
        sharing = gemm_tunes.sharing(device_index)
        sharing.lock.acquire()
        sharing.before_load(table.buffer, device_index)
        if set_table(ctypes.addressof(table.buffer)) != 0:
            # A runtime of another table layout (a daemon of another version): the library
            # keeps its own table; its matmuls are still timed, only not shared or saved.
            table = None
    try:
        with torch.cuda.device(device_index):
            err = init()
            if err == _RT_ERROR_INVALID_CONTEXT and not torch.cuda.is_current_stream_capturing():
                # No current CUDA context on this thread: a thread that has made no CUDA runtime
                # call yet (tccd's background threads, autograd's backward threads) has none. A
                # stream query makes the device's primary context current; then once more.
                _make_context_current(torch.device("cuda", device_index))
                err = init()
            if table is not None and err == 0 and sharing.after_load(table.buffer, device_index):
                # Another process stored its choice first: the loaded gemms take it (the
                # runtime re-reads the table), so that every process computes the same bits.
                set_table(ctypes.addressof(table.buffer))
        if table is not None and err == 0:
            table.save_if_grown()
    finally:
        if sharing is not None:
            sharing.lock.release()
    _cuda_init_seconds += time.perf_counter() - start
    if err == _RT_ERROR_INVALID_CONTEXT:
        # Still none (a capture on this thread): the module loads at the first launch, in the
        # context of the stream it is launched on (tccd_rt_launch/segment do that themselves).
        return
    if err != 0:
        raise ArtifactError(
            f"{artifact}: loading its CUDA kernels failed (error {err}): "
            f"{_cuda_last_error_fn(library)()}"
        )


def _plan_cuda_device(plan: "pb.Plan") -> int:
    """The CUDA device of the plan's first CUDA value (a plan runs on one device); 0 if unset."""
    for meta in plan.values:
        if meta.device.type == pb.CUDA:
            return max(meta.device.index, 0)
    return torch.cuda.current_device()


# Kernel libraries with gemms of run-time sizes (they export tccd_cuda_gemm_stats: the sized
# gemm cache's counters), for the plan profile (native_plan.profile_report), by "PLAN: ARTIFACT"
# (every plan's library is named kernels_cuda.so: the artifact name alone kept only the last
# plan's, as the first GPU run of the counters showed).
sized_gemm_libraries: Dict[str, ctypes.CDLL] = {}
# tccd_cuda_runtime.h TCCD_RT_GEMM_STAT_*, in order.
SIZED_GEMM_STATS = ("calls", "hits", "misses", "key_churn", "evictions", "heuristics", "setup_ns",
                    "matmul_ns", "miss_matmul_ns")


def sized_gemm_stats(library: ctypes.CDLL) -> Dict[str, int]:
    """The sized gemm cache's counters of `library` since it was loaded (tccd_cuda_gemm_stats)."""
    fn = library.tccd_cuda_gemm_stats
    fn.argtypes, fn.restype = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_int], ctypes.c_int
    words = (ctypes.c_uint64 * len(SIZED_GEMM_STATS))()
    fn(words, len(SIZED_GEMM_STATS))
    return dict(zip(SIZED_GEMM_STATS, words))


def load_plan(plan: "pb.Plan", artifact_paths: Dict[str, str], name: str = "graph",
              defer_cuda_init: bool = False) -> LoadedPlan:
    """Binds `plan` to the shared objects at `artifact_paths` (artifact name -> file).

    defer_cuda_init: the kernels' CUDA modules load on a background thread instead of here
    (TCCD_DEFER_BACKWARD_INIT, for a backward plan loaded on a warm start's main thread); a
    launch before that thread is done loads the module itself (the runtime's module load is
    mutex-guarded), and a failure there is logged: the first launch then loads and reports it."""
    needed = {s.native.artifact for s in plan.steps if s.WhichOneof("kind") == "native"}
    needed |= {s.segment.artifact for s in plan.steps if s.WhichOneof("kind") == "segment"}
    libraries: Dict[str, ctypes.CDLL] = {}
    for artifact in sorted(needed):
        path = artifact_paths.get(artifact)
        if path is None:
            raise ArtifactError(f"plan needs artifact {artifact!r}, which was not fetched")
        try:
            libraries[artifact] = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
        except OSError as e:
            raise ArtifactError(f"cannot load {artifact} ({path}): {e}") from e
        if hasattr(libraries[artifact], "tccd_cuda_gemm_stats"):
            sized_gemm_libraries[f"{name}: {artifact}"] = libraries[artifact]
    cuda_artifacts = {
        s.native.artifact for s in plan.steps
        if s.WhichOneof("kind") == "native" and s.native.abi in (ABI_CUDA, ABI_CUDA_SYM, ABI_CUDA_SYM_GEMM)
    } | {s.segment.artifact for s in plan.steps if s.WhichOneof("kind") == "segment"}
    if cuda_artifacts:
        device_index = _plan_cuda_device(plan)
        inits = [(artifact, libraries[artifact]) for artifact in sorted(cuda_artifacts)]
        if defer_cuda_init:
            _init_in_background(inits, device_index, name)
        else:
            for artifact, library in inits:
                _init_cuda_library(artifact, library, device_index)
    return LoadedPlan(plan, libraries, name)


def _init_in_background(inits: List[Tuple[str, ctypes.CDLL]], device_index: int, name: str) -> None:
    def run() -> None:
        for artifact, library in inits:
            try:
                _init_cuda_library(artifact, library, device_index)
            except Exception as e:  # deliberately ignored: the first launch loads and reports it
                logging.getLogger(__name__).warning(
                    "tccd: %s: loading %s in the background failed (its first launch loads it): %s",
                    name, artifact, e)

    threading.Thread(target=run, name=f"tccd-module-load {name}", daemon=True).start()
