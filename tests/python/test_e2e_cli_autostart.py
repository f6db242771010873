"""End to end: the CLI against the real daemon, and auto-starting a daemon (also under a race)."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings

import pytest
import torch

import tccd
from conftest import TCCD_BINARY, short_tempdir
from tccd import channel

PY = sys.executable


def _cli(*argv, env=None):
    return subprocess.run([PY, "-m", "tccd", *argv], capture_output=True, text=True, timeout=60,
                          env=env or os.environ.copy())


def test_stats_json_has_integer_counters(daemon):
    r = _cli("stats", "--json", "--address", daemon.address)
    assert r.returncode == 0, r.stderr
    stats = json.loads(r.stdout)
    for key in ("compiles", "cache_hits", "cache_misses"):
        assert isinstance(stats[key], int) and stats[key] >= 0, key
    assert isinstance(stats["uptime_ms"], int)
    assert stats["tccd_version"] and stats["cache_dir"] == daemon.db


def test_stats_table_and_ping(daemon):
    r = _cli("--address", daemon.address, "stats")
    assert r.returncode == 0, r.stderr
    assert "compiles" in r.stdout and "cache_hits" in r.stdout
    r = _cli("--address", daemon.address, "ping")
    assert r.returncode == 0 and "answers" in r.stdout


def test_job_lists_what_the_job_used(daemon_env):
    compiled = torch.compile(lambda x: torch.sigmoid(x) * 3, backend="tccd")
    compiled(torch.randn(6))
    keys = [s["key"] for s in tccd.last_compile_stats()]
    assert keys and all(keys)
    r = _cli("job", daemon_env["TCCD_JOB_ID"], "--json", "--address", daemon_env["TCCD_ADDRESS"])
    assert r.returncode == 0, r.stderr
    entries = json.loads(r.stdout)["entries"]
    assert set(keys) <= {e["key"] for e in entries}
    r = _cli("job", "no-such-job-" + str(os.getpid()), "--address", daemon_env["TCCD_ADDRESS"])
    assert r.returncode == 0 and "no entries" in r.stdout


def _stop_pid(pid):
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(300):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)


@pytest.fixture
def autostart_env(tmp_path, monkeypatch):
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-auto-")
    env = {
        "TCCD_ADDRESS": f"unix:{root}/sub/tccd.sock",
        "TCCD_BINARY": str(TCCD_BINARY),
        "TCCD_CACHE_DIR": str(tmp_path / "client"),
        # The started daemon uses its default database: keep it out of the real home.
        "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    tccd.config.reload()
    yield env
    shutil.rmtree(root, ignore_errors=True)


def test_backend_starts_a_daemon_when_none_answers(autostart_env):
    started_before = len(channel._started)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", tccd.TccdFallbackWarning)
            compiled = torch.compile(lambda x: torch.tanh(x) + 1, backend="tccd")
            x = torch.randn(5)
            torch.testing.assert_close(compiled(x), torch.tanh(x) + 1)
        assert channel.ping(autostart_env["TCCD_ADDRESS"]) is None
        assert len(channel._started) == started_before + 1
        assert os.path.exists(os.path.join(autostart_env["TCCD_CACHE_DIR"], "daemon.log"))
        assert os.path.isdir(os.path.join(autostart_env["XDG_CACHE_HOME"], "tccd", "db"))
    finally:
        for proc in channel._started[started_before:]:
            _stop_pid(proc.pid)
            proc.wait(timeout=30)


def test_concurrent_starts_end_with_one_daemon(autostart_env):
    env = os.environ.copy()
    procs = [subprocess.Popen([PY, "-m", "tccd", "start"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(3)]
    outs = [p.communicate(timeout=120) for p in procs]
    pids = []
    try:
        for p, (out, err) in zip(procs, outs):
            assert p.returncode == 0, err
        started = [o for o, _ in outs if "started" in o]
        for o in started:
            pids.append(int(o.split("(pid ")[1].split(")")[0]))
        assert len(started) == 1, outs
        assert sum("already running" in o or "another daemon answered" in o for o, _ in outs) == 2
        assert channel.ping(autostart_env["TCCD_ADDRESS"]) is None
    finally:
        for pid in pids:
            _stop_pid(pid)
