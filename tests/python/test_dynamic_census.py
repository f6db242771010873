"""The dynamic-shapes bench's block, as its symbolic graphs compile for CUDA, without a GPU.

deploy/dynamic_shapes_bench.py's block (embedding, layer norms, attention by matmuls, GELU MLP)
captured under dynamic=True on the CPU (bf16) and compiled by the real daemon for an H100
(tests/tools/dynamic_plan_census.py): the symbolic graph rewrites (codegen/symbolic_rewrites.h)
leave no layer norm backward, embedding backward or split extern step; the layer norm halves
are kernels (two row kernels, the column halves in column kernels), the embeddings gather
kernels, their gradients scatter kernels and the q/k/v gradients' cat an index kernel
(symbolic_kernels.h: no embedding, scatter_add, new_zeros or cat extern step), the position
ids an arange kernel, the position embedding's batch sum folded into its scatter and the t
views gone (double transposes, and the t the gemms read: no arange, sum or t extern step), two
sibling clones one kernel (horizontal fusion). The
GPU bench measures what that is worth; this keeps the plans from sliding back.
"""

import os
import shutil
import sys

import pytest
import torch

from tccd import channel
from conftest import TCCD_BINARY, Daemon, short_tempdir

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "deploy"))

import dynamic_plan_census  # noqa: E402
import dynamic_shapes_bench  # noqa: E402


def test_bench_block_compiles_without_norm_embedding_or_split_extern_steps(daemon):
    model = dynamic_shapes_bench.build(32, "cpu", "bfloat16")
    ids = torch.randint(0, 1000, (4, 24), generator=torch.Generator().manual_seed(0))
    graphs = dynamic_plan_census.capture(model, ids)
    compiled = dynamic_plan_census.compile_for_h100(channel.stub_for(daemon.address), graphs)
    by_kind = {kind: dynamic_plan_census.steps(plan) for kind, _, plan in compiled}
    assert set(by_kind) == {"forward", "backward"}, list(by_kind)
    native, extern = by_kind["forward"]
    assert "aten::split.Tensor" not in extern, extern
    assert "aten::embedding.default" not in extern, extern
    assert [op for k in native for op in k.ops].count("aten::embedding.default") == 2, extern
    # The position ids a kernel (symbolic-arange-kernels); the weights' t read by their gemms as
    # the weights (symbolic-gemm-transposes).
    assert "aten::arange.default" not in extern, extern
    assert "aten::t.default" not in extern, extern
    assert [list(k.ops) for k in native].count(["aten::arange.default"]) == 1, [list(k.ops) for k in native]
    # Two of the q/k/v split's clones one kernel, as in the static plan (symbolic-horizontal-fusion).
    assert [list(k.ops) for k in native].count(["aten::clone.default"] * 2) == 1, [list(k.ops) for k in native]
    native, extern = by_kind["backward"]
    # The position embedding's batch sum folded into its scatter (symbolic-embedding-sum-fold);
    # the weights' t(t(W)) read as W (symbolic-double-transposes), the activations' t read by
    # the weight gradients' gemms as the activations (symbolic-gemm-transposes).
    for target in ("aten::native_layer_norm_backward.default", "aten::embedding_dense_backward.default",
                   "aten::scatter_add.default", "aten::new_zeros.default", "aten::cat.default",
                   "aten::sum.dim_IntList", "aten::t.default"):
        assert target not in extern, extern
    ops = [op for k in native for op in k.ops]
    assert ops.count("tccd::embedding_scatter_add.default") == 2, [list(k.ops) for k in native]
    assert ops.count("aten::cat.default") == 1, [list(k.ops) for k in native]
    assert ops.count("aten::native_layer_norm_backward.default") == 4, [list(k.ops) for k in native]


@pytest.fixture
def daemon_without_row_gathers():
    """A daemon with the symbolic row gathers off (TCCD_DISABLE_PASSES=symbolic-row-gathers)."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-census-")
    d = Daemon(TCCD_BINARY, root, env={"TCCD_DISABLE_PASSES": "symbolic-row-gathers"})
    d.start()
    yield d
    status = d.stop()
    shutil.rmtree(root, ignore_errors=True)
    assert status == 0, f"tccd exited with status {status} on SIGTERM"


def _forward_kernels(address, dynamic):
    model = dynamic_shapes_bench.build(32, "cpu", "bfloat16")
    ids = torch.randint(0, 1000, (4, 24), generator=torch.Generator().manual_seed(0))
    graphs = dynamic_plan_census.capture(model, ids, dynamic=dynamic)
    compiled = dynamic_plan_census.compile_for_h100(channel.stub_for(address), graphs)
    (native, extern), = [dynamic_plan_census.steps(plan) for kind, _, plan in compiled if kind == "forward"]
    return [list(k.ops) for k in native], extern


def test_forward_launches_as_many_kernels_as_the_static_plan(daemon):
    # Both embeddings gathered inside the first layer norm's row kernel (symbolic-row-gathers;
    # the position embedding at [B, T, E] from expand(arange), symbolic-embeddings-to-reader-
    # shape): the arange kernel and that row kernel, where the static plan has the position
    # embedding's kernel and a row kernel gathering the token embedding.
    dynamic, extern = _forward_kernels(daemon.address, True)
    static, _ = _forward_kernels(daemon.address, False)
    assert len(dynamic) == len(static) == 15, (dynamic, static)
    first_norm = [ops for ops in dynamic if "aten::native_layer_norm.default" in ops][0]
    assert first_norm == ["aten::embedding.default", "aten::embedding.default", "aten::add.Tensor",
                          "aten::native_layer_norm.default"], dynamic
    assert ["aten::embedding.default"] not in dynamic, dynamic
    assert "aten::embedding.default" not in extern, extern


def test_forward_without_row_gathers_keeps_the_embedding_kernels(daemon_without_row_gathers):
    dynamic, _ = _forward_kernels(daemon_without_row_gathers.address, True)
    assert len(dynamic) == 17, dynamic
    assert dynamic.count(["aten::embedding.default"]) == 2, dynamic
