"""Matmul autotuning reaches the generated library, without a GPU: a graph with a matmul,
captured on the CPU, retargeted to CUDA and compiled by the real daemon for an H100. The
kernels_cuda.so's constant gemm descriptor (struct tccd_rt_gemm, runtime/tccd_cuda_runtime.h)
must carry tune = 0 candidates by default (the heuristic's first algorithm) and 8 from a daemon
started with TCCD_GEMM_AUTOTUNE=8, with the workspace in bits 16..23 (32 MiB by default, the
segment reserving as much; TCCD_GEMM_WORKSPACE_MB=8 gives the word of plans before the bits), and
only the tuned one exports tccd_cuda_set_tune_table; the runtime's timing itself is tested against fake
drivers (tests/codegen/cuda_host/cuda_host_fake_driver_test.cc) and on a GPU
(test_gpu_gemm_autotune.py).
"""

import os
import shutil
import struct

import pytest
import torch

from tccd import serialize
from tccd.serialize import pb
from tccd_testlib import capture_aot_graphs
from conftest import TCCD_BINARY, Daemon, short_tempdir
from test_e2e_channels_last import _on_cuda

CUBLAS_COMPUTE_32F = 68
EPILOGUE_DEFAULT = 1


def _daemon_with(**knobs):
    """A daemon of its own with `knobs` in its environment."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-knob-")
    d = Daemon(TCCD_BINARY, root)
    os.environ.update(knobs)  # inherited by the daemon process only
    try:
        d.start()
    finally:
        for name in knobs:
            del os.environ[name]
    return d, root


@pytest.fixture(scope="module")
def tuned_daemon():
    """Autotuning on (TCCD_GEMM_AUTOTUNE=8)."""
    d, root = _daemon_with(TCCD_GEMM_AUTOTUNE="8")
    yield d
    d.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def ws8_daemon():
    """The workspace before the thirteenth session (TCCD_GEMM_WORKSPACE_MB=8)."""
    d, root = _daemon_with(TCCD_GEMM_WORKSPACE_MB="8")
    yield d
    d.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def swap_daemon():
    """Autotuning with the swapped formulation (TCCD_GEMM_AUTOTUNE=8, TCCD_GEMM_AUTOTUNE_SWAP=1)."""
    d, root = _daemon_with(TCCD_GEMM_AUTOTUNE="8", TCCD_GEMM_AUTOTUNE_SWAP="1")
    yield d
    d.stop()
    shutil.rmtree(root, ignore_errors=True)


def _host_library(daemon):
    def fn(x, w, y):
        return torch.tanh(x @ w) * y  # a matmul and the kernel after it: one segment

    (kind, gm, _), = capture_aot_graphs(fn, torch.randn(64, 96), torch.randn(96, 128), torch.randn(64, 128))
    assert kind == "inference"
    graph, _ = serialize.encode_graph(gm)
    _on_cuda(graph)
    request = pb.CompileRequest(
        graph=graph,
        target=pb.Target(device_type=pb.CUDA, cuda_device_name="NVIDIA H100 80GB HBM3", cuda_cc_major=9,
                         cuda_cc_minor=0),
        graph_name="gemm-tune",
        options=serialize.options_proto(None, None),
        client=serialize.client_info(),
    )
    stub = daemon.stub()
    response = stub.Compile(request, timeout=600)
    assert response.manifest.plan.steps, response
    (so,) = [a for a in response.manifest.artifacts if a.name == "kernels_cuda.so"]
    return b"".join(c.data for c in stub.FetchArtifact(pb.FetchArtifactRequest(digest=so.digest), timeout=60))


WS32 = 32 << 16  # tune's workspace bits: 32 MiB (TCCD_RT_TUNE_WORKSPACE_MIB)


def _gemm_tail(tune):
    # The descriptor's last fields: compute, epilogue, alpha, tune (f32 mm, no bias, alpha 1).
    return struct.pack("<iifi", CUBLAS_COMPUTE_32F, EPILOGUE_DEFAULT, 1.0, tune)


def _segment_gemm_workspace(library, mib):
    # struct tccd_rt_segment's workspace_bytes, gemm_workspace_offset, gemm_workspace_bytes: the
    # segment holds only the matmul's scratch (the tanh kernel's output is the plan's).
    return library.count(struct.pack("<qqq", mib << 20, 0, mib << 20))


def test_a_matmul_is_not_autotuned_by_default(daemon):
    library = _host_library(daemon)
    assert library.count(_gemm_tail(WS32)) == 1
    assert library.count(_gemm_tail(WS32 | 8)) == 0
    assert b"tccd_cuda_set_tune_table" not in library


def test_the_workspace_is_32_mib_by_default_and_8_with_the_knob(daemon, ws8_daemon):
    assert _segment_gemm_workspace(_host_library(daemon), 32) == 1
    library = _host_library(ws8_daemon)
    assert library.count(_gemm_tail(0)) == 1  # no workspace bits: the runtime's 8 MiB
    assert _segment_gemm_workspace(library, 8) == 1


def test_autotuning_turns_on_with_the_environment(tuned_daemon):
    library = _host_library(tuned_daemon)
    assert library.count(_gemm_tail(WS32 | 8)) == 1
    assert library.count(_gemm_tail(WS32)) == 0
    # The entry point through which the client shares one table of choices (runtime.py).
    assert b"tccd_cuda_set_tune_table" in library


def test_the_swapped_formulation_is_a_flag_of_tune(swap_daemon):
    library = _host_library(swap_daemon)
    assert library.count(_gemm_tail(WS32 | 8 | 0x100)) == 1  # TCCD_RT_TUNE_SWAP
    assert library.count(_gemm_tail(WS32 | 8)) == 0
