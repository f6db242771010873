"""The native plan runtime's declared torch ABI (codegen/plan_runtime/runtime/
tccd_plan_torch_abi.h) against the headers of the installed torch wheel: every declared function
exists with the same parameter types, the c10 codes of the descriptor format are torch's, and the
declared version range is the client's. No daemon needed (CI runs this on its torch)."""

import ctypes
import os
import re
from pathlib import Path

import pytest
import torch

from tccd import native_plan

REPO = Path(__file__).resolve().parents[2]
RUNTIME = REPO / "codegen" / "plan_runtime" / "runtime"
INCLUDE = Path(torch.__file__).parent / "include"
HEADERS = [
    INCLUDE / "torch/csrc/inductor/aoti_torch/c/shim.h",
    INCLUDE / "torch/csrc/stable/c/shim.h",
    # AOTInductor's generated fallback-op shims (addmm_out, baddbmm_out: Scalars as doubles).
    INCLUDE / "torch/csrc/inductor/aoti_torch/generated/c_shim_cpu.h",
    INCLUDE / "torch/csrc/inductor/aoti_torch/generated/c_shim_cuda.h",
]
# Our spelling of torch's ABI types (tccd_plan_torch_abi.h's header comment).
_ALIASES = {
    "AtenTensorHandle": "void*", "AOTITorchError": "int32_t", "StableIValue": "uint64_t",
    "StableListHandle": "void*", "StringHandle": "void*",
}


def _declarations():
    text = (RUNTIME / "tccd_plan_torch_abi.h").read_text().replace("\\\n", " ")
    # Parameter lists shared by several lines (TCCD_CONVOLUTION_PARAMS) are macros: expand them.
    for name, params in re.findall(r"#define (TCCD_\w+_PARAMS)\s+(\([^\n]*\))", text):
        text = re.sub(r"\b" + name + r"\b(?!\s+\()", params, text)
    for m in re.finditer(r"X\((\d), (\w+), ([\w ]+\*?), (\w+),\s*\(([^)]*)\)\)", text):
        yield m.group(4), m.group(3), m.group(5), m.group(1) == "1"


def _types(params: str):
    """Parameter types, names dropped, aliases resolved, spacing normalised."""
    out = []
    for p in params.split(","):
        p = " ".join(p.replace("*", " * ").split())
        if not p or p == "void":
            continue
        tokens = p.split()
        if tokens[-1] != "*" and len(tokens) > 1:
            tokens = tokens[:-1]  # the parameter name
        tokens = [_ALIASES.get(t, t) for t in tokens]
        out.append(" ".join(tokens).replace(" *", "*").replace("void* *", "void**").replace("uint64_t* *", "uint64_t**"))
    return [t.replace("* *", "**") for t in out]


def _torch_declaration(name: str):
    for header in HEADERS:
        text = re.sub(r"//[^\n]*", "", header.read_text())
        m = re.search(r"AOTI_TORCH_EXPORT\s+([\w ]+?\s*\*?)\s*" + re.escape(name) + r"\s*\(([^)]*)\)", text)
        if m:
            ret = " ".join(m.group(1).replace("*", " *").split()).replace(" *", "*")
            return _ALIASES.get(ret, ret), m.group(2)
    return None


@pytest.mark.parametrize("name,ret,params,required", list(_declarations()), ids=lambda v: v if isinstance(v, str) and v.startswith(("aoti", "torch")) else "")
def test_every_declaration_matches_the_torch_headers(name, ret, params, required):
    found = _torch_declaration(name)
    if found is None and not required:
        # Optional symbols appeared in later releases (see the header); the runtime checks for
        # them at load and takes another path without them.
        pytest.skip(f"{name} is optional and not in this torch ({torch.__version__})")
    assert found is not None, f"{name} is not declared by the installed torch's headers"
    torch_ret, torch_params = found
    assert torch_ret == ret, f"{name} returns {torch_ret} in torch, {ret} in tccd_plan_torch_abi.h"
    assert _types(torch_params) == _types(params), (name, torch_params, params)


def test_declarations_were_parsed():
    names = {d[0] for d in _declarations()}
    assert {"aoti_torch_empty_strided", "aoti_torch_call_dispatcher", "aoti_torch_get_current_cuda_stream",
            "aoti_torch_cpu_convolution", "aoti_torch_cuda_convolution_backward"} <= names


def test_declared_torch_range_is_the_clients_and_includes_this_torch():
    text = (RUNTIME / "tccd_plan_torch_abi.h").read_text()
    lo = re.search(r'TCCD_PLAN_TORCH_MIN "(\d+)\.(\d+)"', text)
    hi = re.search(r'TCCD_PLAN_TORCH_MAX "(\d+)\.(\d+)"', text)
    assert (int(lo[1]), int(lo[2])) == native_plan.TORCH_MIN
    assert (int(hi[1]), int(hi[2])) == native_plan.TORCH_MAX
    assert native_plan.torch_version_supported(torch.__version__), torch.__version__
    assert not native_plan.torch_version_supported("2.10.0")
    assert not native_plan.torch_version_supported("2.99.1")


def test_descriptor_c10_codes_are_torchs():
    lib = ctypes.CDLL(native_plan._loaded_library("libtorch_cpu.so"))
    text = (RUNTIME / "tccd_plan_format.h").read_text()
    codes = dict((m[0], int(m[1])) for m in re.findall(r"#define TCCD_C10_(\w+) (\d+)", text))
    for name, code in codes.items():
        fn_name = ("aoti_torch_device_type_" + name[len("DEVICE_"):].lower() if name.startswith("DEVICE_")
                   else "aoti_torch_dtype_" + name.lower())
        fn = getattr(lib, fn_name)
        fn.restype = ctypes.c_int32
        assert fn() == code, (name, fn(), code)
    for dtype, code in native_plan.C10_DTYPES.items():
        assert codes[str(dtype).split(".")[1].upper()] == code, dtype


def test_every_cpu_symbol_the_runtime_uses_is_exported_by_this_torch():
    """The ABI range is 2.11..2.15 and CI runs the newest: every CPU symbol, optional ones
    included, resolves in this libtorch_cpu (an optional one missing would silently send its
    steps to the Python callback)."""
    # Optional symbols newer than the oldest supported torch (tccd_plan_torch_abi.h).
    since = {"torch_new_stable_ivalue": (2, 13), "torch_exception_get_what_without_backtrace": (2, 13)}
    version = tuple(int(v) for v in re.match(r"(\d+)\.(\d+)", torch.__version__).groups())
    lib = ctypes.CDLL(native_plan._loaded_library("libtorch_cpu.so"))
    for name, _, _, _ in _declarations():
        if "cuda" in name or version < since.get(name, (0, 0)):
            continue
        assert hasattr(lib, name), name


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the x86 wheels link MKL")
def test_this_torchs_blas_gemms_are_exported_and_pass_the_runtimes_probe():
    """TCCD_CPU_BLAS resolves sgemm_ and dgemm_ in libtorch_cpu (MKL's, exported by the x86
    wheels: 2.11's at /tmp/pre11_t211 too, checked by hand with nm) and probes each before use:
    on this torch both are found and pass, so CPU plans' matmuls run as direct calls."""
    lib = ctypes.CDLL(native_plan._loaded_library("libtorch_cpu.so"))
    assert hasattr(lib, "sgemm_") and hasattr(lib, "dgemm_")
    # The probe itself runs in the runtime (tccd_plan_cpu_blas); test_e2e_cpu_blas.py counts the
    # calls it then makes. Here: the Fortran ABI the runtime assumes, on a 2x2 product.
    one, zero = ctypes.c_float(1), ctypes.c_float(0)
    a = (ctypes.c_float * 4)(1, 2, 3, 4)  # column-major [[1, 3], [2, 4]]
    c = (ctypes.c_float * 4)()
    two = ctypes.c_int64(2)  # an LP64 library reads the low 4 bytes: the same 2
    n = ctypes.c_char(b"N")
    lib.sgemm_(ctypes.byref(n), ctypes.byref(n), ctypes.byref(two), ctypes.byref(two), ctypes.byref(two),
               ctypes.byref(one), a, ctypes.byref(two), a, ctypes.byref(two), ctypes.byref(zero), c,
               ctypes.byref(two))
    assert list(c) == [7, 10, 15, 22]


def test_layout_memory_format_and_device_codes_are_torchs():
    lib = ctypes.CDLL(native_plan._loaded_library("libtorch_cpu.so"))

    def code(fn_name):
        fn = getattr(lib, fn_name)
        fn.restype = ctypes.c_int32
        return fn()

    assert native_plan.C10_LAYOUTS == {torch.strided: code("aoti_torch_layout_strided")}
    assert native_plan.C10_MEMORY_FORMATS == {
        torch.contiguous_format: code("aoti_torch_memory_format_contiguous_format"),
        torch.preserve_format: code("aoti_torch_memory_format_preserve_format"),
        torch.channels_last: code("aoti_torch_memory_format_channels_last"),
        torch.channels_last_3d: code("aoti_torch_memory_format_channels_last_3d"),
    }
    assert native_plan.C10_DEVICE_TYPES == {"cpu": code("aoti_torch_device_type_cpu"),
                                            "cuda": code("aoti_torch_device_type_cuda")}
