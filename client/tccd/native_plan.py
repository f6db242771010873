"""Runs a whole plan in ONE native call: the PLAN_RUNTIME artifact (codegen/plan_runtime) reads
the graph's PLAN_DESCRIPTOR and does every step itself: kernels and segments of the graph's .so,
aliases, allocations through PyTorch's allocator, releases at last use, and extern ATen ops
through PyTorch's stable C ABI (aoti_torch_call_dispatcher), resolved from the libtorch this
process has loaded.

The daemon does not know this process's torch schemas, so extern argument lists are completed
here, once at load, from each op's torch schema (defaults filled, every argument typed). What the
stable dispatcher of each torch carries is written down in codegen/plan_runtime/README.md;
addmm/baddbmm (Scalar beta/alpha, which no dispatcher converts) run through AOTInductor's C
shims instead, and so do convolution, convolution_backward (whose masked-off gradients torch
2.11's dispatcher cannot return) and copy_, typed, without the boxed call's per-call cost; extern
view ops are made from the plan's metadata where their base is laid out as declared. One
plan call is one foreign call (tccd_plan_run_py, through ctypes.PyDLL): the input and output
capsules cross as Python lists, not one ctypes call per tensor. An op whose arguments or returns neither can carry (other Scalar arguments,
optional or nested list returns...) is bound to a Python callback the runtime calls from inside the one native call; those steps are
counted in `python_steps`. Anything that fails at load (torch version outside the declared
range, a missing symbol, a malformed descriptor) leaves the plan to the Python interpreter
(runtime.py) with one logged line. TCCD_NATIVE_RUNTIME=0 always uses the interpreter.
"""

from __future__ import annotations

import atexit
import collections
import ctypes
import logging
import os
import re
import struct
import sys
import threading
import time
import weakref
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

import torch

from .runtime import LoadedPlan, _dtype, _has_ref, _materialize, _Ref, _Sym, _extern_step, decode_value, resolve_op
from .v1 import tccd_pb2 as pb

log = logging.getLogger(__name__)

RUNTIME_ABI = b"tccd-plan-runtime-4"
# The torch releases whose C ABI the runtime is declared against (tccd_plan_torch_abi.h).
TORCH_MIN = (2, 11)
TORCH_MAX = (2, 15)

# tccd_plan_format.h TCCD_ARG_*.
_ARG_NONE, _ARG_TENSOR, _ARG_INT, _ARG_FLOAT, _ARG_BOOL, _ARG_SCALAR_TYPE = 0, 1, 2, 3, 4, 5
_ARG_INT_LIST, _ARG_TENSOR_LIST, _ARG_BOOL_LIST, _ARG_STRING, _ARG_DEVICE = 6, 7, 8, 9, 10
_ARG_LAYOUT, _ARG_MEMORY_FORMAT, _ARG_OPTIONAL_TENSOR_LIST, _ARG_FLOAT_LIST = 11, 12, 13, 14
_ARG_CONSTANT = 15
_ARG_SYM, _ARG_SYM_INT_LIST = 16, 17
_ARG_UNDEFINED_TENSOR = 18
# tccd_plan_run_symbolic: a symbol the caller has no value for.
_NO_SYMBOL = -(2**63)
_ARG_OPTIONAL = 0x100
# TCCD_RET_*.
_RET_TENSOR, _RET_TENSOR_LIST, _RET_DISCARD = 1, 2, 3
# Whether aoti_torch_call_dispatcher converts an undefined Tensor return (None) to a null handle:
# 2.15 does (tests/python/test_e2e_native_plan.py, masked convolution_backward); 2.11 throws.
_UNDEFINED_TENSOR_RETURNS_CONVERT = tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 15)
# Ops whose every Tensor return is defined on every device and mode (ATen returns empty tensors,
# never undefined ones, for what it did not compute), so an unused return is safe to take back
# through the dispatcher before 2.15 too: cuDNN's batch norm (its reserve space, unused when the
# backward is native_batch_norm_backward: the 2 Python steps of a two-norm CNN's forward on
# torch 2.11) and ATen's own training norms (save_mean / save_invstd in eval mode).
_DEFINED_TENSOR_RETURNS = {
    "aten::cudnn_batch_norm.default", "aten::_native_batch_norm_legit.default",
    "aten::_native_batch_norm_legit_functional.default", "aten::native_batch_norm.default",
    "aten::_native_batch_norm_legit_no_training.default",
}
# TCCD_SHIM_*: extern ops with Scalar arguments run through AOTInductor's C shims.
# mm/bmm have no Scalar but their typed _out shims cost less than the boxed dispatcher call.
_SHIMS = {"aten::addmm.default": 1, "aten::baddbmm.default": 2, "aten::add.Tensor": 3, "aten::mm.default": 7,
          "aten::bmm.default": 8}
_SHIM_ADD_TENSOR = 3
_SHIM_MM = (7, 8)
# TCCD_SHIM_CONVOLUTION*, TCCD_SHIM_COPY: typed C shims (tccd_plan_bind_typed_shim), on every
# torch of the range.
_CONV_SHIMS = {"aten::convolution.default": 4, "aten::convolution_backward.default": 5}
_SHIM_COPY = 6
# TCCD_SHIM_SDPA_*: flash and cuDNN attention's forward through their typed CUDA shims, which
# return the unused cum_seq_q/cum_seq_k (undefined) as handles, where torch 2.11's dispatcher
# fails on them (GPT-2's and Llama's 4 Python steps per forward on the H200).
_SDPA_SHIMS = {"aten::_scaled_dot_product_flash_attention.default": 9,
               "aten::_scaled_dot_product_cudnn_attention.default": 10}
# Ops whose output is a view of their first argument, same dtype (tccd_plan_bind_view: made from
# the plan's metadata where the base is laid out as declared, else run by the dispatcher).
_VIEW_OPS = {
    "aten::view.default", "aten::_unsafe_view.default", "aten::t.default", "aten::transpose.int",
    "aten::permute.default", "aten::squeeze.dim", "aten::squeeze.dims", "aten::squeeze.default",
    "aten::unsqueeze.default", "aten::expand.default", "aten::select.int", "aten::slice.Tensor",
    "aten::detach.default", "aten::alias.default", "aten::_reshape_alias.default", "aten::as_strided.default",
    "aten::diagonal.default", "aten::unfold.default",
}
# c10 codes of the stable dispatcher's Layout, MemoryFormat and DeviceType (tccd_plan_format.h
# TCCD_C10_*, checked against torch's aoti_torch_* functions by the ABI test).
C10_LAYOUTS = {torch.strided: 0}
C10_MEMORY_FORMATS = {
    torch.contiguous_format: 0, torch.preserve_format: 1, torch.channels_last: 2,
    torch.channels_last_3d: 3,
}
C10_DEVICE_TYPES = {"cpu": 0, "cuda": 1}
# c10::ScalarType codes (tccd_plan_format.h TCCD_C10_*; checked against torch by the ABI test).
C10_DTYPES = {
    torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.int64: 4,
    torch.float16: 5, torch.float32: 6, torch.float64: 7, torch.complex64: 9,
    torch.complex128: 10, torch.bool: 11, torch.bfloat16: 15, torch.uint16: 27, torch.uint32: 28,
    torch.uint64: 29,
}

_PythonStep = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64,
    ctypes.POINTER(ctypes.c_void_p),
)
_MakeCurrent = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int32)

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_pointer.restype = ctypes.c_void_p
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_new.restype = ctypes.py_object

_logged = set()
_logged_lock = threading.Lock()


class NativeUnavailable(Exception):
    """The plan cannot run natively here; the message says why (logged once)."""


def log_fallback(reason: str) -> None:
    """One line per distinct reason and process: the plan runs in the Python interpreter."""
    with _logged_lock:
        if reason in _logged:
            return
        _logged.add(reason)
    log.warning("tccd: native plan runtime unavailable, plans run in the Python interpreter: %s", reason)


def torch_version_supported(version: str) -> bool:
    m = re.match(r"(\d+)\.(\d+)", version)
    return bool(m) and TORCH_MIN <= (int(m.group(1)), int(m.group(2))) <= TORCH_MAX


def _loaded_library(name: str) -> Optional[str]:
    """The path this process loaded `name` (libtorch_cpu.so) from, read from /proc/self/maps:
    the runtime reopens exactly that file with RTLD_NOLOAD."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.rstrip("\n").split(maxsplit=5)[-1]
                if path.endswith("/" + name):
                    return path
    except OSError:
        pass
    return None


# ---------------------------------------------------------------------------------------------
# The runtime library (one per artifact path: the same digest for every graph)
# ---------------------------------------------------------------------------------------------

_runtimes: Dict[str, ctypes.CDLL] = {}
_runtimes_lock = threading.Lock()


def _open_runtime(path: str) -> ctypes.CDLL:
    with _runtimes_lock:
        lib = _runtimes.get(path)
        if lib is not None:
            return lib
        if not torch_version_supported(torch.__version__):
            raise NativeUnavailable(
                f"torch {torch.__version__} is outside the runtime's declared ABI range "
                f"{'.'.join(map(str, TORCH_MIN))}..{'.'.join(map(str, TORCH_MAX))}"
            )
        try:
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
        except OSError as e:
            raise NativeUnavailable(f"cannot load the plan runtime: {e}") from None
        lib.tccd_plan_runtime_abi.restype = ctypes.c_char_p
        if lib.tccd_plan_runtime_abi() != RUNTIME_ABI:
            raise NativeUnavailable(f"plan runtime ABI {lib.tccd_plan_runtime_abi()!r}, expected {RUNTIME_ABI!r}")
        lib.tccd_plan_last_error.restype = ctypes.c_char_p
        lib.tccd_plan_runtime_init.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        lib.tccd_plan_load.argtypes = [
            ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64, ctypes.POINTER(ctypes.c_char_p),
            ctypes.POINTER(ctypes.c_void_p),
        ]
        lib.tccd_plan_load.restype = ctypes.c_void_p
        lib.tccd_plan_free.argtypes = [ctypes.c_void_p]
        lib.tccd_plan_set_callbacks.argtypes = [ctypes.c_void_p, _PythonStep, _MakeCurrent]
        lib.tccd_plan_add_constant.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64)]
        lib.tccd_plan_bind_extern.argtypes = [
            ctypes.c_void_p, ctypes.c_int64, ctypes.c_char_p, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64),
            ctypes.POINTER(ctypes.c_int64), ctypes.c_int64, ctypes.POINTER(ctypes.c_int64),
            ctypes.c_int64, ctypes.POINTER(ctypes.c_int64),
        ]
        lib.tccd_plan_bind_out_shim.argtypes = [
            ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64),
            ctypes.c_double, ctypes.c_double,
        ]
        lib.tccd_plan_bind_typed_shim.argtypes = [
            ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64), ctypes.c_int64,
            ctypes.POINTER(ctypes.c_int64),
        ]
        lib.tccd_plan_bind_view.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]
        lib.tccd_plan_bind_arange.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64)]
        lib.tccd_plan_bind_python_extern.argtypes = [
            ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64),
        ]
        lib.tccd_plan_expr_text.argtypes = [ctypes.c_void_p, ctypes.c_int64]
        lib.tccd_plan_expr_text.restype = ctypes.c_char_p
        for fn in ("tccd_plan_num_inputs", "tccd_plan_num_ref_outputs", "tccd_plan_num_unbound",
                   "tccd_plan_num_symbols", "tccd_plan_num_exprs"):
            getattr(lib, fn).argtypes = [ctypes.c_void_p]
            getattr(lib, fn).restype = ctypes.c_int64
        lib.tccd_plan_run.argtypes = [
            ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64,
            ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64,
        ]
        if hasattr(lib, "tccd_plan_profile"):
            lib.tccd_plan_profile.argtypes = [ctypes.c_void_p] + [ctypes.POINTER(ctypes.c_int64)] * 3 + [ctypes.c_int64]
            lib.tccd_plan_profile.restype = ctypes.c_int64
        lib.tccd_plan_run_symbolic.argtypes = lib.tccd_plan_run.argtypes + [
            ctypes.c_int64, ctypes.POINTER(ctypes.c_int64),
        ]
        # The same library through ctypes.PyDLL (calls keep the GIL): tccd_plan_run_py takes the
        # input capsules and returns the output capsules as Python lists, one foreign call per
        # plan call whatever its number of tensors. Unavailable (None): per-tensor ctypes calls.
        lib.run_py = None
        if os.environ.get("TCCD_PLAN_RUN_PY", "1") != "0" and hasattr(lib, "tccd_plan_py_init"):
            py = ctypes.PyDLL(path, mode=ctypes.RTLD_LOCAL)
            if py.tccd_plan_py_init() == 0:
                lib.run_py = py.tccd_plan_run_py
                lib.run_py.argtypes = [
                    ctypes.c_void_p, ctypes.py_object, ctypes.py_object, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64),
                ]
        cpu = _loaded_library("libtorch_cpu.so")
        if cpu is None:
            raise NativeUnavailable("libtorch_cpu.so is not mapped in this process")
        cuda = _loaded_library("libtorch_cuda.so")
        if lib.tccd_plan_runtime_init(cpu.encode(), cuda.encode() if cuda else None) != 0:
            raise NativeUnavailable(lib.tccd_plan_last_error().decode("utf-8", "replace"))
        _enable_cpu_blas(lib)
        _enable_column_sums(lib)
        _runtimes[path] = lib
        return lib


def _enable_cpu_blas(lib: ctypes.CDLL) -> None:
    """TCCD_CPU_BLAS (default 1): CPU plans' float32/float64 mm and addmm call the BLAS gemm
    (sgemm_, dgemm_) libtorch_cpu exports directly, as ATen's own CPU matmul ends up doing, without
    ATen's dispatch around it (codegen/plan_runtime/runtime/tccd_plan_blas.h). float32 stays on
    ATen unless torch.get_float32_matmul_precision() is "highest" (at the first plan load): the
    lower precisions may send ATen's float32 matmuls to oneDNN's reduced-precision kernels.
    TCCD_CPU_BLAS_SYMBOLS ("sgemm_,dgemm_") names the two functions (a test hook: a name
    libtorch_cpu lacks makes that lookup fail). A missing or rejected function: ATen's C shim
    runs those matmuls, with one logged line."""
    fn = getattr(lib, "tccd_plan_cpu_blas", None)
    if fn is None:
        return
    fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    if os.environ.get("TCCD_CPU_BLAS", "1") == "0":
        fn(None, None)  # off (the runtime's state is process-wide: a reload turns it off too)
        return
    names = (os.environ.get("TCCD_CPU_BLAS_SYMBOLS", "") or "sgemm_,dgemm_").split(",")
    sgemm = names[0].strip() if torch.get_float32_matmul_precision() == "highest" else ""
    dgemm = names[1].strip() if len(names) > 1 else ""
    if fn(sgemm.encode() or None, dgemm.encode() or None) != 0:
        log.warning(
            "tccd: CPU plans' matmuls run through ATen, not BLAS directly: %s",
            lib.tccd_plan_last_error().decode("utf-8", "replace"),
        )


def _enable_column_sums(lib: ctypes.CDLL) -> None:
    """TCCD_CPU_COLUMN_SUMS (default 1): CPU plans' bias gradients (aten::sum.dim_IntList over dim
    0 of a 2-D float32/float64 tensor with unit-stride columns) are summed by the runtime itself
    (codegen/plan_runtime/runtime/tccd_plan_column_sum.h: float32 accumulated in double over
    chunks of float partials; the last bits may differ from ATen's order), not by a dispatcher
    call to ATen's reduction. 0: ATen's, as before."""
    fn = getattr(lib, "tccd_plan_cpu_column_sums", None)
    if fn is not None:
        fn.argtypes = [ctypes.c_int]
        fn(0 if os.environ.get("TCCD_CPU_COLUMN_SUMS", "1") == "0" else 1)


def _runtime_counter(name: str) -> int:
    with _runtimes_lock:
        libs = list(_runtimes.values())
    for lib in libs:
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype = ctypes.c_int64
            return int(fn())
    return 0


def cpu_blas_calls() -> int:
    """Steps run as direct BLAS calls so far in this process (0 before a runtime is loaded)."""
    return _runtime_counter("tccd_plan_cpu_blas_calls")


def cpu_column_sum_calls() -> int:
    """Steps run as the runtime's column sums so far in this process."""
    return _runtime_counter("tccd_plan_cpu_column_sum_calls")


# ---------------------------------------------------------------------------------------------
# Extern steps: complete argument lists from torch's schema
# ---------------------------------------------------------------------------------------------


def _bits(value: float) -> int:
    return struct.unpack("<q", struct.pack("<d", float(value)))[0]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _typed_arg(type_: Any, value: Any, pool: List[int],
               exprs: Optional[Dict[str, int]] = None) -> Optional[Tuple[int, int]]:
    """(kind, payload) of one argument for the stable dispatcher, or None if it cannot carry it.
    List and string arguments are appended to `pool` as [n, items...]; the payload is their
    offset. Scalar (a number of any type) is carried by no torch's dispatcher: None. A SymInt
    (`_Sym`) is the index of its expression in the descriptor (`exprs`: text -> index)."""
    optional = isinstance(type_, torch.OptionalType)
    inner = type_.getElementType() if optional else type_
    name = str(inner)
    if value is None:
        if optional:
            return _ARG_NONE, 0
        # None for a plain Tensor is an undefined Tensor, as torch's Python binding passes it
        # (flash / cuDNN attention's backward takes cum_seq_q and cum_seq_k so, on dense inputs).
        return (_ARG_UNDEFINED_TENSOR, 0) if name == "Tensor" else None
    flag = _ARG_OPTIONAL if optional else 0
    if isinstance(value, torch.dtype):
        # A ScalarType argument prints as "int" (its real type is ScalarType; the dispatcher
        # converts by the real type).
        if name in ("int", "ScalarType") and value in C10_DTYPES:
            return _ARG_SCALAR_TYPE | flag, C10_DTYPES[value]
        return None
    if isinstance(value, torch.layout):
        # Layout and MemoryFormat print as "int" too.
        return (_ARG_LAYOUT | flag, C10_LAYOUTS[value]) if name in ("int", "Layout") and value in C10_LAYOUTS else None
    if isinstance(value, torch.memory_format):
        if name in ("int", "MemoryFormat") and value in C10_MEMORY_FORMATS:
            return _ARG_MEMORY_FORMAT | flag, C10_MEMORY_FORMATS[value]
        return None
    if isinstance(value, torch.device):
        if name != "Device" or value.type not in C10_DEVICE_TYPES:
            return None
        index = -1 if value.index is None else value.index
        # The dispatcher's packing: device type in the upper 32 bits, the index in the lower.
        return _ARG_DEVICE | flag, (C10_DEVICE_TYPES[value.type] << 32) | (index & 0xFFFFFFFF)
    if name == "Tensor" and isinstance(value, _Ref):
        return _ARG_TENSOR | flag, value.id
    if name in ("int", "SymInt") and _is_int(value):
        return _ARG_INT | flag, value
    if isinstance(value, _Sym) and _constant(value) is not None:
        value = _constant(value)  # a constant expression: the descriptor has it as an int
    if name in ("int", "SymInt") and isinstance(value, _Sym):
        index = (exprs or {}).get(value.text)
        return None if index is None else (_ARG_SYM | flag, index)
    if name == "float" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return _ARG_FLOAT | flag, _bits(value)
    if name == "bool" and isinstance(value, bool):
        return _ARG_BOOL | flag, int(value)
    if name == "str" and isinstance(value, str):
        data = value.encode("utf-8")
        padded = data + b"\0" * (-len(data) % 8)
        pool.append(len(data))
        pool.extend(struct.unpack(f"<{len(padded) // 8}q", padded))
        return _ARG_STRING | flag, len(pool) - len(padded) // 8 - 1
    if isinstance(value, (list, tuple)):
        if name in ("List[int]", "List[SymInt]") and all(_is_int(v) for v in value):
            kind, items = _ARG_INT_LIST, list(value)
        elif name == "List[bool]" and all(isinstance(v, bool) for v in value):
            kind, items = _ARG_BOOL_LIST, [int(v) for v in value]
        elif name == "List[float]" and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            kind, items = _ARG_FLOAT_LIST, [_bits(v) for v in value]
        elif name == "List[Tensor]" and all(isinstance(v, _Ref) for v in value):
            kind, items = _ARG_TENSOR_LIST, [v.id for v in value]
        elif name == "List[Optional[Tensor]]" and all(v is None or isinstance(v, _Ref) for v in value):
            kind, items = _ARG_OPTIONAL_TENSOR_LIST, [-1 if v is None else v.id for v in value]
        elif name in ("List[int]", "List[SymInt]") and all(_is_int(v) or isinstance(v, _Sym) for v in value):
            # [n, (is_expr, v)...]: a SymInt item is its expression's index.
            kind, items = _ARG_SYM_INT_LIST, []
            for v in value:
                if isinstance(v, _Sym) and _constant(v) is not None:
                    v = _constant(v)
                index = (exprs or {}).get(v.text) if isinstance(v, _Sym) else None
                if isinstance(v, _Sym) and index is None:
                    return None
                items.extend((0, v) if index is None else (1, index))
            pool.append(len(value))
            pool.extend(items)
            return kind | flag, len(pool) - len(items) - 1
        else:
            return None
        pool.append(len(items))
        pool.extend(items)
        return kind | flag, len(pool) - len(items) - 1
    return None


def _constant(value: "_Sym") -> Optional[int]:
    """The value of a SymInt whose expression is an integer literal (the descriptor writes those
    as plain ints, not as expressions), else None."""
    try:
        return int(value.text.strip().strip("()"))
    except ValueError:
        return None


_TORCH = ".".join(torch.__version__.split(".")[:2])


def _because(why: Optional[List[str]], reason: str) -> None:
    if why is not None:
        why.append(reason)


def _describe_value(value: Any) -> str:
    """A short description of an argument value for a Python step's reason."""
    if value is None:
        return "None"
    if isinstance(value, _Ref):
        return "a tensor"
    if isinstance(value, _Sym):
        return f"the SymInt {value.text}"
    if isinstance(value, (list, tuple)):
        kinds = sorted({_describe_value(v) for v in value})
        return f"a list of {', '.join(kinds)}" if kinds else "an empty list"
    return f"{type(value).__name__} {value!r}"[:80]


def _widen_layer_norm_mask(step: "pb.Step", values: List[Any]) -> bool:
    """native_layer_norm_backward with masked-off weight/bias gradients returns undefined tensors
    for them, which no stable dispatcher before 2.15 takes back (and AOTInductor has no shim for
    the op): ask for them anyway where the weight / bias exist (two [D] column sums, dropped by
    the runtime) so that every return is defined. Edits `values` (the schema's argument list);
    True when every return is now defined."""
    if step.extern_call.target != "aten::native_layer_norm_backward.default" or len(values) != 8:
        return False
    weight, bias, mask = values[5], values[6], values[7]
    if not isinstance(mask, (list, tuple)) or len(mask) != 3 or not mask[0]:
        return False  # grad_input itself is masked: not worth computing
    widened = [True, bool(mask[1]) or weight is not None, bool(mask[2]) or bias is not None]
    values[7] = widened
    return all(widened)


def _return_kinds(schema: Any, step: "pb.Step", all_defined: bool = False,
                  why: Optional[List[str]] = None) -> Optional[List[int]]:
    """TCCD_RET_* per schema return, or None when the runtime cannot take one back (the reason
    appended to `why`): Tensor returns map to step outputs in order; a lone Tensor[] return fills
    every step output; an int/float/bool return is dropped if no step output reads it."""
    types = [str(r.type) for r in schema.returns]
    if types == ["List[Tensor]"]:
        return [_RET_TENSOR_LIST]
    kinds = []
    for i, t in enumerate(types):
        unused = i >= len(step.outputs) or step.outputs[i] < 0
        # A return that aliases an argument (copy_'s `Tensor(a!)`: self) is as defined as it.
        aliases_an_argument = schema.returns[i].alias_info is not None
        always_defined = all_defined or step.extern_call.target in _DEFINED_TENSOR_RETURNS
        if (t == "Tensor" and unused and not aliases_an_argument and not always_defined
                and not _UNDEFINED_TENSOR_RETURNS_CONVERT):
            # An unused Tensor return may be undefined (a masked-off gradient, attention's
            # cum_seq_q); before torch 2.15 the dispatcher's return conversion calls toTensor()
            # on it and throws (seen on 2.11 with convolution_backward and cuDNN attention).
            _because(why, f"return {schema.returns[i].name or i} (Tensor) is unused and may be undefined, "
                          f"which the stable dispatcher of torch {_TORCH} cannot return (2.15 can)")
            return None
        if t == "Tensor":
            kinds.append(_RET_TENSOR)
        elif t in ("int", "SymInt", "float", "bool") and (i >= len(step.outputs) or step.outputs[i] < 0):
            kinds.append(_RET_DISCARD)
        else:
            _because(why, f"return {schema.returns[i].name or i} of type {t} (the runtime takes back tensors, "
                          "Tensor[] and unused numbers)")
            return None
    return kinds


def complete_arguments(step: "pb.Step", exprs: Optional[Dict[str, int]] = None,
                       why: Optional[List[str]] = None
                       ) -> Optional[Tuple[List[int], List[int], List[int], List[int]]]:
    """The extern step's full dispatcher stack (kinds, payloads), its return kinds and the pool
    its list arguments point into, from torch's schema of the op; None when the stable ABI
    cannot carry an argument or a return (why not: appended to `why`). `exprs`: the
    descriptor's expression indices."""
    call = step.extern_call
    try:
        schema = resolve_op(call.target)._schema
    except Exception as e:
        _because(why, f"torch {_TORCH} has no such op ({type(e).__name__})")
        return None
    values = _schema_values(step, schema)
    if values is None:
        _because(why, f"its arguments do not match torch {_TORCH}'s schema {schema}")
        return None
    all_defined = not _UNDEFINED_TENSOR_RETURNS_CONVERT and _widen_layer_norm_mask(step, values)
    returns = _return_kinds(schema, step, all_defined, why)
    if returns is None:
        return None
    kinds: List[int] = []
    payloads: List[int] = []
    pool: List[int] = []
    for a, value in zip(schema.arguments, values):
        typed = _typed_arg(a.type, value, pool, exprs)
        if typed is None:
            type_name = "Scalar" if str(a.type) in ("number", "Optional[number]") else str(a.type)
            _because(why, f"argument {a.name}: {type_name} given {_describe_value(value)}, which the stable ABI "
                          "cannot carry")
            return None
        kinds.append(typed[0])
        payloads.append(typed[1])
    return kinds, payloads, returns, pool


def _schema_values(step: "pb.Step", schema: Any) -> Optional[List[Any]]:
    """Every schema argument's value (defaults filled), or None if the call does not match."""
    call = step.extern_call
    args = [decode_value(v) for v in call.args]
    kwargs = {kv.name: decode_value(kv.value) for kv in call.kwargs}
    positional = [a for a in schema.arguments if not a.kwarg_only]
    if len(args) > len(positional) or not set(kwargs) <= {a.name for a in schema.arguments}:
        return None
    values = []
    for i, a in enumerate(schema.arguments):
        if i < len(args) and not a.kwarg_only:
            values.append(args[i])
        elif a.name in kwargs:
            values.append(kwargs[a.name])
        elif a.has_default_value():
            values.append(a.default_value)
        else:
            return None
    return values


def out_shim(step: "pb.Step", plan: "pb.Plan") -> Optional[Tuple[int, List[int], float, float]]:
    """(TCCD_SHIM_*, tensor argument ids, beta, alpha) for addmm/baddbmm and add.Tensor, whose
    Scalar beta and alpha the dispatcher cannot carry: AOTInductor's addmm_out/baddbmm_out and
    add_Tensor shims take them as doubles; mm/bmm through their _out shims (typed, cheaper than
    the boxed call). Floating outputs only (an integral addmm rejects a floating beta, an
    integral add a floating alpha)."""
    shim = _SHIMS.get(step.extern_call.target)
    if shim is None or len(step.outputs) != 1 or step.outputs[0] < 0:
        return None
    try:
        schema = resolve_op(step.extern_call.target)._schema
        dtype = _dtype(plan.values[step.outputs[0]].dtype)
    except Exception:
        return None
    values = _schema_values(step, schema)
    if values is None or not dtype.is_floating_point:
        return None
    if shim == _SHIM_ADD_TENSOR:
        tensors, beta, alpha = values[:2], 0.0, values[2]
    elif shim in _SHIM_MM:
        tensors, beta, alpha = values[:2], 0.0, 0.0
    else:
        tensors, beta, alpha = values[:3], values[3], values[4]
    if not all(isinstance(t, _Ref) for t in tensors):
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (beta, alpha)):
        return None
    return shim, [t.id for t in tensors], float(beta), float(alpha)


def conv_shim(step: "pb.Step") -> Optional[Tuple[int, List[int], List[int]]]:
    """(TCCD_SHIM_CONVOLUTION*, tensor argument ids, words) for convolution and
    convolution_backward with plain int arguments: the runtime calls AOTInductor's typed C shims
    (no IValue stack, no list handles per call; an undefined gradient of a masked-off output is
    a handle the runtime drops, which torch 2.11's stable dispatcher could not return). Words as
    tccd_plan_format.h lays them out; None (the dispatcher, or Python) for anything else, e.g.
    SymInt sizes."""
    shim = _CONV_SHIMS.get(step.extern_call.target)
    if shim is None:
        return None
    try:
        schema = resolve_op(step.extern_call.target)._schema
    except Exception:
        return None
    values = _schema_values(step, schema)
    if values is None:
        return None
    backward = shim == _CONV_SHIMS["aten::convolution_backward.default"]
    if backward:
        tensors, bias_sizes, rest, mask = values[:3], values[3], values[4:10], values[10]
    else:
        tensors, bias_sizes, rest, mask = values[:3], None, values[3:9], None
    stride, padding, dilation, transposed, output_padding, groups = rest

    def int_list(v: Any) -> bool:
        return isinstance(v, (list, tuple)) and all(_is_int(x) for x in v)

    if not all(isinstance(t, _Ref) for t in tensors[:2]) or not (tensors[2] is None or isinstance(tensors[2], _Ref)):
        return None
    if backward and tensors[2] is None:
        return None
    if not all(int_list(v) for v in (stride, padding, dilation, output_padding)):
        return None
    if not isinstance(transposed, bool) or not _is_int(groups):
        return None
    words: List[int] = []
    for v in (stride, padding, dilation):
        words += [len(v), *v]
    words += [int(transposed), len(output_padding), *output_padding, groups]
    if backward:
        if bias_sizes is not None and not int_list(bias_sizes):
            return None
        if not (isinstance(mask, (list, tuple)) and len(mask) == 3 and all(isinstance(m, bool) for m in mask)):
            return None
        outputs = list(step.outputs) + [-1] * (3 - len(step.outputs))
        if len(step.outputs) > 3 or any(o >= 0 and not m for o, m in zip(outputs, mask)):
            return None
        # A gradient no step reads is not computed (as the plan drops it anyway).
        mask = [m and o >= 0 for m, o in zip(mask, outputs)]
        words += [int(bias_sizes is not None), len(bias_sizes or []), *(bias_sizes or []), *map(int, mask)]
    elif len(step.outputs) != 1 or step.outputs[0] < 0:
        return None
    return shim, [-1 if t is None else t.id for t in tensors], words


def attention_shim(step: "pb.Step") -> Optional[Tuple[int, List[int], List[int]]]:
    """(TCCD_SHIM_SDPA_*, [query, key, value, attn_bias or -1], words) for flash and cuDNN
    attention's forward with plain arguments, whose int returns (max_q, max_k) no step reads;
    None for anything else (the dispatcher, or Python)."""
    shim = _SDPA_SHIMS.get(step.extern_call.target)
    if shim is None or not 1 <= len(step.outputs) <= 9 or any(o >= 0 for o in step.outputs[4:6]):
        return None
    try:
        values = _schema_values(step, resolve_op(step.extern_call.target)._schema)
    except Exception:
        return None
    if values is None:
        return None
    cudnn = shim == _SDPA_SHIMS["aten::_scaled_dot_product_cudnn_attention.default"]
    if cudnn:
        tensors, (compute_lse, dropout_p, is_causal, debug_mask, scale) = values[:4], values[4:]
    else:
        tensors, (dropout_p, is_causal, debug_mask, scale) = values[:3] + [None], values[3:]
        compute_lse = None
    if not all(isinstance(t, _Ref) for t in tensors[:3]) or not (tensors[3] is None or isinstance(tensors[3], _Ref)):
        return None
    flags = [is_causal, debug_mask] + ([compute_lse] if cudnn else [])
    numbers = [dropout_p] + ([] if scale is None else [scale])
    if not all(isinstance(f, bool) for f in flags):
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in numbers):
        return None
    words = [_bits(dropout_p), int(is_causal), int(debug_mask), int(scale is not None), _bits(scale or 0.0)]
    if cudnn:
        words.append(int(compute_lse))
    return shim, [-1 if t is None else t.id for t in tensors], words


def copy_shim(step: "pb.Step") -> Optional[Tuple[int, List[int], List[int]]]:
    """(TCCD_SHIM_COPY, [self, src, -1], [non_blocking]) for copy_ between two plan values (batch
    norm's running statistics written back: three per layer and step), run by aoti_torch_copy_
    rather than the boxed dispatcher; None for anything else."""
    if step.extern_call.target != "aten::copy_.default" or len(step.outputs) != 1:
        return None
    try:
        values = _schema_values(step, resolve_op(step.extern_call.target)._schema)
    except Exception:
        return None
    if values is None or not all(isinstance(v, _Ref) for v in values[:2]) or not isinstance(values[2], bool):
        return None
    return _SHIM_COPY, [values[0].id, values[1].id, -1], [int(values[2])]


# Factory ops whose result depends on their Scalar arguments only, deterministically: computed
# once at load by eager itself, then each call clones that tensor (clone keeps the strides), so
# the result is eager's bit for bit and still a fresh tensor the graph may write.
_CONSTANT_FACTORIES = {
    "aten::arange.default", "aten::arange.start", "aten::arange.start_step", "aten::full.default",
    "aten::scalar_tensor.default", "aten::linspace.default", "aten::logspace.default",
}


def constant_factory(step: "pb.Step") -> Optional[torch.Tensor]:
    """The tensor a deterministic factory step (_CONSTANT_FACTORIES) makes, or None."""
    call = step.extern_call
    if call.target not in _CONSTANT_FACTORIES or len(step.outputs) != 1 or step.outputs[0] < 0:
        return None
    args = [decode_value(v) for v in call.args]
    kwargs = {kv.name: decode_value(kv.value) for kv in call.kwargs}
    if _has_ref(args) or _has_ref(list(kwargs.values())):
        return None
    try:
        # Plans load while Dynamo compiles, under its fake tensor mode: make a real tensor.
        from torch.utils._python_dispatch import _disable_current_modes

        with _disable_current_modes(), torch.no_grad():
            value = resolve_op(call.target)(*args, **kwargs)
    except Exception:
        return None
    if not isinstance(value, torch.Tensor) or type(value) is not torch.Tensor:
        return None
    return value


_ARANGES = {"aten::arange.default": 1, "aten::arange.start": 2, "aten::arange.start_step": 3}


def symbolic_arange(step: "pb.Step", plan: "pb.Plan", exprs: Optional[Dict[str, int]]) -> Optional[List[int]]:
    """(is_expr, v) for start, end, step of an integral arange whose bounds are SymInts (the
    runtime computes it: tccd_plan_bind_arange), or None."""
    call = step.extern_call
    n_bounds = _ARANGES.get(call.target)
    if n_bounds is None or not exprs or len(step.outputs) != 1 or step.outputs[0] < 0:
        return None
    args = [decode_value(v) for v in call.args]
    kwargs = {kv.name: decode_value(kv.value) for kv in call.kwargs}
    if len(args) != n_bounds or kwargs.get("layout", torch.strided) not in (None, torch.strided):
        return None
    if kwargs.get("pin_memory") or kwargs.get("dtype") not in (None, torch.int64, torch.int32):
        return None
    if plan.values[step.outputs[0]].dtype not in (pb.INT64, pb.INT32):
        return None
    bounds = [0, *args, 1] if n_bounds == 1 else args + [1] if n_bounds == 2 else args
    words: List[int] = []
    for b in bounds:
        if isinstance(b, _Sym) and b.text in exprs:
            words.extend((1, exprs[b.text]))
        elif _is_int(b):
            words.extend((0, b))
        else:
            return None
    return words


def bind_extern(step: "pb.Step", plan: "pb.Plan", exprs: Optional[Dict[str, int]] = None) -> Optional[Tuple[str, Any]]:
    """How the runtime calls an extern step natively: ("dispatcher", complete_arguments),
    ("shim", out_shim), ("typed", conv_shim, copy_shim or attention_shim), ("constant", the tensor a clone of which the step returns) or
    ("arange", symbolic_arange); None when
    it needs the Python callback. `plan` gives the values' metadata a binding may need; `exprs`
    the descriptor's expression indices (symbolic plans)."""
    shim = out_shim(step, plan)
    if shim is not None:
        return "shim", shim
    typed = conv_shim(step) or copy_shim(step) or attention_shim(step)
    if typed is not None:
        return "typed", typed
    constant = constant_factory(step)
    if constant is not None:
        return "constant", constant
    arange = symbolic_arange(step, plan, exprs)
    if arange is not None:
        return "arange", arange
    completed = complete_arguments(step, exprs)
    return ("dispatcher", completed) if completed is not None else None


def _plan_reads(plan: "pb.Plan") -> Tuple[Set[int], Set[int], Dict[int, List[int]]]:
    """(values native kernels and segments read, values other steps read or write, base -> the
    ids of its views): plan outputs not counted. A view step is an alias step or an extern view
    op of _VIEW_OPS with one tensor argument."""
    kernel_reads: Set[int] = set()
    other_reads: Set[int] = set()
    views: Dict[int, List[int]] = collections.defaultdict(list)  # base -> its views' ids
    for step in plan.steps:
        kind = step.WhichOneof("kind")
        if kind == "segment":
            kernel_reads.update(step.segment.inputs)
        elif kind == "native":
            kernel_reads.update(step.native.inputs)
        elif kind == "alias":
            if len(step.outputs) == 1 and step.outputs[0] >= 0:
                views[step.alias.base].append(step.outputs[0])
            else:
                other_reads.add(step.alias.base)
        elif kind == "extern_call":
            refs = _refs_of(step)
            base = decode_value(step.extern_call.args[0]) if step.extern_call.args else None
            if (step.extern_call.target in _VIEW_OPS and len(refs) == 1 and isinstance(base, _Ref)
                    and len(step.outputs) == 1 and step.outputs[0] >= 0 and not step.write_into):
                views[base.id].append(step.outputs[0])
            else:
                other_reads.update(refs)
        other_reads.update(i for i in step.write_into if i >= 0)
    return kernel_reads, other_reads, views


def _read_only_by_kernels(plan: "pb.Plan") -> Set[int]:
    """Value ids that only native kernels and segments read: no extern step (which may write
    its argument, or return a view of it), no plan output. A generated kernel writes only its own
    outputs (or a graph input named in write_into). A view step (an alias step, or an extern
    view op of _VIEW_OPS) counts as its output's readers: the base is read only by kernels when
    every view of it is (Llama's position ids: unsqueeze(arange) read by two segments on either
    side of an extern step; the arange was cloned per call for it, a device copy each)."""
    kernel_reads, other_reads, views = _plan_reads(plan)
    for value in plan.outputs:
        if value.WhichOneof("kind") == "ref":
            other_reads.add(value.ref.node)

    memo: Dict[int, bool] = {}

    def read_only(value: int) -> bool:
        # Views come after their base in the plan, so this recursion follows the plan's order.
        if value not in memo:
            memo[value] = value not in other_reads and all(read_only(v) for v in views.get(value, ()))
        return memo[value]

    return {v for v in kernel_reads | set(views) if read_only(v)}


def _kernel_or_output_closure(plan: "pb.Plan", value: int) -> Optional[Set[int]]:
    """`value` and its views (transitively) when only kernels, view steps and plan outputs read
    them, else None: which plan outputs may then return it is the caller's question
    (NativePlan.share_saved_constants; GPT-2's saved position ids are unsqueeze(arange))."""
    _, other_reads, views = _plan_reads(plan)
    closure, todo = set(), [value]
    while todo:
        v = todo.pop()
        if v in other_reads:
            return None
        closure.add(v)
        todo.extend(views.get(v, ()))
    return closure


def _returns_fresh(target: str) -> bool:
    """Whether the op neither writes an argument nor returns a view of one: no alias annotation
    anywhere in its schema (plans run without autograd, so nothing keeps its inputs either)."""
    try:
        schema = resolve_op(target)._schema
    except Exception:  # deliberately ignored: an op we cannot read is not fresh
        return False
    return all(a.alias_info is None for a in schema.arguments) and all(r.alias_info is None for r in schema.returns)


def arena_values(plan: "pb.Plan", fresh_externs: Set[int]) -> List[int]:
    """Value ids a plan call may take from its arena (tccd_plan_enable_arena): read only by
    native kernels and segments (which write only their own outputs, or a graph input named in
    write_into) and by the extern steps `fresh_externs` (C shims that return new tensors), never
    a plan output, an alias's base or a value written into. (Extern steps run through the
    dispatcher are fresh when their schema has no alias annotation: _returns_fresh.) Whether the runtime allocates the
    value itself (and so may place it in the arena) it checks on its side."""
    candidates: Set[int] = set()
    kept: Set[int] = set()  # read by a step that may keep or return a view of it
    for index, step in enumerate(plan.steps):
        kind = step.WhichOneof("kind")
        if kind in ("native", "segment"):
            candidates.update(v for v in step.outputs if v >= 0)
            kept.update(i for i in step.write_into if i >= 0)
        elif kind == "alias":
            kept.add(step.alias.base)
        elif kind == "extern_call":
            if index in fresh_externs:
                candidates.update(v for v in step.outputs if v >= 0)
            else:
                kept.update(_refs_of(step))
    for value in plan.outputs:
        if value.WhichOneof("kind") == "ref":
            kept.add(value.ref.node)
    return sorted(v for v in candidates - kept if v >= plan.num_inputs)


_SIZED_ABIS = ("tccd-cuda-sym-1", "tccd-cpu-sym-1", "tccd-cuda-sym-gemm-1")


def symbolic_segment_values(plan: "pb.Plan", views: Set[int]) -> List[int]:
    """Value ids of a symbolic plan that may stay inside its symbolic segments
    (tccd_plan_enable_symbolic_segments): defined by a sized kernel or gemm (or by one of the
    view steps `views`, bound with tccd_plan_bind_view, of such a value), read only by sized
    kernels, gemms and such views, never a plan output. The runtime checks the rest on its
    side (a root's defining step, write_into, a gemm operand's alignment) and drops what fails."""
    readers: Dict[int, List[int]] = {}
    defined: Dict[int, int] = {}
    for index, step in enumerate(plan.steps):
        kind = step.WhichOneof("kind")
        if kind == "native":
            ins = list(step.native.inputs)
        elif kind == "segment":
            ins = list(step.segment.inputs)
        elif kind == "alias":
            ins = [step.alias.base]
        else:
            ins = _refs_of(step)
        for v in ins:
            readers.setdefault(v, []).append(index)
        for v in step.outputs:
            if v >= 0:
                defined[v] = index

    def sized(index: int) -> bool:
        step = plan.steps[index]
        return step.WhichOneof("kind") == "native" and step.native.abi in _SIZED_ABIS

    candidates = {v for v, index in defined.items() if v >= plan.num_inputs and (sized(index) or index in views)}
    for value in plan.outputs:
        if value.WhichOneof("kind") == "ref":
            candidates.discard(value.ref.node)
    changed = True
    while changed:
        changed = False
        for v in sorted(candidates):
            index = defined[v]
            ok = not (index in views and _refs_of(plan.steps[index])[0] not in candidates)
            for r in readers.get(v, ()):
                if not (sized(r) or (r in views and all(o in candidates for o in plan.steps[r].outputs))):
                    ok = False
            if not ok:
                candidates.discard(v)
                changed = True
    return sorted(candidates)


def _refs_of(step: "pb.Step") -> List[int]:
    """Every value id the extern step reads, in first-use order (what the Python callback gets)."""
    ids: List[int] = []

    def walk(obj: Any) -> None:
        if isinstance(obj, _Ref):
            if obj.id not in ids:
                ids.append(obj.id)
        elif isinstance(obj, list):
            for item in obj:
                walk(item)

    for v in step.extern_call.args:
        walk(decode_value(v))
    for kv in step.extern_call.kwargs:
        walk(decode_value(kv.value))
    return ids


def _has_tensor_ref(obj: Any) -> bool:
    return isinstance(obj, _Ref) or (isinstance(obj, list) and any(_has_tensor_ref(v) for v in obj))


def _has_sym(obj: Any) -> bool:
    return isinstance(obj, _Sym) or (isinstance(obj, list) and any(_has_sym(v) for v in obj))


# How many sizes a lean symbolic call keeps its symbol arrays and SymInt outputs for
# (NativePlan.lean_symbolic_call); the sizes past it are computed per call.
_SIZE_CACHE = 256


def _slow_symbolic(call: Callable[..., List[Any]], args: List[Any], lead: int, later: List[int],
                   named: List[Tuple[int, str]]) -> List[Any]:
    """A symbolic plan's call with the graph's integer inputs in `args`, the general way
    (backend._without_scalar_inputs's): the lean call's fallback for anything unusual."""
    symbols = {symbol: int(args[i]) for i, symbol in named}
    tensors = args[lead:]
    for j in later:
        del tensors[j]
    args.clear()
    return call(tensors, symbols) if symbols else call(tensors)


def _int64s(values: List[int]) -> "ctypes.Array":
    return (ctypes.c_int64 * max(1, len(values)))(*values)


# ---------------------------------------------------------------------------------------------
# Plans
# ---------------------------------------------------------------------------------------------


class NativePlan:
    """A plan run by the native runtime: same interface as runtime.LoadedPlan (boxed call)."""

    _boxed_call = True

    def __init__(self, interpreted: LoadedPlan, plan: "pb.Plan", runtime_path: str, descriptor: bytes):
        self.interpreted = interpreted  # keeps the kernel libraries loaded; its metadata is ours
        self._interpreted_inputs = False  # set when a call brings inputs that are not tensors
        self.name = interpreted.name
        self.num_inputs = interpreted.num_inputs
        self.input_layouts = interpreted.input_layouts
        self.outputs = interpreted.outputs
        self.num_native = interpreted.num_native
        self.num_fused_kernels = interpreted.num_fused_kernels
        self.num_extern = interpreted.num_extern
        for i in range(plan.num_inputs):
            if plan.values[i].dtype == pb.DTYPE_UNSPECIFIED:
                raise NativeUnavailable(f"plan input {i} is not a tensor")
        if any(isinstance(o, list) and _has_tensor_ref(o) for o in self.outputs):
            raise NativeUnavailable("a plan output nests tensor references in a list")
        lib = _open_runtime(runtime_path)
        self._lib = lib
        names = list(interpreted.libraries)
        name_array = (ctypes.c_char_p * max(1, len(names)))(*[n.encode() for n in names])
        handle_array = (ctypes.c_void_p * max(1, len(names)))(
            *[interpreted.libraries[n]._handle for n in names]
        )
        handle = lib.tccd_plan_load(descriptor, len(descriptor), len(names), name_array, handle_array)
        if not handle:
            raise NativeUnavailable(f"plan descriptor: {lib.tccd_plan_last_error().decode('utf-8', 'replace')}")
        self._handle = handle
        self._free = lib.tccd_plan_free
        # A symbolic plan: the runtime binds the symbols from the inputs' sizes itself; SymInt
        # arguments name the descriptor's expressions by index (text -> index here).
        self.symbolic = interpreted.symbolic
        self._num_symbols = lib.tccd_plan_num_symbols(handle)
        exprs = {
            lib.tccd_plan_expr_text(handle, k).decode("utf-8"): k for k in range(lib.tccd_plan_num_exprs(handle))
        }
        self._python_runs: Dict[int, Tuple[List[int], Any, List[int]]] = {}
        # Why each Python step is one: "target: reason" -> steps per call (last_compile_stats).
        self.python_step_reasons: Dict[str, int] = {}
        # TCCD_PLAN_PROFILE's report by op: extern step index -> "target [how it runs]".
        self._extern_ops: Dict[int, str] = {}
        self._num_steps = len(plan.steps)
        # Python steps with SymInt arguments, and SymInt outputs, read the symbols' values in
        # Python: computed per call (from the inputs' sizes) only when one exists.
        self._python_symbols = any(_has_sym(o) for o in self.outputs)
        # Where a call reads each symbol's value: the first input dim that is the bare symbol
        # (interpreted.bindings lists every such dim: the bench's block, 30 for 2 symbols).
        firsts: Dict[int, Tuple[int, int, int]] = {}
        for i, part, d, index in interpreted.bindings:
            firsts.setdefault(index, (i, part, d))
        self._bindings = [(f"s{index}", i, part, d) for index, (i, part, d) in sorted(firsts.items())]
        # Values only native kernels read (deterministic factories among them need no copy).
        read_only = _read_only_by_kernels(plan)
        self.shared_constants = 0
        self.cached_sized_aranges = 0  # share_saved_sized_aranges
        # Constant factories cloned per call although only kernels and plan outputs read them
        # and their views (step index -> (the value and its views' ids, constant index)): a
        # forward's saved position ids, which share_saved_constants may hand out shared once the
        # caller says which outputs are saved.
        self._cloned_constants: Dict[int, Tuple[Set[int], int]] = {}
        # A symbolic plan's aranges (sized kernels without inputs: their output is a function of
        # the call's sizes) that only kernels, views and plan outputs read (step index -> the
        # value and its views' ids): the forward's position ids, which
        # share_saved_sized_aranges may keep per size once the caller says which outputs are saved.
        self._sized_aranges: Dict[int, Set[int]] = {}
        for index, step in enumerate(plan.steps):
            if (self.symbolic and step.WhichOneof("kind") == "native" and not step.native.inputs
                    and len(step.outputs) == 1 and step.outputs[0] >= 0
                    and [list(k.ops) for k in step.native.kernels] == [["aten::arange.default"]]):
                closure = _kernel_or_output_closure(plan, step.outputs[0])
                if closure is not None:
                    self._sized_aranges[index] = closure
        # Extern steps that return new tensors and keep no reference to their inputs (C shims
        # other than copy_): their inputs may live in the per-call arena (arena_values).
        fresh_externs: Set[int] = set()
        fast_views: Set[int] = set()  # steps bound with tccd_plan_bind_view
        for index, step in enumerate(plan.steps):
            if step.WhichOneof("kind") != "extern_call":
                continue
            binding = bind_extern(step, plan, exprs)
            self._extern_ops[index] = step.extern_call.target
            if binding is not None and binding[0] == "dispatcher":
                if self._bind_dispatcher(index, binding[1]):
                    base = decode_value(step.extern_call.args[0]) if step.extern_call.args else None
                    if (step.extern_call.target in _VIEW_OPS and isinstance(base, _Ref)
                            and lib.tccd_plan_bind_view(handle, index, base.id) == 0):
                        self._extern_ops[index] += " [view]"
                        fast_views.add(index)
                    elif _returns_fresh(step.extern_call.target):
                        fresh_externs.add(index)
                    continue
            elif binding is not None and binding[0] == "constant":
                (capsule,) = torch._C._aoti.unsafe_alloc_void_ptrs_from_tensors([binding[1]])
                constant = ctypes.c_int64()
                if lib.tccd_plan_add_constant(handle, _capsule_pointer(capsule, None), ctypes.byref(constant)) != 0:
                    raise NativeUnavailable(lib.tccd_plan_last_error().decode("utf-8", "replace"))
                # Read only by kernels, which never write their inputs: the load-time tensor itself
                # (an alias, no copy kernel per call). Otherwise a fresh clone per call.
                shared = step.outputs[0] in read_only
                op, args = (b"aten::alias.default", [_ARG_CONSTANT]) if shared else \
                    (b"aten::clone.default", [_ARG_CONSTANT, _ARG_NONE])
                if lib.tccd_plan_bind_extern(
                    handle, index, op, len(args), _int64s(args),
                    _int64s([constant.value, 0][: len(args)]), 1, _int64s([_RET_TENSOR]), 0, _int64s([]),
                ) == 0:
                    self.shared_constants += shared
                    self._extern_ops[index] += " [shared constant]" if shared else ""
                    closure = None if shared else _kernel_or_output_closure(plan, step.outputs[0])
                    if closure is not None:
                        self._cloned_constants[index] = (closure, constant.value)
                    continue
            elif binding is not None and binding[0] == "typed":
                shim, ids, words = binding[1]
                if lib.tccd_plan_bind_typed_shim(handle, index, shim, _int64s(ids), len(words), _int64s(words)) == 0:
                    self._extern_ops[index] += " [C shim]"
                    if shim != _SHIM_COPY:
                        fresh_externs.add(index)
                    continue
                # This torch has no such shim (or it refused the step): the dispatcher, as before.
                completed = complete_arguments(step, exprs)
                if completed is not None and self._bind_dispatcher(index, completed):
                    continue
            elif binding is not None and binding[0] == "arange":
                if lib.tccd_plan_bind_arange(handle, index, _int64s(binding[1])) == 0:
                    continue
            elif binding is not None:
                shim, ids, beta, alpha = binding[1]
                if lib.tccd_plan_bind_out_shim(handle, index, shim, _int64s(ids), beta, alpha) == 0:
                    self._extern_ops[index] += " [C shim]"
                    fresh_externs.add(index)
                    continue
                # No such shim in this torch: mm/bmm still have the dispatcher.
                completed = complete_arguments(step, exprs)
                if completed is not None and self._bind_dispatcher(index, completed):
                    continue
            self._extern_ops[index] += " [Python]"
            reason = f"{step.extern_call.target}: {self._python_reason(step, exprs)}"
            self.python_step_reasons[reason] = self.python_step_reasons.get(reason, 0) + 1
            refs = _refs_of(step)
            if lib.tccd_plan_bind_python_extern(handle, index, len(refs), _int64s(refs), ) != 0:
                raise NativeUnavailable(lib.tccd_plan_last_error().decode("utf-8", "replace"))
            self._python_runs[index] = (refs, _extern_step(step, index), list(step.outputs))
            if self.symbolic:
                values = [decode_value(v) for v in step.extern_call.args]
                values += [decode_value(kv.value) for kv in step.extern_call.kwargs]
                self._python_symbols |= any(_has_sym(v) for v in values)
        self.python_steps = len(self._python_runs)
        if self._python_runs:
            log.info(
                "tccd: %s runs natively; %d extern steps through the Python callback: %s", self.name,
                len(self._python_runs), "; ".join(f"{n}x {r}" for r, n in sorted(self.python_step_reasons.items())),
            )
        # TCCD_PLAN_ARENA=1: the values the runtime allocates that die within a call, and the
        # segments' workspaces, come from one buffer per call (tccd_plan_enable_arena).
        self.arena_bytes = 0
        if os.environ.get("TCCD_PLAN_ARENA", "0") == "1" and hasattr(lib, "tccd_plan_enable_arena"):
            lib.tccd_plan_enable_arena.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64)]
            lib.tccd_plan_enable_arena.restype = ctypes.c_int64
            ids = arena_values(plan, fresh_externs)
            self.arena_bytes = lib.tccd_plan_enable_arena(handle, len(ids), _int64s(ids))
            if self.arena_bytes < 0:
                raise NativeUnavailable(lib.tccd_plan_last_error().decode("utf-8", "replace"))
        # Symbolic segments (TCCD_SYMBOLIC_SEGMENTS, on by default): the values that live only
        # between a symbolic plan's sized kernels, gemms and views stay raw pointers into one
        # workspace per call: no tensor, allocation, release or view call each.
        # TCCD_SYMBOLIC_ONE_WORKSPACE (on by default): all segments in one workspace per call
        # (one allocation and release per call, not one per segment).
        self.segment_values = 0
        if (self.symbolic and os.environ.get("TCCD_SYMBOLIC_SEGMENTS", "1") != "0"
                and hasattr(lib, "tccd_plan_enable_symbolic_segments")):
            enable = lib.tccd_plan_enable_symbolic_segments
            if (os.environ.get("TCCD_SYMBOLIC_ONE_WORKSPACE", "1") != "0"
                    and hasattr(lib, "tccd_plan_enable_symbolic_segments_one_workspace")):
                enable = lib.tccd_plan_enable_symbolic_segments_one_workspace
            enable.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64)]
            enable.restype = ctypes.c_int64
            ids = symbolic_segment_values(plan, fast_views)
            self.segment_values = enable(handle, len(ids), _int64s(ids))
            if self.segment_values < 0:
                raise NativeUnavailable(lib.tccd_plan_last_error().decode("utf-8", "replace"))
        self._error = threading.local()
        # The callbacks must outlive every run: kept on self.
        self._python_step_cb = _PythonStep(self._python_step)
        self._make_current_cb = _MakeCurrent(_make_current)
        lib.tccd_plan_set_callbacks(handle, self._python_step_cb, self._make_current_cb)
        self._num_ref_outputs = lib.tccd_plan_num_ref_outputs(handle)
        self._InArray = ctypes.c_void_p * max(1, self.num_inputs)
        self._OutArray = ctypes.c_void_p * max(1, self._num_ref_outputs)
        self._run = lib.tccd_plan_run
        self._output_is_ref = [isinstance(o, _Ref) for o in self.outputs]
        self._all_outputs_ref = all(self._output_is_ref)
        # The outputs list per call: a template holding the constant outputs (None, ints; a
        # backward plan returns None for every input without a gradient: 157 of ResNet-50's
        # 315), the ref outputs placed by position,
        # only outputs with symbols (or lists, fresh per call) computed per call.
        self._ref_positions = [i for i, is_ref in enumerate(self._output_is_ref) if is_ref]
        self._computed_positions = [
            i for i, o in enumerate(self.outputs) if not self._output_is_ref[i] and (isinstance(o, list) or _has_sym(o))
        ]
        computed = set(self._computed_positions)
        self._output_template = [
            None if is_ref or i in computed else o
            for i, (o, is_ref) in enumerate(zip(self.outputs, self._output_is_ref))
        ]
        # A symbolic forward's usual outputs: its tensors, then the SymInts it saves for the
        # backward (plain size expressions): the list is the tensors extended by those values,
        # each computed by its compiled expression (no template, no per-output dispatch).
        self._sym_tail = None
        n_ref = len(self._ref_positions)
        if (self._computed_positions and self._ref_positions == list(range(n_ref))
                and self._computed_positions == list(range(n_ref, len(self.outputs)))
                and all(isinstance(self.outputs[i], _Sym) for i in self._computed_positions)):
            self._sym_tail = [self.outputs[i].fn for i in self._computed_positions]
        # The symbol values a call passes (SymInt graph inputs): their descriptor indices by name
        # (parsed once) and the array type (made once; an array per call, for threads).
        self._GivenArray = ctypes.c_int64 * max(1, self._num_symbols)
        self._given_index: Dict[str, int] = {}
        self._last_given: Optional[Tuple[Tuple[Any, ...], "ctypes.Array"]] = None
        # The SymInt outputs' values for the last symbol values (the same while the sizes are).
        self._last_tail: Optional[Tuple[Tuple[Any, ...], List[int]]] = None
        self._wrapper_ns = 0  # TCCD_PLAN_PROFILE: time in __call__ outside the native run
        self._wrapper_runs = 0
        if _profiling() and hasattr(lib, "tccd_plan_profile"):
            _profiled.append(weakref.ref(self))

    def _given_symbols(self, symbols: Dict[str, int]) -> "ctypes.Array":
        """The call's symbol array: `symbols` (by name) written in, the others unbound. A symbol
        outside the descriptor's table is ignored (no kernel or extern step reads it). The last
        one is reused while the values repeat (a training loop at one size; never written
        after it is made, so threads may share it)."""
        key = tuple(symbols.items())
        last = self._last_given
        if last is not None and last[0] == key:
            return last[1]
        values = [_NO_SYMBOL] * self._GivenArray._length_
        index_of = self._given_index
        for name, value in symbols.items():
            index = index_of.get(name)
            if index is None:
                index = int(name[1:])
                index = index_of[name] = index if 0 <= index < self._num_symbols else -1
            if index >= 0:
                values[index] = int(value)
        given = self._GivenArray(*values)
        self._last_given = (key, given)
        return given

    def _python_reason(self, step: "pb.Step", exprs: Dict[str, int]) -> str:
        """Why an extern step runs through the Python callback (at load, for the stats): the
        stable ABI cannot carry one of its arguments or returns, or the runtime refused it."""
        why: List[str] = []
        if complete_arguments(step, exprs, why) is not None:
            error = self._lib.tccd_plan_last_error().decode("utf-8", "replace")
            why.append(f"the runtime refused its binding ({error})")
        return why[0] if why else "unknown"

    def _bind_dispatcher(self, index: int, completed: Tuple[List[int], List[int], List[int], List[int]]) -> bool:
        kinds, payloads, returns, pool = completed
        return self._lib.tccd_plan_bind_extern(
            self._handle, index, None, len(kinds), _int64s(kinds), _int64s(payloads),
            len(returns), _int64s(returns), len(pool), _int64s(pool),
        ) == 0

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle:
            self._free(handle)
            self._handle = None

    def _python_step(self, index, n_refs, refs, n_outs, outs) -> int:
        """An extern step the stable ABI cannot carry, called from inside tccd_plan_run."""
        try:
            ids, run, out_ids = self._python_runs[index]
            tensors = torch._C._aoti.alloc_tensors_by_stealing_from_void_ptrs(
                [_capsule_new(refs[i], None, None) for i in range(n_refs)]
            )
            env: Dict[int, Any] = dict(zip(ids, tensors))
            env[-1] = getattr(self._error, "symbols", None)
            run(env)
            for o in range(n_outs):
                value = env.get(out_ids[o]) if out_ids[o] >= 0 else None
                if isinstance(value, torch.Tensor):
                    (capsule,) = torch._C._aoti.unsafe_alloc_void_ptrs_from_tensors([value])
                    outs[o] = _capsule_pointer(capsule, None)
                else:
                    outs[o] = None
            return 0
        except BaseException as e:  # reported by __call__ after the native call returns
            self._error.exc = e
            return 1

    def _foreign_exception(self, e: Exception) -> None:
        """An op failed in Python code the dispatcher called (a Python kernel) and left its
        exception set when the foreign call returned: ctypes raises it (PyDLL), or CPython
        reports a SystemError caused by the op's own exception (CDLL); the op's is the one to
        report. The runtime has failed the call and freed every handle."""
        if self._error.exc is None:
            self._error.exc = e.__cause__ if isinstance(e, SystemError) and e.__cause__ else e

    def _raise_failure(self) -> None:
        message = self._lib.tccd_plan_last_error().decode("utf-8", "replace")
        exc = self._error.exc
        self._error.exc = None
        raise RuntimeError(f"{message}: {exc}" if exc else message) from exc

    def share_saved_constants(self, saved: range) -> int:
        """Hands out the load-time tensor itself (an alias, no copy per call) for each constant
        factory step (constant_factory) whose value, besides kernels, only outputs at positions
        in `saved` return, itself or as a view (GPT-2 saves unsqueeze(arange)): the forward's
        saved tensors, which only the backward reads and no
        plan writes (backward plans never write their inputs: DyingInputsIntoOutputs takes
        values the plan allocated). GPT-2's and the dynamic-shapes bench's position ids, an
        arange saved for the position embedding's gradient, were a clone per forward call (36-44
        us of host time per call on the H200, dyn13's profile). Returns how many steps it
        rebound. The recipe's runtime calls it (aot_runtime.build), which knows the split of the
        outputs; TCCD_SHARED_SAVED_CONSTANTS=0 keeps the clones."""
        rebound = 0
        for index, (closure, constant) in sorted(self._cloned_constants.items()):
            positions = [i for i, o in enumerate(self.outputs) if isinstance(o, _Ref) and o.id in closure]
            if not positions or not all(i in saved for i in positions):
                continue
            if self._lib.tccd_plan_bind_extern(
                self._handle, index, b"aten::alias.default", 1, _int64s([_ARG_CONSTANT]), _int64s([constant]),
                1, _int64s([_RET_TENSOR]), 0, _int64s([]),
            ) != 0:
                continue  # deliberately ignored: the step keeps its clone binding
            del self._cloned_constants[index]
            self.shared_constants += 1
            self._extern_ops[index] += " [shared constant, saved]"
            rebound += 1
        return rebound

    def share_saved_sized_aranges(self, saved: range) -> int:
        """The symbolic counterpart of share_saved_constants: each sized arange kernel step
        (a kernel without inputs, so its output depends on the call's sizes only) whose value,
        besides kernels and views, only outputs at positions in `saved` return, keeps its output
        per size in the runtime (tccd_plan_cache_sized_output: up to 8 sizes, by sizes, device
        and stream) and hands the same tensor to every later call at that size: no launch and no
        allocation (the dynamic bench's position ids: a kernel launch and an allocation per
        forward call). The backward only reads saved tensors (backward plans never write their
        inputs). Returns how many steps it turned on; the recipe's runtime calls it
        (aot_runtime.build); TCCD_SYMBOLIC_SAVED_ARANGES=0 keeps the launches."""
        fn = getattr(self._lib, "tccd_plan_cache_sized_output", None)
        if fn is None:
            return 0
        fn.argtypes, fn.restype = [ctypes.c_void_p, ctypes.c_int64], ctypes.c_int
        cached = 0
        for index, closure in sorted(self._sized_aranges.items()):
            positions = [i for i, o in enumerate(self.outputs) if isinstance(o, _Ref) and o.id in closure]
            if not positions or not all(i in saved for i in positions):
                continue
            if fn(self._handle, index) != 0:
                continue  # deliberately ignored: the step keeps its launch
            cached += 1
        self.cached_sized_aranges = cached
        return cached

    def sized_cache_entries(self) -> List[int]:
        """Per arange step share_saved_sized_aranges turned on, how many sizes the runtime keeps
        (tests)."""
        fn = self._lib.tccd_plan_sized_cache_entries
        fn.argtypes, fn.restype = [ctypes.c_void_p, ctypes.c_int64], ctypes.c_int64
        return [n for n in (fn(self._handle, i) for i in sorted(self._sized_aranges)) if n >= 0]

    def lean_call(self) -> Optional[Callable[[List[Any]], List[Any]]]:
        """TCCD_LEAN_ENTRY: the boxed call of _call for this plan's common case, with what _call
        looks up per call bound once: one foreign call (tccd_plan_run_py), the capsules in and
        out, no symbols, no profile timers. None where that case does not hold (no PyDLL entry,
        symbols read in Python, outputs computed per call, TCCD_PLAN_PROFILE): call the plan.
        Anything unusual at call time (another input count, inputs the C ABI cannot carry)
        goes to _call, which handles it as before. Holds the plan; the plan does not hold it."""
        run_py = self._lib.run_py
        if run_py is None or self._python_symbols or self._computed_positions or _profiling():
            return None
        handle, num_inputs, error, slow = self._handle, self.num_inputs, self._error, self._call
        to_capsules = torch._C._aoti.unsafe_alloc_void_ptrs_from_tensors
        steal = torch._C._aoti.alloc_tensors_by_stealing_from_void_ptrs
        all_ref, template, positions = self._all_outputs_ref, self._output_template, self._ref_positions

        def call(args: List[Any]) -> List[Any]:
            if len(args) != num_inputs or self._interpreted_inputs:
                return slow(args)
            try:
                capsules = to_capsules(args)
            except TypeError:
                return slow(args)  # falls back to the interpreter, logged there
            args.clear()  # boxed convention: the plan owns the inputs now
            error.exc = None
            error.symbols = None
            out: List[Any] = []
            try:
                rc = run_py(handle, capsules, out, 0, None)
            except Exception as e:
                self._foreign_exception(e)
                rc = -1
            if rc != 0:
                self._raise_failure()
            tensors = steal(out)
            if all_ref:
                return tensors
            result = template.copy()
            for position, tensor in zip(positions, tensors):
                result[position] = tensor
            return result

        return call

    def lean_symbolic_call(self, num_args: int, lead: int, later: List[int],
                           named: List[Tuple[int, str]]) -> Optional[Callable[[List[Any]], List[Any]]]:
        """TCCD_LEAN_SYMBOLIC_ENTRY: the boxed call of a symbolic plan with the graph's integer
        inputs still in the list (what backend._without_scalar_inputs wraps), as one function:
        the integer inputs dropped (`lead` leading ones sliced off, then positions `later` of
        the rest deleted, last first), the named ones' values (`named`: (position, symbol)) in
        the call's symbol array, one foreign call, and the SymInt outputs from the symbols'
        values; the symbol array and those outputs cached per size (a dict of the sizes seen,
        not only the last: an interleaved or bucketed loop alternates sizes). Per call it does
        what _without_scalar_inputs and _call do for the symbolic case, without their frames,
        per-call dicts and profile timer. None where that case does not hold (no PyDLL entry,
        Python steps that read the symbols, outputs computed per call other than a SymInt
        tail, TCCD_PLAN_PROFILE). Anything unusual at call time goes to _call."""
        run_py = self._lib.run_py
        if (run_py is None or self._python_runs or _profiling()
                or (self._computed_positions and self._sym_tail is None)):
            return None
        handle, error, slow = self._handle, self._error, self._call
        num_inputs, num_symbols = self.num_inputs, self._num_symbols
        to_capsules = torch._C._aoti.unsafe_alloc_void_ptrs_from_tensors
        steal = torch._C._aoti.alloc_tensors_by_stealing_from_void_ptrs
        all_ref, template, positions = self._all_outputs_ref, self._output_template, self._ref_positions
        sym_tail = self._sym_tail
        # The named symbols' slots in the descriptor's table (-1: no step reads it).
        slots = []
        for _, name in named:
            index = int(name[1:])
            slots.append(index if 0 <= index < num_symbols else -1)
        named_positions = [position for position, _ in named]
        names = [name for _, name in named]
        # The symbols the tail reads that no integer input carries: read from the input sizes.
        bindings = [(name, i, part, d) for name, i, part, d in self._bindings if name not in names]
        GivenArray, no_symbol = self._GivenArray, _NO_SYMBOL
        givens: Dict[Tuple[int, ...], Any] = {}
        tails: Dict[Tuple[int, ...], List[int]] = {}

        def given_for(values: Tuple[int, ...]) -> Any:
            array = [no_symbol] * GivenArray._length_
            for slot, value in zip(slots, values):
                if slot >= 0:
                    array[slot] = value
            given = GivenArray(*array)
            if len(givens) < _SIZE_CACHE:
                givens[values] = given
            return given

        def tail_for(key: Tuple[int, ...]) -> List[int]:
            bound = dict(zip(names, key))
            bound.update(zip((b[0] for b in bindings), key[len(names):]))
            tail = [fn(bound) for fn in sym_tail]
            if len(tails) < _SIZE_CACHE:
                tails[key] = tail
            return tail

        def call(args: List[Any]) -> List[Any]:
            if len(args) != num_args or self._interpreted_inputs:
                return _slow_symbolic(slow, args, lead, later, named)
            values = tuple([int(args[i]) for i in named_positions])
            tensors = args[lead:]
            for j in later:
                del tensors[j]
            if len(tensors) != num_inputs:
                return _slow_symbolic(slow, args, lead, later, named)
            if sym_tail is not None:
                key = values + tuple([tensors[i].size(d) if part == 0 else tensors[i].stride(d)
                                      for _, i, part, d in bindings])
            try:
                capsules = to_capsules(tensors)
            except TypeError:
                return _slow_symbolic(slow, args, lead, later, named)
            args.clear()  # boxed convention: the plan owns the inputs now
            tensors.clear()
            error.exc = None
            error.symbols = None
            given = givens.get(values) if values else None
            if values and given is None:
                given = given_for(values)
            out: List[Any] = []
            try:
                rc = run_py(handle, capsules, out, num_symbols if given is not None else 0, given)
            except Exception as e:
                self._foreign_exception(e)
                rc = -1
            if rc != 0:
                self._raise_failure()
            result = steal(out)
            if all_ref:
                return result
            if sym_tail is not None:
                tail = tails.get(key)
                result.extend(tail if tail is not None else tail_for(key))
                return result
            full = template.copy()
            for position, tensor in zip(positions, result):
                full[position] = tensor
            return full

        return call

    def __call__(self, args: List[Any], symbols: Optional[Dict[str, int]] = None) -> List[Any]:
        """`symbols`: values of symbols no input size carries (SymInt graph inputs), by name."""
        start = time.perf_counter_ns()
        try:
            return self._call(args, symbols)
        finally:
            self._wrapper_runs += 1
            if self._wrapper_runs > 1:  # as the native profile: the first call is set-up
                self._wrapper_ns += time.perf_counter_ns() - start

    def _call(self, args: List[Any], symbols: Optional[Dict[str, int]] = None) -> List[Any]:
        if len(args) != self.num_inputs:
            raise RuntimeError(f"tccd plan {self.name} takes {self.num_inputs} inputs, got {len(args)}")
        if self._interpreted_inputs:
            return self.interpreted(args, symbols)
        try:
            capsules = torch._C._aoti.unsafe_alloc_void_ptrs_from_tensors(args)
        except TypeError:
            # Inputs the C ABI cannot carry (AOTAutograd's effect tokens, e.g. around linalg
            # ops, are not always tensors): this plan runs in the interpreter from now on.
            kinds = sorted({type(a).__name__ for a in args if not isinstance(a, torch.Tensor)})
            if not kinds:
                raise
            log_fallback(f"plan {self.name} has non-tensor inputs ({', '.join(kinds)})")
            self._interpreted_inputs = True
            return self.interpreted(args, symbols)
        bound = None
        if self._python_symbols:
            bound = dict(symbols) if symbols else {}
            for name, i, part, d in self._bindings:
                if name not in bound:
                    bound[name] = args[i].shape[d] if part == 0 else args[i].stride(d)
        args.clear()  # boxed convention: the plan owns the inputs now
        self._error.exc = None
        self._error.symbols = bound
        given = None
        if symbols:
            given = self._given_symbols(symbols)
        run_py = self._lib.run_py
        if run_py is not None:
            out_capsules: List[Any] = []
        else:
            inputs = self._InArray(*[_capsule_pointer(c, None) for c in capsules])
            outputs = self._OutArray()
        timed = self._wrapper_runs > 0  # only under TCCD_PLAN_PROFILE (see __call__)
        try:
            native_start = time.perf_counter_ns() if timed else 0
            if run_py is not None:
                rc = run_py(self._handle, capsules, out_capsules, self._num_symbols if given else 0, given)
            elif given:
                rc = self._lib.tccd_plan_run_symbolic(
                    self._handle, inputs, self.num_inputs, outputs, self._num_ref_outputs, self._num_symbols, given
                )
            else:
                rc = self._run(self._handle, inputs, self.num_inputs, outputs, self._num_ref_outputs)
            if timed:
                self._wrapper_ns -= time.perf_counter_ns() - native_start
        except Exception as e:
            self._foreign_exception(e)
            rc = -1
        if rc != 0:
            self._raise_failure()
        if run_py is None:
            out_capsules = [_capsule_new(outputs[i], None, None) for i in range(self._num_ref_outputs)]
        tensors = torch._C._aoti.alloc_tensors_by_stealing_from_void_ptrs(out_capsules)
        if self._all_outputs_ref:
            return tensors
        if self._sym_tail is not None:
            key = tuple(bound.items())
            last = self._last_tail
            if last is not None and last[0] == key:
                tensors.extend(last[1])
                return tensors
            try:
                tail = [fn(bound) for fn in self._sym_tail]
                self._last_tail = (key, tail)
                tensors.extend(tail)
                return tensors
            except NameError:  # an unbound symbol: the general path below says which
                pass
        result = self._output_template.copy()
        for position, tensor in zip(self._ref_positions, tensors):
            result[position] = tensor
        if self._computed_positions:
            env = {-1: bound}
            for position in self._computed_positions:
                result[position] = _materialize(self.outputs[position], env)
        return result


_PROFILE_CLASSES = ("kernels", "segments", "views", "extern (dispatcher)", "extern (out shim)",
                    "extern (Python)", "releases", "entry/exit")
_profiled: List["weakref.ref"] = []


def _profiling() -> bool:
    return os.environ.get("TCCD_PLAN_PROFILE", "") not in ("", "0")


def profile_report() -> str:
    """TCCD_PLAN_PROFILE=1: where each native plan's host time went (microseconds per call, and
    steps per call in parentheses), over its calls so far but the first (one-time set-up), and
    the first call apart (milliseconds: where a cold first step's `plan_calls` go); printed at
    exit too."""
    lines = []
    for ref in _profiled:
        plan = ref()
        if plan is None or not plan._handle:
            continue
        first = _first_call_profile(plan)
        if first:
            lines.append(f"tccd plan first call {plan.name}: {first}")
        n = len(_PROFILE_CLASSES)
        calls, ns, steps = ctypes.c_int64(), (ctypes.c_int64 * n)(), (ctypes.c_int64 * n)()
        if plan._lib.tccd_plan_profile(plan._handle, ctypes.byref(calls), ns, steps, n) <= 0 or calls.value == 0:
            continue
        c = calls.value
        parts = [f"{name} {ns[i] / c / 1e3:.1f} ({steps[i] / c:.0f})" for i, name in enumerate(_PROFILE_CLASSES)
                 if ns[i] or steps[i]]
        lines.append(f"tccd plan profile {plan.name}: {c} calls, us per call: native {sum(ns) / c / 1e3:.1f} = "
                     + ", ".join(parts) + f"; Python wrapper {plan._wrapper_ns / c / 1e3:.1f}")
        counts = _profile_counts(plan, c)
        if counts:
            lines.append(f"  per call: {counts}")
        native = _profile_native(plan, c)
        if native:
            lines.append(f"  native steps by kind, us per call (steps): {native}")
        by_op = _extern_profile(plan, c)
        if by_op:
            lines.append(f"  extern steps by op, us per call (steps): {by_op}")
    lines.extend(sized_gemm_report())
    return "\n".join(lines)


def sized_gemm_report() -> List[str]:
    """One line per kernel library with gemms of run-time sizes: its sized gemm cache's counters
    since it was loaded (all its calls, the first ones too), and where a call's host time in the
    library goes: cublasLtMatmul on a hit, and on a miss the set-up (descriptor, layouts,
    heuristic) and the matmul (a new algorithm's first launch loads its kernel)."""
    from .runtime import sized_gemm_libraries, sized_gemm_stats

    lines = []
    for artifact, library in sorted(sized_gemm_libraries.items()):
        st = sized_gemm_stats(library)
        calls, hits, misses = st["calls"], st["hits"], st["misses"]
        if not calls:
            continue
        hit_ns = st["matmul_ns"] - st["miss_matmul_ns"]
        lines.append(
            f"tccd sized gemm cache {artifact}: {calls} calls, {hits} hits, {misses} misses "
            f"({st['key_churn']} with the same sizes under another alignment or workspace), "
            f"{st['evictions']} evictions, {st['heuristics']} heuristic queries; cublasLtMatmul "
            f"{hit_ns / max(hits, 1) / 1e3:.1f} us per hit; per miss: set-up "
            f"{st['setup_ns'] / max(misses, 1) / 1e3:.1f} us, cublasLtMatmul "
            f"{st['miss_matmul_ns'] / max(misses, 1) / 1e3:.1f} us; all calls {calls}: "
            f"{(st['matmul_ns'] + st['setup_ns']) / calls / 1e3:.1f} us per call")
    return lines


def _first_call_profile(plan: "NativePlan", top: int = 8) -> str:
    """The plan's first call in ms: its native steps (kernels, segments, views: the CUDA module
    loads land in the first launch of a module not loaded at plan load) and its extern steps by
    op (cuDNN/cuBLAS set-up lands there), the slowest steps named. "" before the first call."""
    fn = getattr(plan._lib, "tccd_plan_profile_first_steps", None)  # an older runtime: none
    if fn is None or not plan._num_steps:
        return ""
    fn.argtypes, fn.restype = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_int64], ctypes.c_int64
    ns = (ctypes.c_int64 * plan._num_steps)()
    if fn(plan._handle, ns, plan._num_steps) <= 0 or not any(ns):
        return ""
    extern: Dict[str, List[int]] = {}
    native = [0, 0]
    for index in range(plan._num_steps):
        op = plan._extern_ops.get(index)
        entry = extern.setdefault(op, [0, 0]) if op is not None else native
        entry[0] += ns[index]
        entry[1] += 1
    ranked = sorted(extern.items(), key=lambda kv: -kv[1][0])[:top]
    slowest = sorted(range(plan._num_steps), key=lambda i: -ns[i])[:3]
    return (f"{sum(ns) / 1e6:.1f} ms: native steps {native[0] / 1e6:.1f} ({native[1]}), extern "
            f"{sum(t for t, _ in extern.values()) / 1e6:.1f}: "
            + ", ".join(f"{op} {t / 1e6:.1f} ({k})" for op, (t, k) in ranked)
            + "; slowest steps " + ", ".join(f"{i} {plan._extern_ops.get(i, 'native')} {ns[i] / 1e6:.1f}"
                                             for i in slowest))


_PROFILE_COUNTS = ("allocations", "layout copies", "output copies", "workspace allocations", "stream lookups",
                   "arena values", "cached sized outputs")


def _profile_counts(plan: "NativePlan", calls: int) -> str:
    """The runtime's per-call counts (tccd_plan_profile_counts: allocations through PyTorch's
    allocator, inputs copied into their declared layout, ...), or "" from an older runtime."""
    if not hasattr(plan._lib, "tccd_plan_profile_counts"):
        return ""
    fn = plan._lib.tccd_plan_profile_counts
    fn.argtypes, fn.restype = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_int64], ctypes.c_int64
    n = len(_PROFILE_COUNTS)
    counts = (ctypes.c_int64 * n)()
    if fn(plan._handle, counts, n) <= 0:
        return ""
    line = ", ".join(f"{name} {counts[i] / calls:.1f}" for i, name in enumerate(_PROFILE_COUNTS))
    return line + (f" (arena {plan.arena_bytes / 1024:.0f} KiB)" if plan.arena_bytes > 0 else "")


_PROFILE_NATIVE_KINDS = ("static CUDA kernels", "sized CUDA kernels", "sized gemms", "segments", "CPU kernels")


def _profile_native(plan: "NativePlan", calls: int) -> str:
    """The native steps by kind (tccd_plan_profile_native), each as its wall time = launch (the
    kernels .so, driver or cuBLASLt) + allocations + the rest (operand metadata, strides,
    output binding), or "" from an older runtime."""
    fn = getattr(plan._lib, "tccd_plan_profile_native", None)
    if fn is None:
        return ""
    fn.argtypes, fn.restype = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_int64], ctypes.c_int64
    n = 4 * len(_PROFILE_NATIVE_KINDS)
    words = (ctypes.c_int64 * n)()
    if fn(plan._handle, words, n) <= 0:
        return ""
    parts = []
    for k, name in enumerate(_PROFILE_NATIVE_KINDS):
        total, launch, alloc, steps = (words[4 * k + i] / calls / 1e3 for i in range(4))
        if steps:
            parts.append(f"{name} {total:.1f} ({steps * 1e3:.0f}) = launch {launch:.1f} + allocations {alloc:.1f}"
                         f" + rest {total - launch - alloc:.1f}")
    return "; ".join(parts)


def _extern_profile(plan: "NativePlan", calls: int, top: int = 12) -> str:
    """The plan's extern steps summed by op (and how they run), most host time first."""
    if not hasattr(plan._lib, "tccd_plan_profile_steps") or not plan._extern_ops:
        return ""
    fn = plan._lib.tccd_plan_profile_steps
    fn.argtypes, fn.restype = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_int64], ctypes.c_int64
    n = max(plan._extern_ops) + 1
    ns = (ctypes.c_int64 * n)()
    if fn(plan._handle, ns, n) <= 0:
        return ""
    total: Dict[str, List[int]] = {}
    for index, op in plan._extern_ops.items():
        entry = total.setdefault(op, [0, 0])
        entry[0] += ns[index]
        entry[1] += 1
    ranked = sorted(total.items(), key=lambda kv: -kv[1][0])
    return ", ".join(f"{op} {t / calls / 1e3:.1f} ({k})" for op, (t, k) in ranked[:top])


def _print_profile() -> None:
    report = profile_report()
    if report:
        print(report, file=sys.stderr, flush=True)


if _profiling():
    atexit.register(_print_profile)
else:
    # Without TCCD_PLAN_PROFILE a plan call is _call itself: the timing wrapper's frame and its
    # clock reads are per-call Python that a small CPU training step pays twice (lean runtime).
    NativePlan.__call__ = NativePlan._call  # type: ignore[method-assign]


def _make_current(device_index: int) -> int:
    """The primary context of the device current on this thread (runtime.py
    _make_context_current): a CUDA runtime call does that lazily."""
    try:
        torch.cuda.current_stream(device_index).query()
        return 0
    except BaseException:
        return 1


def load(interpreted: LoadedPlan, plan: "pb.Plan", runtime_path: Optional[str],
         descriptor_path: Optional[str]) -> Any:
    """The plan as a NativePlan, or `interpreted` (one logged line) if it cannot run natively."""
    if runtime_path is None or descriptor_path is None:
        reason = ("the manifest has no plan runtime or descriptor (an older daemon, or a plan it cannot describe: "
                  "the daemon's log says why, in its line 'no plan descriptor, the client interprets this plan')")
        log_fallback(reason)
        interpreted.python_step_reasons = {f"every step (the plan runs in the Python interpreter): {reason}":
                                           interpreted.python_steps}
        return interpreted
    try:
        with open(descriptor_path, "rb") as f:
            descriptor = f.read()
        return NativePlan(interpreted, plan, runtime_path, descriptor)
    except NativeUnavailable as e:
        reason = str(e)
    except (OSError, RuntimeError, ValueError) as e:
        reason = f"{type(e).__name__}: {e}"
    log_fallback(reason)
    interpreted.python_step_reasons = {f"every step (the plan runs in the Python interpreter): {reason}":
                                       interpreted.python_steps}
    return interpreted
