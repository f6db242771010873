"""GPU: with the daemon's TCCD_GEMM_AUTOTUNE=n (default 0: the heuristic's first algorithm),
matmuls time n of cuBLASLt's candidate algorithms when their plan loads and keep the fastest
(codegen/cuda_host/runtime/tccd_cuda_tune.h). Whatever algorithm a load keeps, the results must
match eager: a ConvNeXt-like MLP block (bias epilogues forward, long-k weight gradients backward,
the shapes whose heuristic pick was slow), f32 with a bias, and a batched f16 bmm, each against
eager, untuned (the session daemon), tuned, and tuned with the swapped formulation allowed
(TCCD_GEMM_AUTOTUNE_SWAP=1; daemons of their own).
"""

import shutil

import pytest
import torch

import tccd
from conftest import TCCD_BINARY, Daemon, short_tempdir

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


class Mlp(torch.nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.fc1 = torch.nn.Linear(d, h)
        self.fc2 = torch.nn.Linear(h, d)

    def forward(self, x):
        return self.fc2(torch.nn.functional.gelu(self.fc1(x)))


def _mlp_step(backend):
    """Output and every gradient of one bf16-autocast training step of ConvNeXt-T stage 1's MLP
    at batch 4 (4 * 56 * 56 tokens x 96 -> 384 -> 96)."""
    torch.manual_seed(0)
    model = Mlp(96, 384).cuda()
    x = torch.randn(4 * 56 * 56, 96, device="cuda", requires_grad=True)
    fn = model if backend is None else torch.compile(model, backend=backend, dynamic=False)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = fn(x)
    out.float().square().mean().backward()
    grads = [x.grad] + [p.grad for p in model.parameters()]
    return [out.float()] + [g.float() for g in grads]


def _linear_f32(x, w, b):
    return torch.nn.functional.linear(x, w, b).relu()


def _bmm_f16(a, b):
    return torch.bmm(a, b) * 0.5


def _check_against_eager():
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    expected, got = _mlp_step(None), _mlp_step("tccd")
    for e, g in zip(expected, got):
        # bf16 sums of up to 12544 terms in another order (split-k or not): relative 2e-2.
        torch.testing.assert_close(g, e, rtol=2e-2, atol=2e-2 * e.abs().max().item())

    torch.manual_seed(1)
    args = (torch.randn(512, 256, device="cuda"), torch.randn(320, 256, device="cuda"),
            torch.randn(320, device="cuda"))
    compiled = torch.compile(_linear_f32, backend="tccd", dynamic=False)
    torch.testing.assert_close(compiled(*args), _linear_f32(*args), rtol=1e-3, atol=1e-3)

    args = (torch.randn(12, 128, 64, device="cuda", dtype=torch.float16),
            torch.randn(12, 64, 96, device="cuda", dtype=torch.float16))
    compiled = torch.compile(_bmm_f16, backend="tccd", dynamic=False)
    torch.testing.assert_close(compiled(*args), _bmm_f16(*args), rtol=1e-2, atol=1e-2)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats


def test_untuned_matmuls_match_eager(daemon_env):
    _check_against_eager()


@pytest.fixture(params=[{"TCCD_GEMM_AUTOTUNE": "8"},
                        {"TCCD_GEMM_AUTOTUNE": "8", "TCCD_GEMM_AUTOTUNE_SWAP": "1"}],
                ids=["tuned", "swap"])
def knob_daemon(monkeypatch, tmp_path, request):
    """A daemon with TCCD_GEMM_AUTOTUNE=8, and with TCCD_GEMM_AUTOTUNE_SWAP=1 (weight
    gradients may run as D^T = B^T A^T, row-ordered)."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    for name, value in request.param.items():
        monkeypatch.setenv(name, value)
    root = short_tempdir("tccd-knob-")
    d = Daemon(TCCD_BINARY, root)
    d.start()
    monkeypatch.setenv("TCCD_ADDRESS", d.address)
    monkeypatch.setenv("TCCD_NO_AUTOSTART", "1")
    monkeypatch.setenv("TCCD_CACHE_DIR", str(tmp_path / "client-cache"))
    monkeypatch.setenv("TCCD_AOT_SHARE", "0")
    from tccd import config

    config.reload()
    yield d
    try:
        if d.alive():
            assert d.stop() == 0, d.log_tail()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_tuned_and_swapped_matmuls_match_eager(knob_daemon):
    _check_against_eager()


# One process of the cross-process test: the MLP step through tccd, its results saved.
_WORKER = r"""
import json, sys, torch, tccd
from tccd import runtime
sys.path.insert(0, sys.argv[2])
from test_gpu_gemm_autotune import _mlp_step
results = _mlp_step("tccd")
torch.save([r.cpu() for r in results], sys.argv[1])
print(json.dumps({"cuda_init_s": runtime.cuda_init_seconds()}))
"""


def _start_worker(d, tmp_path, name, **env_extra):
    import os
    import subprocess
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parent
    env = {k: v for k, v in os.environ.items() if not k.startswith("TCCD_")}
    env.update(TCCD_ADDRESS=d.address, TCCD_NO_AUTOSTART="1", TCCD_AOT_SHARE="0",
               TCCD_CACHE_DIR=str(tmp_path / name / "client-cache"),
               PYTHONPATH=str(here.parents[1] / "client") + os.pathsep + env.get("PYTHONPATH", ""),
               **env_extra)
    out = tmp_path / f"{name}.pt"
    proc = subprocess.Popen([sys.executable, "-c", _WORKER, str(out), str(here)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, out


def _finish_worker(started):
    import json

    proc, out = started
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stdout + stderr[-4000:]
    return torch.load(out), json.loads(stdout.strip().splitlines()[-1])


@pytest.fixture
def tuning_daemon(monkeypatch):
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    monkeypatch.setenv("TCCD_GEMM_AUTOTUNE", "8")
    root = short_tempdir("tccd-tunes-")
    d = Daemon(TCCD_BINARY, root)
    d.start()
    yield d
    try:
        if d.alive():
            assert d.stop() == 0, d.log_tail()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_tuned_matmuls_are_bitwise_equal_across_processes(tuning_daemon, tmp_path):
    """Two processes (two ranks starting together, each with its own local cache) tune the same
    matmuls at the same time; the daemon keeps the first choice of each and the other process
    takes it before its first call: both compute the same bits. A third process loads the
    stored choices and times nothing."""
    from tccd.v1 import tccd_pb2 as pb

    ranks = [_start_worker(tuning_daemon, tmp_path, f"rank{i}") for i in range(2)]
    (first, _), (second, _) = [_finish_worker(r) for r in ranks]
    for a, b in zip(first, second):
        assert torch.equal(a, b), (a - b).abs().max()
    props = torch.cuda.get_device_properties(0)
    from tccd import runtime

    torch.ones(8, 8, device="cuda", dtype=torch.bfloat16) @ torch.ones(8, 8, device="cuda",
                                                                       dtype=torch.bfloat16)
    version = runtime._cublaslt_version()  # cuBLASLt is loaded by now
    if version is not None:
        table = tuning_daemon.stub().GetGemmTunes(
            pb.GemmTuneRequest(gpu_name=props.name, sm=props.major * 10 + props.minor,
                               cublaslt_version=version), timeout=10)
        assert len(table.entries) >= 1 and table.puts >= 1
    third, info = _finish_worker(_start_worker(tuning_daemon, tmp_path, "later"))
    for a, b in zip(first, third):
        assert torch.equal(a, b), (a - b).abs().max()
    print("cuda_init_s of the later process:", info["cuda_init_s"])
