"""End to end against the real daemon: a fixed, fast subset of the OpInfo sweep
(tests/tools/opinfo_sweep.py) under TCCD_STRICT=1, CPU, float32.

The subset is every op a sweep once found failing (so a regression of any of those fixes fails
here) plus a sample of the op families the daemon lowers. Each op runs its first samples eagerly
and through torch.compile(backend=tccd) and must match within the op's OpInfo tolerance; a graph
that would fall back to eager raises under TCCD_STRICT=1 and fails the test. The full sweep
(~680 ops, both backends) is `python tests/tools/opinfo_sweep.py`.
"""

import importlib.util
from pathlib import Path

import pytest
import torch

_SWEEP = Path(__file__).resolve().parents[1] / "tools" / "opinfo_sweep.py"

# Ops the sweep found failing, by the class of the fix.
FIXED = [
    # effect tokens: with_effects(token, aten._linalg_check_errors, ...)
    "linalg.inv", "linalg.solve", "linalg.cholesky", "linalg.lu_factor", "linalg.ldl_factor",
    "linalg.tensorinv", "linalg.tensorsolve",
    # complex dtypes: extern steps
    "complex", "polar", "view_as_complex", "cfloat", "cdouble", "chalf", "fft.rfft", "fft.fft2",
    "fft.irfft", "fft.ihfft", "stft", "linalg.eig", "linalg.eigvals",
    # unsigned types wider than u8: extern steps
    "hash_tensor",
    # bool arithmetic in generated kernels (isclose and isfinite decompose to mul/add on b8)
    "isclose", "isfinite",
    # a tensor index (lifted constant)
    "__getitem__",
]
# A sample of what the daemon lowers: pointwise, index, reduction-bearing, random, views.
SAMPLE = [
    "add", "mul", "div.floor_rounding", "where", "clamp", "pow", "sigmoid", "nn.functional.gelu",
    "nn.functional.silu", "masked_fill", "cat", "stack", "nn.functional.pad.constant",
    "index_select", "nn.functional.embedding", "gather", "sum", "mean", "amax", "var_mean",
    "softmax", "log_softmax", "nn.functional.layer_norm", "cumsum", "matmul", "addmm",
    "nn.functional.conv2d", "nn.functional.dropout", "permute", "expand", "to",
]


@pytest.fixture(scope="module")
def sweep():
    spec = importlib.util.spec_from_file_location("opinfo_sweep", _SWEEP)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from torch.testing._internal.common_methods_invocations import op_db

    ops = {module._op_key(op): op for op in op_db}
    return module, ops


@pytest.mark.parametrize("name", FIXED + SAMPLE)
def test_opinfo_op_matches_eager_strictly(name, sweep, daemon_env, monkeypatch):
    module, ops = sweep
    monkeypatch.setenv("TCCD_STRICT", "1")
    from tccd import config

    config.reload()
    assert name in ops, f"{name} is not in this torch's op_db"
    record = module._run_one(ops[name], "tccd", 2, torch)
    assert record["status"] == "pass", record
    assert record["samples"] > 0
