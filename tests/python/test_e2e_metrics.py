"""End to end: --metrics-listen serves Prometheus text at /metrics, and its values move with real
traffic.

Real tccd processes on private sockets and cache dirs with --metrics-listen 127.0.0.1:0 (the port
is read from the daemon's log), scraped over HTTP with urllib. Two daemons share a real
redis-server, so the second daemon's hit comes from the shared tier. Checked after real compiles,
hits, artifact fetches and a rejected request: requests by method and code, the compile-time
histogram, hits and misses of both tiers, bytes served, store size, and compile seconds saved.
"""

import re
import shutil
import time
import urllib.error
import urllib.request
from typing import Dict, Tuple

import pytest
import torch

from conftest import TCCD_BINARY, Daemon, short_tempdir
from redis_testlib import RedisServer, redis_available
from tccd.serialize import build_request
from tccd.v1 import tccd_pb2 as pb
from tccd_testlib import capture_aot_graphs

COMPILE = "/tccd.v1.Tccd/Compile"
FETCH = "/tccd.v1.Tccd/FetchArtifact"

# name{labels} value
_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')

Samples = Dict[Tuple[str, frozenset], float]


def parse(text: str) -> Samples:
    samples: Samples = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        assert m, f"not Prometheus text: {line!r}"
        labels = frozenset(_LABEL.findall(m.group(2) or ""))
        samples[(m.group(1), labels)] = float(m.group(3))
    return samples


def value(samples: Samples, name: str, **labels) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def metrics_port(daemon: Daemon, timeout_s: float = 10.0) -> int:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        m = re.search(r"metrics on http://127\.0\.0\.1:(\d+)/metrics", daemon.log_tail(100_000))
        if m:
            return int(m.group(1))
        time.sleep(0.05)
    raise AssertionError(f"no metrics port in the log:\n{daemon.log_tail()}")


def scrape(port: int) -> Tuple[str, str, Samples]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
        return response.headers.get("Content-Type", ""), text, parse(text)


def _graph():
    def f(x, y):
        return torch.sigmoid(x * y) + torch.tanh(x) * 3

    (_, gm, inputs), = capture_aot_graphs(f, torch.randn(8, 24), torch.randn(24))
    return gm, inputs


@pytest.fixture
def daemons():
    """make(extra_args) -> a started daemon with a metrics endpoint on a free port."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    started, roots = [], []

    def make(extra=()):
        root = short_tempdir("tccd-metrics-")
        roots.append(root)
        d = Daemon(TCCD_BINARY, root, extra_args=[
            "--metrics-listen", "127.0.0.1:0", "--compile-threads", "2", *extra])
        d.start()
        started.append(d)
        return d, metrics_port(d)

    yield make
    try:
        for d in started:
            if d.alive():
                assert d.stop() == 0, d.log_tail()
    finally:
        for root in roots:
            shutil.rmtree(root, ignore_errors=True)


def test_metrics_move_with_compiles_hits_fetches_and_errors(daemons):
    d, port = daemons()
    content_type, text, before = scrape(port)
    assert content_type.startswith("text/plain"), content_type
    assert "# TYPE tccd_compile_seconds histogram" in text
    assert value(before, "tccd_compiles_total") == 0
    assert value(before, "tccd_store_manifests") == 0

    gm, inputs = _graph()
    request = build_request(gm, inputs, graph_name="metrics", job_id="metrics-test")
    stub = d.stub()
    miss = stub.Compile(request, timeout=120)
    assert not miss.cache_hit
    for _ in range(3):
        assert stub.Compile(request, timeout=120).cache_hit
    fetched = 0
    for artifact in miss.manifest.artifacts:
        fetched += sum(len(c.data) for c in stub.FetchArtifact(
            pb.FetchArtifactRequest(digest=artifact.digest), timeout=30))
    with pytest.raises(Exception):
        stub.FetchArtifact(pb.FetchArtifactRequest(digest="nothex"), timeout=30).next()

    _, _, after = scrape(port)
    assert value(after, "tccd_requests_total", method=COMPILE, code="OK") == 4
    assert value(after, "tccd_requests_total", method=FETCH, code="OK") == len(
        miss.manifest.artifacts)
    assert value(after, "tccd_requests_total", method=FETCH, code="INVALID_ARGUMENT") == 1
    assert value(after, "tccd_compiles_total") == 1
    assert value(after, "tccd_compile_seconds_count") == 1
    # The histogram's sum is the compile time the response reported.
    assert value(after, "tccd_compile_seconds_sum") == pytest.approx(miss.compile_ms / 1000,
                                                                     rel=1e-6)
    assert value(after, "tccd_compile_seconds_bucket", le="+Inf") == 1
    assert value(after, "tccd_cache_misses_total", tier="local") == 1
    assert value(after, "tccd_cache_hits_total", tier="local") == 3
    # Each hit saved the compile that made the entry, as the manifest records it.
    assert miss.manifest.compile_ms == pytest.approx(miss.compile_ms)
    assert value(after, "tccd_compile_seconds_saved_total") == pytest.approx(
        3 * miss.compile_ms / 1000, rel=1e-6)
    assert value(after, "tccd_served_bytes_total") == fetched > 0
    assert value(after, "tccd_store_manifests") >= 1  # the entry (and kernel-store records)
    assert value(after, "tccd_store_blob_bytes") > 0
    assert value(after, "tccd_single_flight_waits_total", scope="daemon") == 0
    # GetStats counters without a Prometheus name of their own are still scraped.
    assert ("tccd_kernels_compiled", frozenset()) in after
    # A scrape is not a request: GetStats' counter did not move with the scrapes.
    assert d.stats()["requests_total"] == 4 + len(miss.manifest.artifacts) + 1 + 1


def test_a_hit_from_the_shared_tier_is_counted_as_one(daemons):
    if not redis_available():
        pytest.skip("redis-server not installed")
    redis = RedisServer()
    redis.start()
    try:
        a, a_port = daemons(["--shared-cache", redis.url])
        b, b_port = daemons(["--shared-cache", redis.url])
        gm, inputs = _graph()
        request = build_request(gm, inputs, graph_name="metrics-shared", job_id="metrics-test")
        compiled = a.stub().Compile(request, timeout=120)
        assert not compiled.cache_hit
        served = b.stub().Compile(request, timeout=120)
        assert served.cache_hit
        _, _, on_b = scrape(b_port)
        assert value(on_b, "tccd_compiles_total") == 0
        assert value(on_b, "tccd_cache_hits_total", tier="shared") == 1
        assert value(on_b, "tccd_cache_hits_total", tier="local") == 1
        assert value(on_b, "tccd_shared_fetched_bytes_total") > 0
        # The entry's compile time travelled with its manifest through Redis.
        assert value(on_b, "tccd_compile_seconds_saved_total") == pytest.approx(
            compiled.compile_ms / 1000, rel=1e-6)
        _, _, on_a = scrape(a_port)
        assert value(on_a, "tccd_cache_misses_total", tier="shared") == 1
        assert value(on_a, "tccd_compile_seconds_count") == 1
    finally:
        redis.stop()


def test_a_bad_metrics_address_is_a_startup_error(tmp_path):
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    import subprocess

    out = subprocess.run([str(TCCD_BINARY), "--metrics-listen", "unix:/tmp/x.sock"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 2, out.stderr
    assert "--metrics-listen" in out.stderr
