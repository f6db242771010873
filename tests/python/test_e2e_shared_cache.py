"""End to end: daemons sharing a cache tier on a real redis-server (--shared-cache).

Real tccd processes, each on its own socket and cache dir, and Debian's redis-server on a
loopback port in a temp dir. Checked: a second daemon serves what the first compiled without
compiling; identical requests spread over several daemons compile once cluster-wide (compile
lease); a blob tampered with in Redis is never served; Redis killed mid-run leaves every daemon
serving from its local cache, logged once, and the tier is used again once Redis is back.
"""

import hashlib
import shutil
import threading
import time

import pytest
import torch

from conftest import TCCD_BINARY, Daemon, short_tempdir
from redis_testlib import RedisServer, redis_available
from tccd.serialize import build_request
from tccd.v1 import tccd_pb2 as pb
from tccd_testlib import capture_aot_graphs

pytestmark = pytest.mark.skipif(not redis_available(), reason="redis-server not installed")


def _graph(n: int):
    def f(x, y):
        return torch.sigmoid(x * y) + torch.tanh(x) * n

    (_, gm, inputs), = capture_aot_graphs(f, torch.randn(8, 16 + n), torch.randn(16 + n))
    return gm, inputs


def _request(graph, name="shared"):
    gm, inputs = graph
    return build_request(gm, inputs, graph_name=name, job_id="shared-tier-test")


@pytest.fixture
def redis():
    server = RedisServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def cluster(redis):
    """make(n) -> n daemons sharing `redis`, each with its own cache dir."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    daemons, roots = [], []

    def make(n, extra=()):
        for _ in range(n):
            root = short_tempdir("tccd-shared-")
            roots.append(root)
            d = Daemon(TCCD_BINARY, root, extra_args=[
                "--shared-cache", redis.url, "--compile-threads", "2", *extra])
            d.start()
            daemons.append(d)
        return daemons[-n:]

    yield make
    try:
        for d in daemons:
            if d.alive():
                assert d.stop() == 0, d.log_tail()
    finally:
        for root in roots:
            shutil.rmtree(root, ignore_errors=True)


def _fetch_all(daemon, manifest):
    for artifact in manifest.artifacts:
        data = b"".join(c.data for c in daemon.stub().FetchArtifact(
            pb.FetchArtifactRequest(digest=artifact.digest), timeout=30))
        assert hashlib.sha256(data).hexdigest() == artifact.digest


def test_a_second_daemon_serves_what_the_first_compiled_with_zero_compiles(cluster, redis):
    a, b = cluster(2)
    request = _request(_graph(1))
    first = a.stub().Compile(request, timeout=120)
    assert not first.cache_hit
    assert a.stats()["compiles"] == 1
    assert a.stats()["shared_publishes"] == 1
    assert redis.keys("tccd:v1:m:*") == [f"tccd:v1:m:{first.manifest.key}"]
    assert not redis.keys("tccd:v1:l:*"), "the lease is released after publishing"

    second = b.stub().Compile(request, timeout=120)
    assert second.cache_hit
    assert second.manifest.key == first.manifest.key
    stats = b.stats()
    assert stats["compiles"] == 0, stats
    assert stats["shared_hits"] == 1, stats
    assert stats["shared_blobs_fetched"] == len(first.manifest.artifacts), stats
    _fetch_all(b, second.manifest)
    # Now in b's local cache: the next hit does not go to Redis.
    assert b.stub().Compile(request, timeout=120).cache_hit
    assert b.stats()["shared_hits"] == 1


def test_identical_requests_over_four_daemons_compile_once(cluster):
    daemons = cluster(4)
    request = _request(_graph(2))
    per_daemon = 25
    errors, responses = [], []
    lock = threading.Lock()

    def client(d):
        stub = d.stub()
        try:
            futures = [stub.Compile.future(request, timeout=120) for _ in range(per_daemon)]
            got = [f.result() for f in futures]
            with lock:
                responses.extend(got)
        except Exception as e:  # noqa: BLE001 - reported below
            with lock:
                errors.append(e)

    threads = [threading.Thread(target=client, args=(d,)) for d in daemons]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=180)
    assert not errors, errors
    assert len(responses) == 4 * per_daemon
    assert len({r.manifest.key for r in responses}) == 1
    stats = [d.stats() for d in daemons]
    assert sum(s["compiles"] for s in stats) == 1, stats
    # The three daemons that did not compile waited for the lease holder or found its result.
    assert sum(s["shared_hits"] for s in stats) == 3, stats
    for d, s in zip(daemons, stats):
        assert s["cache_hits"] + s["cache_misses"] + s["dedup_waits"] == per_daemon, s


def test_a_tampered_blob_in_redis_is_never_served(cluster, redis):
    a, b = cluster(2)
    request = _request(_graph(3))
    compiled = a.stub().Compile(request, timeout=120)
    victim = compiled.manifest.artifacts[0]
    redis.cli_call("SET", f"tccd:v1:b:{victim.digest}", "not the compiled bytes")

    response = b.stub().Compile(request, timeout=120)
    stats = b.stats()
    assert stats["shared_corrupt_blobs"] == 1, stats
    assert stats["compiles"] == 1, stats  # compiled locally instead
    _fetch_all(b, response.manifest)
    # b republished good bytes under the digest.
    assert redis.cli_call("STRLEN", f"tccd:v1:b:{victim.digest}") == str(victim.size)


def test_redis_killed_mid_run_the_daemons_keep_serving(cluster, redis):
    a, b = cluster(2, extra=("--shared-cache-timeout-ms", "200"))
    cached = _request(_graph(4), "before")
    assert not a.stub().Compile(cached, timeout=120).cache_hit

    redis.kill()
    # Hits and new compiles keep working on the local level, on both daemons.
    assert a.stub().Compile(cached, timeout=120).cache_hit
    for n in (5, 6, 7):
        response = b.stub().Compile(_request(_graph(n), f"during-{n}"), timeout=120)
        assert not response.cache_hit
        _fetch_all(b, response.manifest)
    assert b.stats()["shared_errors"] >= 1
    log = b.log_tail(100_000)
    assert log.count("serving from the local cache alone") == 1, log

    # Redis back (empty, same port): the next compile is published again, and logged once.
    redis.start()
    time.sleep(1.2)  # past the retry interval
    response = b.stub().Compile(_request(_graph(8), "after"), timeout=120)
    assert not response.cache_hit
    assert redis.keys(f"tccd:v1:m:{response.manifest.key}")
    assert "reachable again" in b.log_tail(100_000)
    assert a.stub().Compile(_request(_graph(8), "after"), timeout=120).cache_hit
    assert a.stats()["shared_hits"] == 1


def test_a_failed_compile_releases_the_lease_and_a_waiting_daemon_takes_over(cluster, redis):
    import grpc

    # --shared-cache-wait-s 300: a waiter that did not notice the release would hang for minutes.
    a, b = cluster(2, extra=("--enable-test-faults", "--shared-cache-wait-s", "300"))
    request = _request(_graph(9), "crashing")
    request.options.extra["tccd_test_fault"] = "crash"
    results = {}

    def call(name, d):
        t = time.monotonic()
        try:
            d.stub().Compile(request, timeout=120)
            results[name] = (None, time.monotonic() - t)
        except grpc.RpcError as e:
            results[name] = (e.code(), time.monotonic() - t)

    threads = [threading.Thread(target=call, args=(n, d)) for n, d in (("a", a), ("b", b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=200)
    assert set(results) == {"a", "b"}, results
    for name, (code, seconds) in results.items():
        assert code == grpc.StatusCode.INTERNAL, (name, code)
        assert seconds < 60, (name, seconds)
    assert not redis.keys("tccd:v1:l:*"), "leases are released after a failed compile"
    assert not redis.keys("tccd:v1:m:*"), "nothing is published for a failed compile"
    stats = [a.stats(), b.stats()]
    assert sum(s["compile_errors"] for s in stats) >= 1, stats


def test_a_password_protected_redis(tmp_path):
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    redis = RedisServer(password="s3cret-pw")
    redis.start()
    roots, daemons = [], []
    try:
        for url in (redis.url, redis.url.replace("s3cret-pw", "wrong-pw")):
            root = short_tempdir("tccd-shared-pw-")
            roots.append(root)
            d = Daemon(TCCD_BINARY, root, extra_args=["--shared-cache", url])
            d.start()
            daemons.append(d)
        good, wrong = daemons
        request = _request(_graph(10), "password")
        assert not good.stub().Compile(request, timeout=120).cache_hit
        assert good.stats()["shared_publishes"] == 1
        # A wrong password is an unreachable tier: the daemon compiles locally, logs it once,
        # and never prints the password.
        assert not wrong.stub().Compile(request, timeout=120).cache_hit
        assert wrong.stats()["shared_errors"] >= 1
        log = wrong.log_tail(100_000)
        assert "serving from the local cache alone" in log
        assert "wrong-pw" not in log and "s3cret-pw" not in log
    finally:
        for d in daemons:
            d.stop()
        for root in roots:
            shutil.rmtree(root, ignore_errors=True)
        redis.stop()


def test_a_read_token_gets_hits_from_the_shared_tier(cluster, tmp_path):
    import grpc

    token = "read-only-token-0123456789abcdef"
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{token} read\n")
    tokens.chmod(0o600)
    (a,) = cluster(1)
    (b,) = cluster(1, extra=("--tokens", str(tokens)))
    request = _request(_graph(11), "read-only")
    metadata = [("authorization", f"Bearer {token}")]
    with pytest.raises(grpc.RpcError) as e:
        b.stub().Compile(request, metadata=metadata, timeout=60)
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED  # nowhere yet: nothing compiled
    assert not a.stub().Compile(request, timeout=120).cache_hit
    assert b.stub().Compile(request, metadata=metadata, timeout=60).cache_hit
