"""End to end: TLS, client certificates (mTLS) and bearer tokens (--tls-cert, --tls-key,
--tls-client-ca, --tokens), every cell of the auth matrix against the real daemon.

Certificates are made with the openssl CLI in a temp dir: CA "good" signs the server's
certificate (SAN 127.0.0.1) and a client certificate; CA "other" signs a second client
certificate that the daemon must refuse. The daemon listens on a unix socket and on a loopback
TCP port with TLS; calls go over TCP unless the test says otherwise.

Specified codes: no client certificate or one from another CA -> the TLS handshake fails,
UNAVAILABLE; no token or an unknown token -> UNAUTHENTICATED; a read token on a miss, a token of
another job prefix, a non-admin GetStats -> PERMISSION_DENIED (nothing compiled).
"""

import os
import shutil
import subprocess

import grpc
import pytest
import torch

from conftest import TCCD_BINARY, Daemon, short_tempdir
from redis_testlib import free_port
from tccd.serialize import build_request
from tccd.v1 import tccd_pb2 as pb
from tccd.v1 import tccd_pb2_grpc as pb_grpc
from tccd_testlib import capture_aot_graphs

TOKENS = {
    "compile": "c0mpile-token-0123456789abcdef",
    "read": "read-token-0123456789abcdef",
    "admin": "admin-token-0123456789abcdef",
    "team_a": "team-a-token-0123456789abcdef",
}


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _make_certs(d: str) -> None:
    for ca in ("good", "other"):
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                 f"/CN=tccd test CA {ca}", "-keyout", f"{ca}-ca.key", "-out", f"{ca}-ca.pem",
                 cwd=d)
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for name, ca, ext in (("server", "good", True), ("client", "good", False),
                          ("stranger", "other", False)):
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}",
                 "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=d)
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}-ca.pem", "-CAkey",
                 f"{ca}-ca.key", "-CAcreateserial", "-days", "2", "-out", f"{name}.pem",
                 *(["-extfile", "san.ext"] if ext else []), cwd=d)


@pytest.fixture(scope="module")
def secured():
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    if shutil.which("openssl") is None:
        pytest.skip("openssl CLI not installed")
    root = short_tempdir("tccd-auth-")
    certs = os.path.join(root, "certs")
    os.makedirs(certs)
    _make_certs(certs)
    tokens = os.path.join(root, "tokens")
    with open(tokens, "w") as f:
        f.write("# TOKEN ROLE [JOB_PREFIX]\n")
        f.write(f"{TOKENS['compile']} compile\n")
        f.write(f"{TOKENS['read']} read\n")
        f.write(f"{TOKENS['admin']} admin\n")
        f.write(f"{TOKENS['team_a']} compile team-a/\n")
    os.chmod(tokens, 0o600)
    port = free_port()
    d = Daemon(TCCD_BINARY, root, extra_args=[
        "--listen", f"127.0.0.1:{port}",
        "--tls-cert", os.path.join(certs, "server.pem"),
        "--tls-key", os.path.join(certs, "server.key"),
        "--tls-client-ca", os.path.join(certs, "good-ca.pem"),
        "--tokens", tokens])
    d.start()  # pings the unix socket: the health service needs no token
    d.tcp = f"127.0.0.1:{port}"
    d.certs = certs
    yield d
    try:
        assert d.stop() == 0, d.log_tail()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _tcp_stub(d, client="client", ca="good-ca.pem"):
    c = d.certs
    credentials = grpc.ssl_channel_credentials(
        root_certificates=_read(os.path.join(c, ca)),
        private_key=_read(os.path.join(c, f"{client}.key")) if client else None,
        certificate_chain=_read(os.path.join(c, f"{client}.pem")) if client else None)
    return pb_grpc.TccdStub(grpc.secure_channel(d.tcp, credentials))


def _md(name):
    return [("authorization", f"Bearer {TOKENS[name]}")] if name else []


def _request(n, job_id):
    def f(x, y):
        return torch.relu(x * y) - n

    (_, gm, inputs), = capture_aot_graphs(f, torch.randn(4, 8 + n), torch.randn(8 + n))
    return build_request(gm, inputs, graph_name=f"auth-{n}", job_id=job_id)


def _code(call):
    with pytest.raises(grpc.RpcError) as e:
        call()
    return e.value.code()


def _admin_stats(d):
    return dict(_tcp_stub(d).GetStats(pb.StatsRequest(), metadata=_md("admin"), timeout=10).counters)


def test_tokens_no_token_and_unknown_token_are_unauthenticated(secured):
    stub = _tcp_stub(secured)
    request = _request(1, "job-1")
    assert _code(lambda: stub.Compile(request, timeout=60)) == grpc.StatusCode.UNAUTHENTICATED
    assert _code(lambda: stub.Compile(request, metadata=[("authorization", "Bearer nope-0123456789abcdef")],
                                      timeout=60)) == grpc.StatusCode.UNAUTHENTICATED
    assert _code(lambda: stub.Compile(request, metadata=[("authorization", TOKENS["compile"])],
                                      timeout=60)) == grpc.StatusCode.UNAUTHENTICATED
    fetch = pb.FetchArtifactRequest(digest="0" * 64)
    assert _code(lambda: list(stub.FetchArtifact(fetch, timeout=10))) == \
        grpc.StatusCode.UNAUTHENTICATED
    assert _code(lambda: stub.GetStats(pb.StatsRequest(), timeout=10)) == \
        grpc.StatusCode.UNAUTHENTICATED
    assert _admin_stats(secured)["compiles"] == 0


def test_read_token_gets_hits_only(secured):
    stub = _tcp_stub(secured)
    request = _request(2, "job-2")
    before = _admin_stats(secured)["compiles"]
    assert _code(lambda: stub.Compile(request, metadata=_md("read"), timeout=60)) == \
        grpc.StatusCode.PERMISSION_DENIED
    assert _admin_stats(secured)["compiles"] == before, "a read token's miss compiles nothing"

    compiled = stub.Compile(request, metadata=_md("compile"), timeout=60)
    assert not compiled.cache_hit
    hit = stub.Compile(request, metadata=_md("read"), timeout=60)
    assert hit.cache_hit
    # Reading the artifacts is allowed to every role.
    data = b"".join(c.data for c in stub.FetchArtifact(
        pb.FetchArtifactRequest(digest=hit.manifest.artifacts[0].digest), metadata=_md("read"),
        timeout=10))
    assert len(data) == hit.manifest.artifacts[0].size


def test_job_prefix_limits_the_jobs_a_token_may_use(secured):
    stub = _tcp_stub(secured)
    assert _code(lambda: stub.Compile(_request(3, "team-b/run-1"), metadata=_md("team_a"),
                                      timeout=60)) == grpc.StatusCode.PERMISSION_DENIED
    assert _code(lambda: stub.Compile(_request(3, ""), metadata=_md("team_a"),
                                      timeout=60)) == grpc.StatusCode.PERMISSION_DENIED
    assert stub.Compile(_request(3, "team-a/run-1"), metadata=_md("team_a"), timeout=60)
    assert _code(lambda: stub.GetJob(pb.JobRequest(job_id="team-b/run-1"), metadata=_md("team_a"),
                                     timeout=10)) == grpc.StatusCode.PERMISSION_DENIED
    own = stub.GetJob(pb.JobRequest(job_id="team-a/run-1"), metadata=_md("team_a"), timeout=10)
    assert len(own.entries) == 1
    # admin: stats and every job.
    assert stub.GetJob(pb.JobRequest(job_id="team-a/run-1"), metadata=_md("admin"), timeout=10)
    assert _code(lambda: stub.GetStats(pb.StatsRequest(), metadata=_md("compile"), timeout=10)) \
        == grpc.StatusCode.PERMISSION_DENIED
    assert _admin_stats(secured)["cache_misses"] >= 1


def test_client_certificates_are_required_and_checked(secured):
    request = _request(4, "job-4")
    no_cert = _tcp_stub(secured, client=None)
    assert _code(lambda: no_cert.Compile(request, metadata=_md("compile"), timeout=10)) == \
        grpc.StatusCode.UNAVAILABLE
    other_ca = _tcp_stub(secured, client="stranger")
    assert _code(lambda: other_ca.Compile(request, metadata=_md("compile"), timeout=10)) == \
        grpc.StatusCode.UNAVAILABLE
    # A client that does not trust the daemon's CA refuses the daemon (no impersonation).
    wrong_trust = _tcp_stub(secured, ca="other-ca.pem")
    assert _code(lambda: wrong_trust.Compile(request, metadata=_md("compile"), timeout=10)) == \
        grpc.StatusCode.UNAVAILABLE
    # Plaintext to the TLS port fails too.
    plain = pb_grpc.TccdStub(grpc.insecure_channel(secured.tcp))
    assert _code(lambda: plain.Compile(request, metadata=_md("compile"), timeout=10)) == \
        grpc.StatusCode.UNAVAILABLE
    assert _tcp_stub(secured).Compile(request, metadata=_md("compile"), timeout=60)


def test_unix_socket_needs_a_token_too_when_tokens_are_configured(secured):
    stub = pb_grpc.TccdStub(grpc.insecure_channel(secured.address))
    request = _request(5, "job-5")
    assert _code(lambda: stub.Compile(request, timeout=60)) == grpc.StatusCode.UNAUTHENTICATED
    assert stub.Compile(request, metadata=_md("compile"), timeout=60)


def test_the_client_reads_token_and_tls_settings_from_the_environment(secured, monkeypatch,
                                                                       tmp_path):
    from tccd import channel, config

    token_file = tmp_path / "token"
    token_file.write_text(TOKENS["compile"] + "\n")
    monkeypatch.setenv("TCCD_TOKEN_FILE", str(token_file))
    monkeypatch.setenv("TCCD_TLS_CA", os.path.join(secured.certs, "good-ca.pem"))
    monkeypatch.setenv("TCCD_TLS_CERT", os.path.join(secured.certs, "client.pem"))
    monkeypatch.setenv("TCCD_TLS_KEY", os.path.join(secured.certs, "client.key"))
    config.reload()
    assert channel.ping(secured.tcp) is None
    response = channel.stub_for(secured.tcp).Compile(_request(6, "job-6"), timeout=60)
    assert response.manifest.key
    monkeypatch.setenv("TCCD_TOKEN", TOKENS["read"])  # TCCD_TOKEN wins over the file
    config.reload()
    assert channel.stub_for(secured.tcp).Compile(_request(6, "job-6"), timeout=60).cache_hit


def test_without_tokens_the_unix_socket_needs_none(daemon):
    # The session daemon: no --tokens, no TLS.
    stub = pb_grpc.TccdStub(grpc.insecure_channel(daemon.address))
    assert stub.GetStats(pb.StatsRequest(), timeout=10).counters["requests_total"] >= 1


def test_the_systemd_unit_does_not_make_the_socket_world_writable():
    from pathlib import Path

    unit = (Path(__file__).resolve().parents[2] / "deploy" / "tccd.service").read_text()
    settings = dict(line.split("=", 1) for line in unit.splitlines()
                    if "=" in line and not line.lstrip().startswith("#"))
    umask = int(settings["UMask"], 8)
    assert umask & 0o007 == 0o007, f"UMask={settings['UMask']}: others may connect"
    assert int(settings["RuntimeDirectoryMode"], 8) & 0o007 == 0
    assert settings.get("Group") == "tccd"


def test_every_method_needs_a_token_and_recipes_need_a_writer(secured):
    # The methods added for warm start (manifests by key, AOT recipes, compile progress) and the
    # identity call are behind the same tokens; storing a recipe is a write (not for read tokens).
    stub = _tcp_stub(secured)
    calls = {
        "GetInfo": lambda md: stub.GetInfo(pb.InfoRequest(), metadata=md, timeout=10),
        "GetManifest": lambda md: stub.GetManifest(pb.ManifestRequest(key="0" * 64), metadata=md, timeout=10),
        "GetAotRecipe": lambda md: stub.GetAotRecipe(pb.AotRecipeRequest(key="0" * 64), metadata=md, timeout=10),
        "GetCompileProgress": lambda md: stub.GetCompileProgress(pb.CompileProgressRequest(progress_id="x"),
                                                                 metadata=md, timeout=10),
        "PutAotRecipe": lambda md: stub.PutAotRecipe(pb.AotRecipe(key="0" * 64, recipe=b"{}"), metadata=md,
                                                     timeout=10),
    }
    for name, call in calls.items():
        assert _code(lambda: call([])) == grpc.StatusCode.UNAUTHENTICATED, name
    info = calls["GetInfo"](_md("read"))
    assert info.compiler_fingerprint and info.tccd_version
    assert _code(lambda: calls["PutAotRecipe"](_md("read"))) == grpc.StatusCode.PERMISSION_DENIED
    # A compile token may store (this recipe is refused on its merits: its plans do not exist).
    assert _code(lambda: calls["PutAotRecipe"](_md("compile"))) not in (
        grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)


def test_dynamic_profiles_writers_need_their_job_and_readers_may_read(secured):
    # Storing a profile is a write for the token's job prefix; reading one is allowed to every
    # token the job prefix allows, read tokens included (as GetJob).
    stub = _tcp_stub(secured)

    def put(token, job):
        profile = pb.DynamicProfile(job_id=job)
        frame = profile.frames.add(filename="/m.py", first_line=1, name="f", file_hash="h")
        entry = frame.entries.add(source="L['x']")
        entry.size.kind = pb.ProfileDims.DIMS
        entry.size.dims.add(kind=pb.ProfileAtom.DYNAMIC)
        return stub.PutDynamicProfile(profile, metadata=_md(token), timeout=10)

    def get(token, job):
        return stub.GetDynamicProfile(pb.DynamicProfileRequest(job_id=job), metadata=_md(token), timeout=10)

    assert _code(lambda: put(None, "team-a/p")) == grpc.StatusCode.UNAUTHENTICATED
    assert _code(lambda: get(None, "team-a/p")) == grpc.StatusCode.UNAUTHENTICATED
    assert _code(lambda: put("read", "team-a/p")) == grpc.StatusCode.PERMISSION_DENIED
    assert _code(lambda: put("team_a", "team-b/p")) == grpc.StatusCode.PERMISSION_DENIED
    assert _code(lambda: get("team_a", "team-b/p")) == grpc.StatusCode.PERMISSION_DENIED
    assert put("team_a", "team-a/p").puts == 1
    assert put("compile", "team-a/p").puts == 2
    assert get("read", "team-a/p").frames[0].entries[0].size.dims[0].kind == pb.ProfileAtom.DYNAMIC
    assert get("admin", "team-a/p").puts == 2
    assert _code(lambda: get("read", "team-a/none")) == grpc.StatusCode.NOT_FOUND
