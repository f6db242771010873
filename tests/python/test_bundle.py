"""The release bundle (deploy/bundle.sh): a relocatable tarball that runs without the build's
shared libraries.

One bundle is built per module from the built daemon (build/bin/tccd, or $TCCD_TEST_BINARY) and
unpacked into a temp dir; the tests then check that every dependency the loader resolves, other
than glibc's own libraries, comes from the bundle's lib/, and run the unpacked daemon: it serves
GetStats on a private unix socket and exits 0 on SIGTERM. Building the bundle (xz -9 of ~200 MB)
takes minutes, hence `slow`. Skipped, saying so, when the daemon has not been built.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUNDLE_SH = REPO / "deploy" / "bundle.sh"
TCCD_BINARY = Path(os.environ.get("TCCD_TEST_BINARY") or REPO / "build" / "bin" / "tccd")
BUNDLE_TIMEOUT_S = 1800  # xz -9 on two busy cores
MAX_BUNDLE_BYTES = 64 << 20  # the channel to the GPU machines

# glibc's own libraries and the vdso: always the target machine's, never bundled.
_SYSTEM_LIB = re.compile(
    r"^(linux-vdso|linux-gate|ld-linux[^/]*|ld64|libc|libm|libmvec|libpthread|libdl|librt|"
    r"libresolv|libutil|libanl|libnsl|libBrokenLocale|libthread_db|libc_malloc_debug|libnss_\w+)"
    r"\.so(\.|$)"
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not TCCD_BINARY.exists(),
        reason=f"tccd binary not found at {TCCD_BINARY}: build it first "
        "(cmake -S . -B build -G Ninja && cmake --build build) or set TCCD_TEST_BINARY",
    ),
]


def _clean_env() -> dict:
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    env.pop("LD_PRELOAD", None)
    return env


def _ldd(path: Path) -> list:
    """[(name, resolved path or None)] as the loader resolves them, without LD_LIBRARY_PATH."""
    out = subprocess.run(
        ["ldd", str(path)], env=_clean_env(), capture_output=True, text=True, timeout=60, check=True
    ).stdout
    deps = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>":
            deps.append((parts[0], None if parts[2] == "not" else parts[2]))
        elif parts and ".so" in parts[0]:
            deps.append((os.path.basename(parts[0]), parts[0]))
    return deps


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """(tarball, unpacked bundle root), built once for this module."""
    work = tmp_path_factory.mktemp("bundle")
    tarball = work / "x.tar.xz"
    build_dir = TCCD_BINARY.resolve().parent.parent
    started = time.monotonic()
    proc = subprocess.run(
        ["bash", str(BUNDLE_SH), "--build-dir", str(build_dir), "--out", str(tarball)],
        capture_output=True,
        text=True,
        timeout=BUNDLE_TIMEOUT_S,
    )
    took = time.monotonic() - started
    assert proc.returncode == 0, (
        f"deploy/bundle.sh failed ({proc.returncode}) after {took:.0f}s:\n"
        f"{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
    )
    assert proc.stdout.strip().splitlines()[-1] == str(tarball), proc.stdout
    assert "check passed" in proc.stderr, proc.stderr[-4000:]
    unpacked = work / "unpacked"
    unpacked.mkdir()
    subprocess.run(["tar", "-xJf", str(tarball), "-C", str(unpacked)], check=True, timeout=600)
    (root,) = list(unpacked.iterdir())
    return tarball, root


def test_tarball_name_and_size(bundle):
    tarball, root = bundle
    assert re.fullmatch(r"tccd-\d+\.\d+\.\d+[\w.+~-]*-linux-x86_64", root.name), root.name
    size = tarball.stat().st_size
    assert size < MAX_BUNDLE_BYTES, f"bundle is {size / 2**20:.1f} MiB, over 64 MiB"


def test_layout(bundle):
    _, root = bundle
    assert os.access(root / "bin" / "tccd", os.X_OK)
    assert (root / "README").is_file()
    unit = (root / "share" / "tccd" / "tccd.service").read_text()
    assert "ExecStart=/opt/tccd/bin/tccd --listen unix:/run/tccd/tccd.sock" in unit
    assert unit == (REPO / "deploy" / "tccd.service").read_text()
    libs = {p.name for p in (root / "lib").iterdir()}
    # The C++ runtime is bundled (the target's may be older); glibc never is.
    assert {"libstdc++.so.6", "libgcc_s.so.1", "libLLVM-16.so.1"} <= libs, sorted(libs)
    assert not [n for n in libs if _SYSTEM_LIB.match(n)], sorted(libs)
    # Real files under their SONAME, not symlinks.
    assert not [n for n in libs if (root / "lib" / n).is_symlink()]
    # Debug info is stripped (the symbol table stays for backtraces): a bundle that kept it was
    # ~5 MiB larger compressed and its tccd 47 MB instead of 14.
    sections = subprocess.run(
        ["readelf", "-SW", str(root / "bin" / "tccd")], capture_output=True, text=True, check=True
    ).stdout
    assert ".debug_info" not in sections
    assert ".symtab" in sections
    # SHA256SUMS covers every file and matches.
    subprocess.run(["sha256sum", "--quiet", "-c", "SHA256SUMS"], cwd=root, check=True, timeout=120)


def test_every_dependency_resolves_inside_the_bundle(bundle):
    _, root = bundle
    lib_dir = (root / "lib").resolve()
    bad = []
    for f in [root / "bin" / "tccd", *sorted((root / "lib").iterdir())]:
        for name, path in _ldd(f):
            if _SYSTEM_LIB.match(name):
                continue
            if path is None:
                bad.append(f"{f.name}: {name} not found")
            elif Path(path).resolve().parent != lib_dir:
                bad.append(f"{f.name}: {name} -> {Path(path).resolve()}")
    assert not bad, "dependencies outside the bundle:\n" + "\n".join(bad)
    runpath = subprocess.run(
        ["readelf", "-d", str(root / "bin" / "tccd")], capture_output=True, text=True, check=True
    ).stdout
    assert "(RUNPATH)" in runpath and "[$ORIGIN/../lib]" in runpath, runpath


def _get_stats(address: str, timeout_s: float) -> dict:
    """GetStats over gRPC through the generated stubs; the gRPC health check when the stubs are
    not importable. Raises when the daemon does not answer."""
    import grpc

    with grpc.insecure_channel(address) as channel:
        try:
            from tccd.v1 import tccd_pb2, tccd_pb2_grpc
        except ImportError:
            check = channel.unary_unary("/grpc.health.v1.Health/Check")
            reply = check(b"", timeout=timeout_s)  # HealthCheckRequest{} -> {status: SERVING}
            assert reply == b"\x08\x01", reply
            return {}
        stub = tccd_pb2_grpc.TccdStub(channel)
        return dict(stub.GetStats(tccd_pb2.StatsRequest(), timeout=timeout_s).counters)


def test_unpacked_daemon_serves_and_stops_on_sigterm(bundle):
    _, root = bundle
    run = tempfile.mkdtemp(prefix="tccd-bundle-", dir="/tmp")  # socket paths are <= 107 bytes
    sock = os.path.join(run, "s.sock")
    log_path = os.path.join(run, "tccd.log")
    proc = None
    try:
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [str(root / "bin" / "tccd"), "--listen", f"unix:{sock}",
                 "--cache-dir", os.path.join(run, "db")],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=_clean_env(),
                cwd=run,
            )

        def log_tail() -> str:
            with open(log_path, "rb") as f:
                return f.read()[-4000:].decode("utf-8", "replace")

        deadline = time.monotonic() + 60
        stats, why = None, "socket not created"
        while time.monotonic() < deadline:
            assert proc.poll() is None, f"tccd exited with {proc.returncode}:\n{log_tail()}"
            if os.path.exists(sock):
                try:
                    stats = _get_stats(f"unix:{sock}", timeout_s=5)
                    break
                except Exception as e:  # not serving yet
                    why = repr(e)
            time.sleep(0.1)
        assert stats is not None, f"the unpacked tccd did not answer in 60 s ({why}):\n{log_tail()}"

        proc.send_signal(signal.SIGTERM)
        try:
            status = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"tccd ignored SIGTERM for 60 s:\n{log_tail()}")
        assert status == 0, f"tccd exited with {status} on SIGTERM:\n{log_tail()}"
        assert not os.path.exists(sock), "tccd left its socket file behind"
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(run, ignore_errors=True)
