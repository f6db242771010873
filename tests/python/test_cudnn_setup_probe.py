"""deploy/cudnn_setup_probe.py on the CPU: the mechanics (the model's distinct convolution calls
from a meta trace, each phase on its threads, the JSON); the timings mean something on a GPU only."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_probe_runs_every_phase_on_the_cpu(tmp_path):
    pytest.importorskip("timm")  # the zoo's ConvNeXt; CI's clean venv has no timm
    out = tmp_path / "probe.json"
    env = dict(os.environ, PYTHONPATH=str(REPO / "client") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run(
        [sys.executable, str(REPO / "deploy" / "cudnn_setup_probe.py"), "--model", "convnext", "--batch", "1",
         "--size", "32", "--device", "cpu", "--json", str(out)],
        env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads(out.read_text())
    # ConvNeXt-T: the stem, three downsamples, a depthwise 7x7 per stage's resolution... each
    # distinct call once, forward and backward alike.
    assert res["forward_calls"] == res["backward_calls"] >= 8, res
    assert len(res["first_cudnn_use_ms"]) == 1
    for key in ("fwd_thread_b_ms", "fwd_main_ms", "fwd_main_again_ms", "bwd_thread_c_ms"):
        assert len(res[key]) == res["forward_calls"], key
    assert len(res["bwd_thread_d_ms"]) + len(res["bwd_thread_e_ms"]) == res["backward_calls"]
    assert "shared across threads" in r.stdout
