"""deploy/bench_daemon.py: the one daemon harness the deploy/ benchmarks share."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import TCCD_BINARY

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
sys.path.insert(0, str(DEPLOY))

from bench_daemon import BenchDaemon  # noqa: E402

# Every script that used to carry a Daemon class of its own, and those that borrowed one.
USERS = ["bn_layout_bench", "column_bench", "embedding_backward_bench", "stack_permute_bench", "kernel_cache_bench",
         "warm_start_bench", "dynamic_profile_bench", "lm_head_bench", "peak_memory_probe"]


def test_starts_answers_and_cleans_up():
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    from tccd import channel
    from tccd.v1 import tccd_pb2 as pb

    with BenchDaemon(str(TCCD_BINARY), env={"TCCD_KERNEL_THREADS": "1"}, args=["--compile-threads", "1"]) as d:
        assert channel.ping(d.address, timeout_s=5.0) is None
        assert d.stub().GetStats(pb.StatsRequest(), timeout=10) is not None
        env = d.client_env({"PATH": "/bin"})
        assert env["TCCD_ADDRESS"] == d.address and env["TCCD_NO_AUTOSTART"] == "1"
        assert env["TCCD_CACHE_DIR"].startswith(d.root) and env["PATH"] == "/bin"
        root, proc = d.root, d.proc
    assert proc.returncode is not None and not os.path.exists(root)


def test_a_daemon_that_cannot_start_raises_and_keeps_its_log(tmp_path):
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    with pytest.raises(RuntimeError, match="did not start") as e:
        BenchDaemon(str(TCCD_BINARY), args=["--compile-nice", "20"], start_timeout_s=20)
    log = Path(str(e.value).rsplit("log: ", 1)[1])
    try:
        assert "--compile-nice=20" in log.read_text()
    finally:
        shutil.rmtree(log.parent, ignore_errors=True)


@pytest.mark.parametrize("script", USERS)
def test_benchmarks_use_it_and_keep_no_daemon_class_of_their_own(script):
    source = (DEPLOY / f"{script}.py").read_text()
    assert "BenchDaemon" in source and "class Daemon" not in source and "--listen" not in source
    subprocess.run([sys.executable, "-m", "py_compile", str(DEPLOY / f"{script}.py")], check=True)
