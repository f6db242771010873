"""End to end: tccd speaks systemd's Type=notify protocol (READY, STOPPING, WATCHDOG).

The test plays systemd: it binds a unix datagram socket, starts the real tccd with NOTIFY_SOCKET
(and WATCHDOG_USEC) pointing at it, and reads what arrives. READY=1 must come only once the
daemon answers on its socket, STOPPING=1 when SIGTERM arrives, WATCHDOG=1 every half
WatchdogSec. The unit file is checked with systemd-analyze verify where it is installed.
"""

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import List

import pytest

from conftest import TCCD_BINARY, Daemon, short_tempdir

REPO = Path(__file__).resolve().parents[2]


def _receive(sock: socket.socket, want: str, timeout_s: float) -> List[str]:
    """Messages up to and including the first with the line `want`; fails after timeout_s."""
    got: List[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            message = sock.recv(4096).decode()
        except socket.timeout:
            break
        got.append(message)
        if want in message.splitlines():
            return got
    raise AssertionError(f"no {want} within {timeout_s}s; got {got}")


@pytest.fixture
def notify(monkeypatch):
    """(socket systemd would read, daemon root); NOTIFY_SOCKET set for daemons started here."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-notify-")
    path = os.path.join(root, "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    yield sock, root
    sock.close()
    shutil.rmtree(root, ignore_errors=True)


def test_ready_after_the_listeners_are_up_and_stopping_on_sigterm(notify):
    sock, root = notify
    d = Daemon(TCCD_BINARY, root)
    # Not Daemon.start(): that waits for the socket itself; here READY=1 must be what says so.
    with open(d.log, "ab") as log:
        d.proc = subprocess.Popen([str(TCCD_BINARY), "--listen", d.address, "--cache-dir", d.db],
                                  stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        ready = _receive(sock, "READY=1", timeout_s=30)
        assert any(line.startswith("STATUS=serving on unix:") for line in ready[-1].splitlines())
        from tccd import channel

        assert channel.ping(d.address, timeout_s=5.0) is None  # READY meant it: it answers
        d.proc.send_signal(signal.SIGTERM)
        stopping = _receive(sock, "STOPPING=1", timeout_s=30)
        assert "WATCHDOG=1" not in "\n".join(stopping)  # no WatchdogSec, no pings
        assert d.proc.wait(timeout=30) == 0, d.log_tail()
    finally:
        if d.alive():
            d.proc.kill()
            d.proc.wait()


def test_watchdog_pings_every_half_watchdog_sec(notify, monkeypatch):
    sock, root = notify
    monkeypatch.setenv("WATCHDOG_USEC", "400000")  # WatchdogSec=0.4: a ping every 0.2 s
    d = Daemon(TCCD_BINARY, root)
    d.start()
    try:
        _receive(sock, "READY=1", timeout_s=30)
        start = time.monotonic()
        for _ in range(5):
            _receive(sock, "WATCHDOG=1", timeout_s=2)
        elapsed = time.monotonic() - start
        assert 0.6 < elapsed < 3.0, elapsed
        assert d.stop() == 0, d.log_tail()
        _receive(sock, "STOPPING=1", timeout_s=5)
    finally:
        if d.alive():
            d.proc.kill()
            d.proc.wait()


def test_a_watchdog_meant_for_another_process_is_ignored(notify, monkeypatch):
    sock, root = notify
    monkeypatch.setenv("WATCHDOG_USEC", "200000")
    monkeypatch.setenv("WATCHDOG_PID", "1")  # systemd set it for someone else
    d = Daemon(TCCD_BINARY, root)
    d.start()
    try:
        _receive(sock, "READY=1", timeout_s=30)
        sock.settimeout(1.0)
        with pytest.raises(socket.timeout):
            sock.recv(4096)
    finally:
        assert d.stop() == 0, d.log_tail()


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
def test_the_unit_file_verifies(tmp_path):
    unit = (REPO / "deploy" / "tccd.service").read_text()
    assert "Type=notify" in unit
    assert "WatchdogSec=" in unit
    # verify checks that ExecStart's binary exists: point it at this build's tccd.
    (tmp_path / "tccd.service").write_text(unit.replace("/opt/tccd/bin/tccd", str(TCCD_BINARY)))
    out = subprocess.run(["systemd-analyze", "verify", str(tmp_path / "tccd.service")],
                         capture_output=True, text=True, timeout=60)
    problems = [line for line in (out.stdout + out.stderr).splitlines()
                if "tccd.service" in line]
    assert out.returncode == 0 and not problems, out.stdout + out.stderr
