"""Shared fixtures of the Python client tests.

Unit tests need no daemon: `client_env` isolates the client (own cache dir, an address nothing
listens on, no binary to auto-start). End-to-end tests (test_e2e_*.py) use the session fixture
`daemon`, a real tccd from build/bin/tccd (or $TCCD_TEST_BINARY) on a private socket and
database; they are skipped, saying so, only when that binary does not exist.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, Optional

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes minutes (e.g. building the release bundle)")

REPO = Path(__file__).resolve().parents[2]
TESTS_DIR = Path(__file__).resolve().parent
# Read at import, before the per-test fixture clears the TCCD_* knobs (tests/run_all.sh exports
# TCCD_BINARY for its build directory).
TCCD_BINARY = Path(
    os.environ.get("TCCD_TEST_BINARY")
    or os.environ.get("TCCD_BINARY")
    or REPO / "build" / "bin" / "tccd"
)

# TCCD_EAGER_WHILE_COMPILING (off by default): most end-to-end tests check what a graph's first
# call did (its plan ran, its record is there), so they run with it off whatever the shell says;
# the tests of the behaviour (test_e2e_async_compile.py) set it themselves.
# TCCD_TEST_EAGER_WHILE_COMPILING=1 in the environment runs the whole suite with it on.
EAGER_WHILE_COMPILING = os.environ.get("TCCD_TEST_EAGER_WHILE_COMPILING", "0")

# Knobs a developer's shell might have set; every test starts without them.
_CLIENT_KNOBS = (
    "TCCD_ADDRESS",
    "TCCD_TOKEN",
    "TCCD_TOKEN_FILE",
    "TCCD_TLS_CA",
    "TCCD_TLS_CERT",
    "TCCD_TLS_KEY",
    "TCCD_JOB_ID",
    "TCCD_RANK",
    "TCCD_STRICT",
    "TCCD_BINARY",
    "TCCD_NO_AUTOSTART",
    "TCCD_CACHE_DIR",
    "TCCD_LOCAL_CACHE",
    "TCCD_AOT_CACHE",
    "TCCD_TIMEOUT_S",
    "TCCD_MAX_CONSTANT_MB",
    "TCCD_PARTITIONER",
    "TCCD_NATIVE_RUNTIME",
    "TCCD_PROGRESS_AFTER_S",
    "TCCD_AOT_SHARE",
    "TCCD_LOG_SOFTMAX_LSE",
    "TCCD_PATCHIFY_GEMM",
    "TCCD_PREFETCH_BACKWARD",
    "TCCD_CONV_WARMUP",
    "TCCD_WAIT_CONV_WARMUP",
    "TCCD_DEFER_BACKWARD_INIT",
    "TCCD_DYNAMIC_PROFILES",
    "TCCD_GEMM_TUNES_SHARED",
    "TCCD_EAGER_WHILE_COMPILING",
    "TCCD_AOT_SETTLE_TRACE_LOG",
    "TCCD_TRACE_ONCE_LOGS",
    "TCCD_CACHING_PRECOMPILE",
    "TCCD_CUDAGRAPH_ZERO_TANGENTS",
    "TCCD_PLAN_ZERO_TANGENTS",
)


def short_tempdir(prefix: str) -> str:
    """A temp dir with a short path: unix socket paths must fit in 108 bytes."""
    return tempfile.mkdtemp(prefix=prefix, dir="/tmp")


@pytest.fixture(autouse=True)
def _fresh_client_state(monkeypatch):
    for knob in _CLIENT_KNOBS:
        monkeypatch.delenv(knob, raising=False)
    monkeypatch.setenv("TCCD_EAGER_WHILE_COMPILING", EAGER_WHILE_COMPILING)
    import tccd
    from tccd import config

    config.reload()
    tccd.reset_compile_stats()
    yield
    if "torch._dynamo" in sys.modules:
        import torch._dynamo

        torch._dynamo.reset()


@pytest.fixture
def client_env(tmp_path, monkeypatch) -> Dict[str, str]:
    """The client pointed at nothing: a dead socket, no binary, a private local cache."""
    sock_dir = short_tempdir("tccd-dead-")
    env = {
        "TCCD_ADDRESS": f"unix:{sock_dir}/nobody.sock",
        "TCCD_BINARY": str(tmp_path / "no-such-tccd"),
        "TCCD_CACHE_DIR": str(tmp_path / "client-cache"),
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    from tccd import config

    config.reload()
    yield env
    shutil.rmtree(sock_dir, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# The real daemon
# ---------------------------------------------------------------------------------------------


class Daemon:
    """A tccd process on a private socket and database; restartable on the same database."""

    def __init__(self, binary: Path, root: str, extra_args=(), db: str = "", env: Optional[Dict[str, str]] = None):
        self.binary = binary
        self.extra_args = list(extra_args)
        self.env = dict(env or {})  # set in the daemon's environment only (TCCD_DISABLE_PASSES, ...)
        self.root = root
        self.socket = os.path.join(root, "tccd.sock")
        self.address = f"unix:{self.socket}"
        self.db = db or os.path.join(root, "db")
        self.log = os.path.join(root, "tccd.log")
        self.proc = None

    def start(self, timeout_s: float = 30.0) -> None:
        from tccd import channel

        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [str(self.binary), "--listen", self.address, "--cache-dir", self.db]
                + self.extra_args,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, **self.env} if self.env else None,
            )
        deadline = time.monotonic() + timeout_s
        why = "not started"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"tccd exited with {self.proc.returncode}:\n{self.log_tail()}")
            why = channel.ping(self.address, timeout_s=1.0)
            if why is None:
                return
            time.sleep(0.05)
        raise RuntimeError(f"tccd did not answer within {timeout_s}s ({why}):\n{self.log_tail()}")

    def stop(self) -> int:
        """SIGTERM, as a service manager would; returns the exit status."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError(f"tccd ignored SIGTERM for 30s:\n{self.log_tail()}")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def restart(self) -> None:
        self.stop()
        self.start()

    def log_tail(self, limit: int = 4000) -> str:
        try:
            with open(self.log, "rb") as f:
                return f.read()[-limit:].decode("utf-8", "replace")
        except OSError:
            return ""

    def stub(self):
        from tccd import channel

        return channel.stub_for(self.address)

    def stats(self) -> Dict[str, int]:
        from tccd.v1 import tccd_pb2 as pb

        return dict(self.stub().GetStats(pb.StatsRequest(), timeout=10).counters)


@pytest.fixture(scope="session")
def daemon():
    if not TCCD_BINARY.exists():
        pytest.skip(
            f"tccd binary not found at {TCCD_BINARY}: build it first "
            "(cmake -S . -B build && cmake --build build) or set TCCD_TEST_BINARY"
        )
    root = short_tempdir("tccd-e2e-")
    d = Daemon(TCCD_BINARY, root)
    d.start()
    yield d
    status = d.stop()
    shutil.rmtree(root, ignore_errors=True)
    assert status == 0, f"tccd exited with status {status} on SIGTERM"


@pytest.fixture
def daemon_env(daemon, tmp_path, monkeypatch, request) -> Dict[str, str]:
    """The client pointed at the session daemon, with a fresh local cache and job id."""
    if not daemon.alive():
        daemon.start()
    env = {
        "TCCD_ADDRESS": daemon.address,
        "TCCD_CACHE_DIR": str(tmp_path / "client-cache"),
        "TCCD_JOB_ID": f"test-{request.node.name}-{os.getpid()}",
        "TCCD_NO_AUTOSTART": "1",
        # The session daemon outlives each test: AOT recipes shared through it would let one
        # test's graphs skip AOTAutograd in another. Sharing is tested with daemons of their own
        # (test_e2e_aot_share.py).
        "TCCD_AOT_SHARE": "0",
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    from tccd import config

    config.reload()
    return env


@pytest.fixture
def plans(monkeypatch):
    """The wire plans (tccd.v1.Plan) of every graph loaded from now on (tccd.compiler.load_plan
    spied on)."""
    from tccd import compiler

    loaded = []
    original = compiler.load_plan

    def spy(plan, *args, **kwargs):
        loaded.append(plan)
        return original(plan, *args, **kwargs)

    monkeypatch.setattr(compiler, "load_plan", spy)
    return loaded
