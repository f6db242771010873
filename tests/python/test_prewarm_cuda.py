"""TCCD_PREWARM_CUDA without a GPU: a forward or inference graph for CUDA compiling in the
background starts runtime.prewarm_cuda for its device on a thread of its own (beside the
daemon's compile), a backward or a CPU graph does not, the knob turns it off, and the pre-warm
runs once per device and process and never raises (the plan's load does the same work)."""

import threading

import pytest

from tccd import config, prefetch, runtime
from tccd.serialize import pb


def _request(device_type, index=1):
    request = pb.CompileRequest(graph_name="g")
    request.target.device_type = device_type
    meta = request.graph.inputs.add()
    meta.device.type = device_type
    meta.device.index = index
    return request


@pytest.fixture
def spied(monkeypatch):
    """prefetch.start with a stub compile; the pre-warms it starts, by device."""
    import tccd.compiler

    done = threading.Event()
    calls = []

    def prewarm(device):
        calls.append(device)
        done.set()

    monkeypatch.setattr(tccd.compiler, "compile_request", lambda *a, **k: "plan")
    monkeypatch.setattr(runtime, "prewarm_cuda", prewarm)
    monkeypatch.setattr(prefetch, "torch_cuda_available", lambda: True)
    return calls, done


@pytest.mark.parametrize("kind", ["forward", "inference"])
def test_a_cuda_forward_compiling_in_the_background_prewarms_its_device(spied, monkeypatch, kind):
    calls, done = spied
    monkeypatch.delenv("TCCD_PREWARM_CUDA", raising=False)
    pending = prefetch.start(_request(pb.CUDA), "key", config.reload(), kind=kind)
    assert pending.future.result(timeout=10) == "plan"
    assert done.wait(10) and calls == [1]


@pytest.mark.parametrize("kind, device_type, knob", [("backward", pb.CUDA, "1"), ("forward", pb.CPU, "1"),
                                                     ("forward", pb.CUDA, "0")])
def test_no_prewarm_for_a_backward_a_cpu_graph_or_with_the_knob_off(spied, monkeypatch, kind, device_type, knob):
    calls, done = spied
    monkeypatch.setenv("TCCD_PREWARM_CUDA", knob)
    pending = prefetch.start(_request(device_type), "key", config.reload(), kind=kind)
    assert pending.future.result(timeout=10) == "plan"
    assert not done.wait(0.3) and calls == []
    monkeypatch.delenv("TCCD_PREWARM_CUDA")
    config.reload()


def test_prewarm_runs_once_per_device_and_never_raises(monkeypatch):
    def fails():
        raise RuntimeError("no CUDA here")

    monkeypatch.setattr(runtime.torch.cuda, "init", fails)
    monkeypatch.setattr(runtime, "_prewarmed", set())
    assert runtime.prewarm_cuda(3) is True  # ran (and swallowed the failure)
    assert runtime.prewarm_cuda(3) is False  # once per device
    assert runtime.prewarm_cuda(4) is True
