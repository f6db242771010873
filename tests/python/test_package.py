"""Packaging: backend registration, light import, the CLI's error path."""

import json
import os
import subprocess
import sys

import pytest

PY = sys.executable


def _run(code, env=None):
    return subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def test_entry_point_registers_backend_without_import():
    r = _run("import sys, torch\n"
             "from torch._dynamo.backends.registry import lookup_backend, list_backends\n"
             "fn = lookup_backend('tccd')\n"
             "assert 'tccd' in list_backends(), list_backends()\n"
             "print(fn.__module__, fn.__name__)\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["tccd.backend", "tccd"]


def test_import_tccd_registers_backend_and_entry_point_still_works():
    r = _run("import torch, tccd\n"
             "from torch._dynamo.backends.registry import lookup_backend, list_backends\n"
             "assert lookup_backend('tccd') is tccd.tccd\n"
             "assert 'tccd' in list_backends()\n"
             "tccd.register()\n"
             "print('ok')\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_import_is_light():
    r = _run("import sys, tccd\n"
             "print(json.dumps(sorted(m for m in ('grpc', 'torch', 'google.protobuf') if m in sys.modules)))\n"
             .replace("import sys", "import sys, json"))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == []


@pytest.mark.parametrize("argv", [["stats", "--json"], ["job", "x"], ["ping"]])
def test_cli_reports_unreachable_daemon_on_stderr(argv, tmp_path):
    r = subprocess.run([PY, "-m", "tccd", "--address", f"unix:{tmp_path}/none.sock", *argv],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert r.stdout == ""
    assert "none.sock" in r.stderr


def test_cli_start_without_binary_fails_clearly(tmp_path):
    env = {**os.environ, "TCCD_BINARY": str(tmp_path / "missing"), "TCCD_CACHE_DIR": str(tmp_path)}
    r = subprocess.run([PY, "-m", "tccd", "start", "--address", f"unix:{tmp_path}/s.sock"],
                       capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 1
    assert "TCCD_BINARY" in r.stderr and "missing" in r.stderr
