"""End to end (CPU): a long compile says where it is; a fast one says nothing (issue 11 item 5).

The slow compile is made slow on purpose: TCCD_TEST_KERNEL_DELAY_MS (test only, read by the
daemon's compile workers, codegen/kernel/compile_progress.h) sleeps before each kernel counts as
done, and TCCD_KERNEL_THREADS=1 compiles the graph's kernels one after another. The client prints
its progress line after TCCD_PROGRESS_AFTER_S, the daemon logs its own after --progress-log-s.
"""

import re
import shutil

import pytest
import torch

from conftest import TCCD_BINARY, Daemon, short_tempdir
from tccd import compiler, config
from tccd.serialize import build_request
from tccd.stats import GraphRecord
from tccd.v1 import tccd_pb2 as pb
from tccd_testlib import capture_aot_graphs


def three_kernels(x, y, w):
    # Two matmuls (extern steps on the CPU) split the pointwise work into three kernels.
    a = torch.tanh(x * y) @ w
    b = torch.sigmoid(a) * 2 @ w.t()
    return torch.relu(b) + 3


def _request(name):
    torch.manual_seed(0)
    inputs = (torch.randn(8, 16), torch.randn(16), torch.randn(16, 4))
    (_, gm, example), = capture_aot_graphs(three_kernels, *inputs)
    return build_request(gm, example, graph_name=name, job_id="progress-test")


def _daemon(monkeypatch, delay_ms):
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    monkeypatch.setenv("TCCD_KERNEL_THREADS", "1")
    if delay_ms:
        monkeypatch.setenv("TCCD_TEST_KERNEL_DELAY_MS", str(delay_ms))
    root = short_tempdir("tccd-progress-")
    d = Daemon(TCCD_BINARY, root, extra_args=["--progress-log-s=1"])
    d.start()
    return d, root


def _client(monkeypatch, d, tmp_path, after_s):
    monkeypatch.setenv("TCCD_ADDRESS", d.address)
    monkeypatch.setenv("TCCD_NO_AUTOSTART", "1")
    monkeypatch.setenv("TCCD_CACHE_DIR", str(tmp_path / "client-cache"))
    monkeypatch.setenv("TCCD_PROGRESS_AFTER_S", str(after_s))
    return config.reload()


@pytest.fixture
def stop_daemons():
    started = []
    yield started
    for d, root in started:
        try:
            assert d.stop() == 0, d.log_tail()
        finally:
            shutil.rmtree(root, ignore_errors=True)


def test_a_slow_compile_prints_one_progress_line_and_the_daemon_logs_it(
    monkeypatch, tmp_path, capfd, stop_daemons
):
    d, root = _daemon(monkeypatch, delay_ms=1500)
    stop_daemons.append((d, root))
    cfg = _client(monkeypatch, d, tmp_path, after_s=1)
    record = GraphRecord(name="slow-graph", kind="forward")
    plan = compiler.compile_request(_request("slow-graph"), cfg, record)
    assert plan is not None and not record.cache_hit

    err = capfd.readouterr().err
    lines = [l for l in err.splitlines() if l.startswith("tccd: compiling graph")]
    # ~4.5 s of kernels, first line after 1 s, the next 30 s later: exactly one.
    assert len(lines) == 1, err
    m = re.fullmatch(r'tccd: compiling graph "slow-graph" \(key ([0-9a-f]{12})\): '
                     r"(\d+)/(\d+) kernels, (\d+\.\d) s", lines[0])
    assert m, lines[0]
    assert int(m.group(3)) == 3 and int(m.group(2)) < 3, lines[0]
    assert float(m.group(4)) >= 1.0
    assert record.key.startswith(m.group(1))

    log = open(d.log, encoding="utf-8", errors="replace").read()
    logged = re.findall(r'compiling graph "slow-graph" key=([0-9a-f]{12}): (\d+)/3 kernels, (\d+\.\d) s', log)
    assert len(logged) == 1, log[-3000:]
    assert logged[0][0] == m.group(1) and float(logged[0][2]) >= 1.0


def test_a_fast_compile_prints_no_progress_line(monkeypatch, tmp_path, capfd, stop_daemons):
    d, root = _daemon(monkeypatch, delay_ms=0)
    stop_daemons.append((d, root))
    cfg = _client(monkeypatch, d, tmp_path, after_s=5)
    record = GraphRecord(name="fast-graph", kind="forward")
    compiler.compile_request(_request("fast-graph"), cfg, record)
    assert not record.cache_hit and record.key

    assert "tccd: compiling graph" not in capfd.readouterr().err
    assert 'compiling graph "fast-graph"' not in open(d.log, encoding="utf-8", errors="replace").read()


def test_progress_of_an_unknown_call_is_not_known(monkeypatch, stop_daemons):
    d, root = _daemon(monkeypatch, delay_ms=0)
    stop_daemons.append((d, root))
    answer = d.stub().GetCompileProgress(pb.CompileProgressRequest(progress_id="nobody"), timeout=10)
    assert not answer.known and answer.kernels_total == 0
