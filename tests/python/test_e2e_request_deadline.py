"""End to end: the daemon bounds how long it works on a call even when the client sets no deadline.

A compile whose worker hangs (--enable-test-faults) is answered DEADLINE_EXCEEDED once
--request-deadline-s passes, long before the compile's own time limit; so is a single-flight
follower waiting on it; and the daemon keeps serving.
"""

import shutil
import threading

import grpc
import pytest
import torch

from conftest import TCCD_BINARY, Daemon, short_tempdir
from tccd.serialize import build_request
from tccd_testlib import capture_aot_graphs

DEADLINE_S = 2
# Far above DEADLINE_S, so that an answer before it can only come from the request deadline.
COMPILE_LIMIT_S = 12


def _request(n: int, fault: str = ""):
    def f(x, y):
        return torch.sigmoid(x * y) + n

    (_, gm, inputs), = capture_aot_graphs(f, torch.randn(3, 4 + n), torch.randn(4 + n))
    request = build_request(gm, inputs, graph_name=f"deadline-{n}", job_id="deadline-test")
    if fault:
        request.options.extra["tccd_test_fault"] = fault
    return request


@pytest.fixture
def slow_daemon():
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-deadline-")
    d = Daemon(TCCD_BINARY, root, extra_args=[
        "--enable-test-faults", "--compile-threads", "2",
        "--compile-time-limit-s", str(COMPILE_LIMIT_S), "--request-deadline-s", str(DEADLINE_S)])
    d.start()
    yield d
    try:
        assert d.stop() == 0, d.log_tail()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_call_without_client_deadline_ends_at_the_server_deadline_followers_too(slow_daemon):
    hanging = _request(1, "hang")
    errors = {}

    def call(name):
        try:
            # No timeout: the client sends no deadline at all.
            slow_daemon.stub().Compile(hanging)
            errors[name] = None
        except grpc.RpcError as e:
            errors[name] = e

    threads = [threading.Thread(target=call, args=(name,)) for name in ("leader", "follower")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=4 * COMPILE_LIMIT_S)
    for name in ("leader", "follower"):
        e = errors.get(name)
        assert e is not None, f"{name}: no error ({errors})"
        assert e.code() == grpc.StatusCode.DEADLINE_EXCEEDED, (name, e.code(), e.details())
        assert "request deadline" in e.details(), e.details()

    assert slow_daemon.alive(), slow_daemon.log_tail()
    ok = slow_daemon.stub().Compile(_request(2), timeout=120)
    assert ok.manifest.key
