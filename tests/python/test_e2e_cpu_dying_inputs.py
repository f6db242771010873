"""End to end against the real daemon (CPU): a CPU pointwise kernel writes its output over an
input that dies at it (codegen/passes/dying_inputs_into_outputs.h, its CPU part, branch cpu13):
the MLP's ReLU kernels over their addmm outputs and its ReLU-backward kernels over their mm
outputs, with eager's losses and weights after several SGD steps in float32 and float64, run by
the native plan runtime and by the Python interpreter. Where the GEMM output outlives the kernel
(returned by the graph: saved and reused) nothing is written over it; a daemon started with
TCCD_DISABLE_PASSES=dying-cpu-kernels writes over nothing."""

import shutil

import pytest
import torch
from torch import nn

import tccd
from conftest import TCCD_BINARY, Daemon, short_tempdir
from test_e2e_cpu_blas import _train as train_mlp

MODES = {"native": "1", "interpreter": "0"}


@pytest.fixture(params=sorted(MODES))
def mode(request, daemon_env, monkeypatch):
    monkeypatch.setenv("TCCD_NATIVE_RUNTIME", MODES[request.param])
    tccd.config.reload()
    yield request.param
    monkeypatch.undo()
    tccd.config.reload()


@pytest.fixture(scope="module")
def off_daemon():
    """A daemon whose CPU kernels write over nothing."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-dying-")
    d = Daemon(TCCD_BINARY, root, env={"TCCD_DISABLE_PASSES": "dying-cpu-kernels"})
    d.start()
    yield d
    d.stop()
    shutil.rmtree(root, ignore_errors=True)


def _written_over(plans):
    return sum(k >= 0 for p in plans for s in p.steps for k in s.write_into)


def _mlp(dtype):
    # [64, 128] activations: 32 KiB in float32 (DyingInputsIntoOutputs::kCpuMinBytes), 64 KiB in
    # float64.
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(48, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                         nn.Linear(128, 7)).to(dtype)


def _train(model, fn, dtype, steps=4):
    return train_mlp(model, fn, steps, dtype, batch=64, features=48, classes=7)


def _train_both(dtype, native=True):
    eager = _mlp(dtype)
    want_losses, want_params = _train(eager, eager, dtype)
    model = _mlp(dtype)
    losses, params = _train(model, torch.compile(model, backend="tccd", dynamic=False), dtype)
    torch.testing.assert_close(losses, want_losses)
    for p, q in zip(params, want_params):
        torch.testing.assert_close(p, q)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    if native:
        assert all(s["python_steps"] == 0 for s in stats), stats


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_mlp_relu_kernels_write_over_their_gemm_outputs(mode, plans, dtype):
    torch._dynamo.reset()
    _train_both(dtype, native=mode == "native")
    # Forward: the two ReLUs over their addmm outputs; backward: the two ReLU-backward kernels
    # over the mm outputs they read (the ReLU outputs, saved for backward, are inputs there).
    assert _written_over(plans) == 4


class _SavedPreActivation(nn.Module):
    """The addmm output outlives the ReLU over it: read again after it, returned, or returned
    through a view. The ReLU must not write over it."""

    def __init__(self, use):
        super().__init__()
        self.a = nn.Linear(48, 128)
        self.use = use

    def forward(self, x):
        h = self.a(x)
        r = torch.relu(h)
        if self.use == "read after":
            return r, h * 2.0
        if self.use == "returned":
            return r, h
        return r, h.t()


@pytest.mark.parametrize("use", ["read after", "returned", "view returned"])
def test_no_write_over_a_gemm_output_that_outlives_the_kernel(daemon_env, plans, use):
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = _SavedPreActivation(use)
    x = torch.randn(64, 48)
    with torch.no_grad():
        want = model(x)
        have = torch.compile(model, backend="tccd", dynamic=False)(x)
    for a, b in zip(have, want):
        torch.testing.assert_close(a, b)
    # The plan has the case: a kernel (the ReLU) reading the addmm's output.
    gemm_outputs = {o for p in plans for s in p.steps if s.WhichOneof("kind") == "extern_call"
                    and s.extern_call.target == "aten::addmm.default" for o in s.outputs}
    assert any(i in gemm_outputs for p in plans for s in p.steps if s.WhichOneof("kind") == "native"
               for i in s.native.inputs), plans
    assert _written_over(plans) == 0


def test_knob_off_writes_over_nothing(daemon_env, off_daemon, plans, monkeypatch):
    monkeypatch.setenv("TCCD_ADDRESS", off_daemon.address)
    tccd.config.reload()
    torch._dynamo.reset()
    try:
        _train_both(torch.float32)
    finally:
        monkeypatch.undo()
        tccd.config.reload()
    assert plans and _written_over(plans) == 0
