"""End to end: a daemon with --max-cache-mb keeps its cache under the cap by evicting the least
recently used entries, and what is used keeps being served.

The real tccd on a private socket and cache dir, --max-cache-mb 1 and --eviction-min-age-s 0 (no
protection window, so the cap is exact). Entries are one 60-op graph compiled under different
CompileOptions.extra values: distinct keys of about 25 kB each (the manifest carries the
canonical IR), cheap to compile because the kernels are reused.
"""

import hashlib
import os
import shutil
import signal
import threading
import time

import grpc
import pytest
import torch

from conftest import TCCD_BINARY, Daemon, short_tempdir
from tccd.serialize import build_request
from tccd.v1 import tccd_pb2 as pb
from tccd_testlib import capture_aot_graphs

CAP_MB = 1


@pytest.fixture(scope="module")
def graph():
    def f(x, y):
        for i in range(60):
            x = torch.sigmoid(x * y) + torch.tanh(x) * (i + 1)
        return x

    (_, gm, inputs), = capture_aot_graphs(f, torch.randn(64, 64), torch.randn(64))
    return gm, inputs


def _request(graph, variant: int):
    gm, inputs = graph
    request = build_request(gm, inputs, graph_name=f"evict-{variant}", job_id="eviction-test")
    request.options.extra["eviction_test_variant"] = str(variant)
    return request


@pytest.fixture
def capped_daemon():
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-evict-")
    d = Daemon(TCCD_BINARY, root, extra_args=[
        "--max-cache-mb", str(CAP_MB), "--eviction-min-age-s", "0", "--compile-threads", "2"])
    d.start()
    yield d
    try:
        if d.alive():
            assert d.stop() == 0, d.log_tail()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _fetch(daemon, artifact) -> bytes:
    data = b"".join(c.data for c in daemon.stub().FetchArtifact(
        pb.FetchArtifactRequest(digest=artifact.digest), timeout=30))
    assert hashlib.sha256(data).hexdigest() == artifact.digest
    return data


def test_the_cache_stays_under_its_cap_and_recently_used_entries_stay_hits(capped_daemon, graph):
    d = capped_daemon
    stub = d.stub()
    hot = _request(graph, 0)
    assert not stub.Compile(hot, timeout=120).cache_hit
    for variant in range(1, 80):
        # The hot entry is hit before every new compile: it is never the least recently used.
        assert stub.Compile(hot, timeout=120).cache_hit, variant
        assert not stub.Compile(_request(graph, variant), timeout=120).cache_hit, variant
        stats = d.stats()
        assert stats["store_max_bytes"] == CAP_MB << 20
        assert 0 < stats["store_bytes"] <= stats["store_max_bytes"], (variant, stats)

    stats = d.stats()
    assert stats["evicted_manifests"] > 0, stats
    # (The variants share their artifact blobs, so evicting one frees only its manifest; blobs
    # going with the last manifest naming them is covered by tests/cache/store_eviction_test.cc.)
    assert stats["evictions_blocked"] == 0, stats
    # The newest entries and the hot one are hits whose artifacts are all there; the oldest cold
    # entry was evicted and compiles again.
    for variant in [0, 75, 76, 77, 78, 79]:
        response = stub.Compile(_request(graph, variant), timeout=120)
        assert response.cache_hit, variant
        for artifact in response.manifest.artifacts:
            _fetch(d, artifact)
    compiles = stats["compiles"]
    assert not stub.Compile(_request(graph, 1), timeout=120).cache_hit
    assert d.stats()["compiles"] == compiles + 1

    # Restarted on the same cache: the index is rebuilt (same size, still under the cap) and the
    # access times written at shutdown keep the hot entry.
    before = d.stats()["store_bytes"]
    d.restart()
    after = d.stats()
    assert after["store_bytes"] == before, (before, after)
    assert after["evicted_manifests"] == 0  # counters are per run
    assert d.stub().Compile(hot, timeout=120).cache_hit


def test_sigkill_in_the_middle_of_evictions_leaves_a_consistent_cache(capped_daemon, graph):
    d = capped_daemon
    requests = [_request(graph, v) for v in range(60)]
    stop = threading.Event()
    errors = []

    def client(offset):
        stub = d.stub()
        i = offset
        while not stop.is_set():
            try:
                stub.Compile(requests[i % len(requests)], timeout=60)
            except grpc.RpcError as e:
                if e.code() != grpc.StatusCode.UNAVAILABLE:  # the daemon was killed
                    errors.append(e)
                return
            i += 3

    threads = [threading.Thread(target=client, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    # Let it fill the cache and start evicting, then kill it without warning.
    deadline = 60
    start = time.monotonic()
    while d.stats()["evicted_manifests"] < 20 and time.monotonic() - start < deadline:
        time.sleep(0.05)
    assert d.stats()["evicted_manifests"] >= 20, d.stats()
    d.proc.send_signal(signal.SIGKILL)
    d.proc.wait()
    stop.set()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors

    d.start()
    stats = d.stats()
    assert stats["store_bytes"] <= stats["store_max_bytes"] + (64 << 10), stats
    # Every entry is either a hit whose artifacts are all there and intact, or compiles again.
    for request in requests:
        response = d.stub().Compile(request, timeout=120)
        if response.cache_hit:
            for artifact in response.manifest.artifacts:
                _fetch(d, artifact)
        assert d.stats()["store_bytes"] <= d.stats()["store_max_bytes"]
    assert d.stats()["internal_errors"] == 0
