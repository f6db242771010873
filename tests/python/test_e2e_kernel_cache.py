"""End to end (CPU): kernel-level content addressing in the real daemon.

Every generated kernel's object is stored under its own content key, so two graphs that share a
kernel compile it once: the second graph's compile reports kernels_reused > 0 and compiles only
its new kernels, in its CompileResponse, in GetStats and in the client's per-graph stats; a
restarted daemon on the same store reuses them too; and the graphs built from reused objects run
and match eager. (Corrupt cached objects: tests/server/store_kernel_cache_test.cc, which can reach
into the closed store's RocksDB.)
"""

import shutil

import pytest
import torch

import tccd
from conftest import TCCD_BINARY, Daemon, short_tempdir
from tccd.serialize import build_request
from tccd_testlib import capture_aot_graphs


def _shared_head(x, y, w):
    # The matmul is an extern step on the CPU, so tanh(x * y) is a kernel of its own, the same in
    # both graphs; what follows the matmul differs.
    return torch.tanh(x * y) @ w


def graph_a(x, y, w):
    return torch.sigmoid(_shared_head(x, y, w)) * 2


def graph_b(x, y, w):
    return torch.relu(_shared_head(x, y, w)) + 3


def _inputs():
    torch.manual_seed(0)
    return torch.randn(8, 16), torch.randn(16), torch.randn(16, 4)


def _request(fn, name):
    (_, gm, inputs), = capture_aot_graphs(fn, *_inputs())
    return build_request(gm, inputs, graph_name=name, job_id="kernel-cache-test")


@pytest.fixture
def own_daemon():
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-kcas-")
    d = Daemon(TCCD_BINARY, root)
    d.start()
    yield d
    try:
        assert d.stop() == 0, d.log_tail()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_graphs_sharing_a_kernel_compile_it_once_and_a_restarted_daemon_reuses_it(own_daemon):
    d = own_daemon
    a = d.stub().Compile(_request(graph_a, "kcas-a"), timeout=120)
    assert not a.cache_hit
    assert a.kernels_compiled == 2 and a.kernels_reused == 0, a

    b = d.stub().Compile(_request(graph_b, "kcas-b"), timeout=120)
    assert not b.cache_hit
    assert b.kernels_reused == 1 and b.kernels_compiled == 1, b

    stats = d.stats()
    assert isinstance(stats["kernels_compiled"], int) and isinstance(stats["kernels_reused"], int)
    assert stats["kernels_compiled"] == 3 and stats["kernels_reused"] == 1, stats

    # A cache hit compiles nothing and reports no kernel counts.
    again = d.stub().Compile(_request(graph_a, "kcas-a"), timeout=120)
    assert again.cache_hit and again.kernels_compiled == 0 and again.kernels_reused == 0

    # A new daemon on the same store: a third graph (same head, another tail) reuses the head.
    d.restart()
    def graph_c(x, y, w):
        return torch.tanh(_shared_head(x, y, w)) - 1
    c = d.stub().Compile(_request(graph_c, "kcas-c"), timeout=120)
    assert c.kernels_reused == 1 and c.kernels_compiled == 1, c
    stats = d.stats()
    assert stats["kernels_compiled"] == 1 and stats["kernels_reused"] == 1, stats


def test_graphs_linked_from_reused_kernels_run_and_match_eager(daemon_env):
    tccd.reset_compile_stats()
    x, y, w = _inputs()
    for fn in (graph_a, graph_b):
        torch._dynamo.reset()
        got = torch.compile(fn, backend="tccd", dynamic=False)(x, y, w)
        torch.testing.assert_close(got, fn(x, y, w), rtol=1e-5, atol=1e-6)
    records = tccd.last_compile_stats()
    assert all(r["fallback"] is None for r in records), records
    compiled = [r for r in records if not r["cache_hit"] and not r["local_hit"]]
    # The session daemon may have compiled graph_a's kernels for another test already: the
    # second graph reuses its head kernel either way.
    assert compiled and compiled[-1]["kernels_reused"] >= 1, records
    assert all(isinstance(r["kernels_compiled"], int) for r in records)


def _on_cuda(request):
    """The request retargeted to an H100 (every tensor on cuda:0): NVRTC and nvJitLink need no GPU."""
    from tccd.v1 import tccd_pb2 as pb

    def visit(message):
        for field, value in message.ListFields():
            if field.type != field.TYPE_MESSAGE:
                continue
            for item in [value] if hasattr(value, "ListFields") else list(value):
                if not hasattr(item, "ListFields"):  # map keys
                    continue
                if item.DESCRIPTOR.name == "Device":
                    item.type = pb.CUDA
                    item.index = 0
                else:
                    visit(item)

    visit(request.graph)
    request.target.Clear()
    request.target.device_type = pb.CUDA
    request.target.cuda_device_name = "NVIDIA H100 80GB HBM3"
    request.target.cuda_cc_major = 9
    request.target.cuda_cc_minor = 0
    return request


def test_cuda_graphs_sharing_a_kernel_compile_it_once_into_one_linked_cubin(own_daemon):
    from tccd.v1 import tccd_pb2 as pb

    d = own_daemon
    a = d.stub().Compile(_on_cuda(_request(graph_a, "kcas-cuda-a")), timeout=300)
    if a.kernels_compiled == 0:
        pytest.skip("no nvJitLink here: CUDA graphs compile as one NVRTC program, reusing nothing")
    assert a.kernels_reused == 0, a
    b = d.stub().Compile(_on_cuda(_request(graph_b, "kcas-cuda-b")), timeout=300)
    assert b.kernels_reused >= 1 and b.kernels_compiled >= 1, b
    assert b.kernels_compiled < a.kernels_compiled + b.kernels_reused
    # The graph still ships one loadable cubin and the host library that embeds it.
    kinds = {artifact.kind for artifact in b.manifest.artifacts}
    assert pb.CUBIN in kinds and pb.CUDA_HOST_OBJECT in kinds, b.manifest.artifacts
    stats = d.stats()
    assert stats["kernels_reused"] >= 1 and stats["kernel_store_errors"] == 0, stats
