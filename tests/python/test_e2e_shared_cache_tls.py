"""End to end: the shared tier over TLS (--shared-cache rediss://...).

Debian's redis-server (built with TLS) runs TLS-only (--port 0 --tls-port P) in a temp dir, with
certificates made by the openssl CLI: CA "good" signs Redis' certificate (subjectAltName
127.0.0.1 and localhost) and a client certificate; CA "other" signs nothing Redis trusts.
Checked: two real daemons share entries through it (the second compiles nothing); a daemon
given the wrong CA refuses Redis (the handshake fails with "certificate verify failed", logged)
and keeps compiling on its local cache; a Redis that requires client certificates accepts the
daemon only with one; unusable TLS files are a startup error.
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest
import torch

from conftest import TCCD_BINARY, Daemon, short_tempdir
from redis_testlib import free_port
from tccd.serialize import build_request
from tccd_testlib import capture_aot_graphs


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _make_certs(d: str) -> None:
    for ca in ("good", "other"):
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                 f"/CN=tccd redis test CA {ca}", "-keyout", f"{ca}-ca.key", "-out",
                 f"{ca}-ca.pem", cwd=d)
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for name, ext in (("redis", True), ("client", False)):
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}",
                 "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=d)
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "good-ca.pem", "-CAkey",
                 "good-ca.key", "-CAcreateserial", "-days", "2", "-out", f"{name}.pem",
                 *(["-extfile", "san.ext"] if ext else []), cwd=d)


@pytest.fixture(scope="module")
def certs():
    if shutil.which("openssl") is None or shutil.which("redis-server") is None:
        pytest.skip("openssl or redis-server not installed")
    d = tempfile.mkdtemp(prefix="tccd-redis-tls-certs-")
    _make_certs(d)
    yield d
    shutil.rmtree(d, ignore_errors=True)


class TlsRedis:
    """A TLS-only redis-server on a loopback port."""

    def __init__(self, certs: str, auth_clients: bool):
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="tccd-redis-tls-")
        c = lambda name: os.path.join(certs, name)  # noqa: E731
        with open(os.path.join(self.dir, "redis.log"), "ab") as log:
            self.proc = subprocess.Popen(
                ["redis-server", "--port", "0", "--tls-port", str(self.port), "--bind",
                 "127.0.0.1", "--dir", self.dir, "--save", "", "--appendonly", "no",
                 "--tls-cert-file", c("redis.pem"), "--tls-key-file", c("redis.key"),
                 "--tls-ca-cert-file", c("good-ca.pem"),
                 "--tls-auth-clients", "yes" if auth_clients else "no"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log()
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not listen:\n{self.log()}")

    @property
    def url(self) -> str:
        return f"rediss://127.0.0.1:{self.port}"

    def log(self) -> str:
        with open(os.path.join(self.dir, "redis.log"), errors="replace") as f:
            return f.read()[-3000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def cluster(certs):
    """make(redis, *extra_args) -> a started daemon using `redis` as its shared tier."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    started, roots, redises = [], [], []

    def make(redis, *extra):
        root = short_tempdir("tccd-tls-tier-")
        roots.append(root)
        d = Daemon(TCCD_BINARY, root, extra_args=[
            "--shared-cache", redis.url, "--compile-threads", "2", *extra])
        d.start()
        started.append(d)
        return d

    def redis(auth_clients=False):
        r = TlsRedis(certs, auth_clients)
        redises.append(r)
        return r

    yield make, redis
    try:
        for d in started:
            if d.alive():
                assert d.stop() == 0, d.log_tail()
    finally:
        for r in redises:
            r.stop()
        for root in roots:
            shutil.rmtree(root, ignore_errors=True)


def _request(n: int):
    def f(x, y):
        return torch.sigmoid(x * y) + torch.tanh(x) * n

    (_, gm, inputs), = capture_aot_graphs(f, torch.randn(8, 16 + n), torch.randn(16 + n))
    return build_request(gm, inputs, graph_name="tls", job_id="tls-tier-test")


def test_two_daemons_share_entries_over_tls(cluster, certs):
    make, redis = cluster
    r = redis()
    ca = ["--shared-cache-tls-ca", os.path.join(certs, "good-ca.pem")]
    a, b = make(r, *ca), make(r, *ca)
    request = _request(1)
    assert not a.stub().Compile(request, timeout=120).cache_hit
    assert a.stats()["shared_publishes"] == 1, a.log_tail()
    assert b.stub().Compile(request, timeout=120).cache_hit
    stats = b.stats()
    assert stats["compiles"] == 0, stats
    assert stats["shared_hits"] == 1, stats
    assert stats["shared_errors"] == 0, stats


def test_a_redis_signed_by_another_ca_is_refused_and_the_daemon_works_locally(cluster, certs):
    make, redis = cluster
    r = redis()
    d = make(r, "--shared-cache-tls-ca", os.path.join(certs, "other-ca.pem"))
    response = d.stub().Compile(_request(2), timeout=120)
    assert not response.cache_hit
    stats = d.stats()
    assert stats["compiles"] == 1 and stats["shared_publishes"] == 0, stats
    assert stats["shared_errors"] >= 1, stats
    assert "certificate verify failed" in d.log_tail(100_000), d.log_tail()


def test_a_redis_that_requires_client_certificates(cluster, certs):
    make, redis = cluster
    r = redis(auth_clients=True)
    ca = ["--shared-cache-tls-ca", os.path.join(certs, "good-ca.pem")]
    without = make(r, *ca)
    without.stub().Compile(_request(3), timeout=120)
    stats = without.stats()
    assert stats["shared_publishes"] == 0 and stats["shared_errors"] >= 1, (stats, without.log_tail())
    assert "does Redis require a client certificate?" in without.log_tail(100_000)
    with_cert = make(r, *ca, "--shared-cache-tls-cert", os.path.join(certs, "client.pem"),
                     "--shared-cache-tls-key", os.path.join(certs, "client.key"))
    with_cert.stub().Compile(_request(4), timeout=120)
    stats = with_cert.stats()
    assert stats["shared_publishes"] == 1 and stats["shared_errors"] == 0, with_cert.log_tail()


def test_unusable_tls_files_are_a_startup_error(certs, tmp_path):
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    base = [str(TCCD_BINARY), "--listen", f"unix:{tmp_path}/s.sock", "--cache-dir",
            str(tmp_path / "db")]
    out = subprocess.run(base + ["--shared-cache", "rediss://127.0.0.1:1",
                                 "--shared-cache-tls-ca", str(tmp_path / "missing.pem")],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 1, out.stderr
    assert "--shared-cache-tls-ca" in out.stderr
    out = subprocess.run(base + ["--shared-cache", "redis://127.0.0.1:1",
                                 "--shared-cache-tls-ca", os.path.join(certs, "good-ca.pem")],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 2, out.stderr
    assert "rediss://" in out.stderr
