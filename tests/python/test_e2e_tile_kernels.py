"""Tiled kernels end to end without a GPU (codegen/cuda_host/tile_kernels.h): graphs captured on the
CPU, retargeted to CUDA and compiled by the real daemon for an H100 (NVRTC only). A cast through a
transposed view and an NCHW -> NHWC copy must come out as tiled kernels (`.entry <name>_tile` in
the graph's PTX); a copy that only needs a loop order must not. tests/python/test_gpu_tile_kernels.py
runs the same kinds of copies against eager on a GPU.
"""

import os
import re
import shutil

import pytest
import torch

from tccd import serialize
from tccd.serialize import pb
from tccd_testlib import capture_aot_graphs
from conftest import TCCD_BINARY, Daemon, short_tempdir
from test_e2e_channels_last import _on_cuda


@pytest.fixture(scope="module")
def no_tile_daemon():
    """A daemon of its own with tiled kernels off (TCCD_TILE_KERNELS=0)."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-tile-")
    d = Daemon(TCCD_BINARY, root)
    os.environ["TCCD_TILE_KERNELS"] = "0"  # inherited by the daemon process only
    try:
        d.start()
    finally:
        del os.environ["TCCD_TILE_KERNELS"]
    yield d
    d.stop()
    shutil.rmtree(root, ignore_errors=True)


def _ptx_entries(daemon, fn, *args):
    (kind, gm, _), = capture_aot_graphs(fn, *args)
    assert kind == "inference"
    graph, _ = serialize.encode_graph(gm)
    _on_cuda(graph)
    request = pb.CompileRequest(
        graph=graph,
        target=pb.Target(device_type=pb.CUDA, cuda_device_name="NVIDIA H100 80GB HBM3", cuda_cc_major=9,
                         cuda_cc_minor=0),
        graph_name="tile",
        options=serialize.options_proto(None, None),
        client=serialize.client_info(),
    )
    stub = daemon.stub()
    response = stub.Compile(request, timeout=600)
    assert response.manifest.plan.steps, response
    (ptx,) = [a for a in response.manifest.artifacts if a.name == "kernels.ptx"]
    data = b"".join(c.data for c in stub.FetchArtifact(pb.FetchArtifactRequest(digest=ptx.digest), timeout=60))
    return re.findall(r"\.entry (\w+)\(", data.decode())


def test_transposing_copies_compile_to_tiled_kernels(daemon):
    def transpose_cast(t):
        return (t.transpose(1, 2) * 0.125).to(torch.bfloat16).contiguous()

    entries = _ptx_entries(daemon, transpose_cast, torch.randn(6, 128, 64))
    assert len(entries) == 1 and entries[0].endswith("_tile"), entries

    def to_nhwc(t):
        return t.contiguous(memory_format=torch.channels_last)

    entries = _ptx_entries(daemon, to_nhwc, torch.randn(2, 48, 20, 20))
    assert len(entries) == 1 and entries[0].endswith("_tile"), entries


def test_a_copy_that_a_loop_order_makes_dense_is_not_tiled(daemon):
    def cast(t):
        return t.transpose(1, 2).to(torch.bfloat16)  # output keeps the transposed layout

    entries = _ptx_entries(daemon, cast, torch.randn(6, 128, 64))
    assert entries and not any(e.endswith("_tile") for e in entries), entries


def test_tiled_kernels_turn_off_with_the_environment(no_tile_daemon):
    """TCCD_TILE_KERNELS=0 in the daemon's environment: the strided entry, as before the tiles."""
    daemon = no_tile_daemon

    def transpose_cast(t):
        return (t.transpose(1, 2) * 0.125).to(torch.bfloat16).contiguous()

    entries = _ptx_entries(daemon, transpose_cast, torch.randn(6, 96, 64))
    assert entries and not any(e.endswith("_tile") for e in entries), entries
