"""TCCD_DEFER_BACKWARD_INIT (runtime.load_plan's defer_cuda_init) without a GPU: a CUDA plan's
module load moves to a background thread, whose failure is logged, not raised (on this machine
the load fails at torch.cuda.init(): no driver), while the load without it raises there. The
plan's "kernels" library is a stub compiled here: nothing runs, only the binding is made."""

import subprocess
import threading
import time

import pytest
import torch

from tccd import config
from tccd.runtime import ABI_CUDA, load_plan
from tccd.serialize import tensor_meta
from tccd.v1 import tccd_pb2 as pb

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the failing load of a machine without CUDA")


_STUB = """
int k(void* const* data, const long* strides, void* stream) { return 0; }
int tccd_cuda_init(void) { return 0; }
const char* tccd_cuda_last_error(void) { return ""; }
"""


@pytest.fixture
def stub_library(tmp_path):
    src, lib = tmp_path / "k.c", tmp_path / "k.so"
    src.write_text(_STUB)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return str(lib)


def _cuda_plan(library):
    plan = pb.Plan(num_inputs=1)
    meta = tensor_meta(torch.empty(4), "x")
    meta.device.type = pb.CUDA
    meta.device.index = 0
    plan.values.extend([meta, meta])
    step = pb.Step(native=pb.NativeCall(artifact="k.so", symbol="k", abi=ABI_CUDA, shape=[4], inputs=[0],
                                        expected_strides=[1, 1]))
    step.outputs.append(1)
    plan.steps.append(step)
    plan.outputs.append(pb.Value(ref=pb.ValueRef(node=1)))
    return plan, {"k.so": library}


def test_the_module_load_fails_in_the_loading_thread_without_deferral(stub_library):
    plan, paths = _cuda_plan(stub_library)
    with pytest.raises(RuntimeError, match="NVIDIA driver"):
        load_plan(plan, paths, "0/0 backward")


def test_deferred_the_load_returns_and_the_background_failure_is_logged(stub_library, caplog):
    plan, paths = _cuda_plan(stub_library)
    loaded = load_plan(plan, paths, "0/0 backward", defer_cuda_init=True)
    assert loaded.num_native == 1
    deadline = time.monotonic() + 30
    while "loading k.so in the background failed" not in caplog.text and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "loading k.so in the background failed" in caplog.text
    for t in threading.enumerate():  # the thread ends after its failure
        if t.name.startswith("tccd-module-load"):
            t.join(timeout=30)
            assert not t.is_alive()


def test_the_knob(monkeypatch):
    assert config.Config.from_env({}).defer_backward_init == 2
    assert config.Config.from_env({"TCCD_DEFER_BACKWARD_INIT": "0"}).defer_backward_init == 0
    assert config.Config.from_env({"TCCD_DEFER_BACKWARD_INIT": "1"}).defer_backward_init == 1
    assert config.Config.from_env({"TCCD_DEFER_BACKWARD_INIT": "true"}).defer_backward_init == 1
    assert config.Config.from_env({"TCCD_DEFER_BACKWARD_INIT": "2"}).defer_backward_init == 2
    with pytest.raises(ValueError, match="TCCD_DEFER_BACKWARD_INIT='3': expected 0, 1 or 2"):
        config.Config.from_env({"TCCD_DEFER_BACKWARD_INIT": "3"})


@pytest.mark.parametrize("level, kinds", [
    (0, set()),
    (1, {"backward"}),
    (2, {"forward", "backward", "inference"}),
])
def test_which_plans_load_their_modules_in_the_background(monkeypatch, stub_library, level, kinds):
    """compiler._load defers a plan loaded by key (its kind known): 1 the backward, 2 every kind;
    never a plan the cold path compiled (kind "")."""
    from types import SimpleNamespace

    from tccd import compiler

    seen = {}

    def fake_load_plan(plan, paths, name, defer_cuda_init=False):
        seen[name] = defer_cuda_init
        raise RuntimeError("stop here")

    monkeypatch.setattr(compiler, "load_plan", fake_load_plan)
    monkeypatch.setattr(compiler, "_needed_artifacts", lambda manifest, native: {})
    cfg = SimpleNamespace(defer_backward_init=level, native_runtime=False)
    for kind in ("forward", "backward", "inference", ""):
        with pytest.raises(RuntimeError, match="stop here"):
            compiler._load(SimpleNamespace(plan=None), cfg, None, kind or "cold", allow_fetch=True, kind=kind)
    assert {name for name, deferred in seen.items() if deferred} == kinds
