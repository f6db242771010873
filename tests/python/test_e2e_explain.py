"""End to end: `python -m tccd explain KEY_OR_GRAPH` names the part of the compile key that made
a graph miss.

A real tccd on a private socket and cache dir. One job compiles a base graph, then variants that
change one thing at a time: the input shapes, an option, the ops, the target CPU's features, and
(a daemon restarted with TCCD_DISABLE_FUSION=1, which changes its compiler identity) the
compiler. For each, the CLI, run as a user would, must name exactly that part, comparing with
the base entry.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conftest import TCCD_BINARY, Daemon, short_tempdir
from tccd.serialize import build_request
from tccd_testlib import capture_aot_graphs

JOB = "explain-test"
CLIENT = Path(__file__).resolve().parents[2] / "client"


def _graph(op, cols: int):
    def f(x, y):
        return op(x * y) + x * 3

    (_, gm, inputs), = capture_aot_graphs(f, torch.randn(8, cols), torch.randn(cols))
    return gm, inputs


def _request(op=torch.sigmoid, cols=16, name="base", options=None):
    gm, inputs = _graph(op, cols)
    return build_request(gm, inputs, graph_name=name, job_id=JOB, options=options)


def explain(daemon, arg, job=JOB):
    env = dict(os.environ, PYTHONPATH=f"{CLIENT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    env.pop("TCCD_JOB_ID", None)
    out = subprocess.run(
        [sys.executable, "-m", "tccd", "explain", arg, "--job", job, "--json",
         "--address", daemon.address], capture_output=True, text=True, timeout=60, env=env)
    return out.returncode, out.stdout, out.stderr


@pytest.fixture
def daemon():
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-explain-")
    d = Daemon(TCCD_BINARY, root, extra_args=["--compile-threads", "2"])
    d.start()
    yield d
    try:
        if d.alive():
            assert d.stop() == 0, d.log_tail()
    finally:
        os.environ.pop("TCCD_DISABLE_FUSION", None)
        shutil.rmtree(root, ignore_errors=True)


def _miss_then_explain(daemon, request):
    response = daemon.stub().Compile(request, timeout=120)
    assert not response.cache_hit
    code, out, err = explain(daemon, response.manifest.key)
    assert code == 0, err
    return json.loads(out)


def test_explain_names_the_one_part_that_changed(daemon):
    base = daemon.stub().Compile(_request(), timeout=120)
    assert not base.cache_hit

    report = _miss_then_explain(daemon, _request(cols=24, name="wider"))
    assert report["nearest"] == base.manifest.key
    assert report["differs"] == ["inputs"], report
    assert "f32[8,16]" in report["details"][0] and "f32[8,24]" in report["details"][0]

    report = _miss_then_explain(daemon, _request(name="opt", options={"explain_knob": "1"}))
    assert report["nearest"] == base.manifest.key
    assert report["differs"] == ["options"], report
    assert "+explain_knob=1" in report["details"][0]

    report = _miss_then_explain(daemon, _request(op=torch.tanh, name="tanh"))
    assert report["nearest"] == base.manifest.key
    assert report["differs"] == ["graph"], report

    other_cpu = _request(name="baseline-cpu")
    del other_cpu.target.cpu_features[:]  # no AVX: another ISA level
    other_cpu.target.cpu_features.append("sse2")
    report = _miss_then_explain(daemon, other_cpu)
    assert report["nearest"] == base.manifest.key
    assert report["differs"] == ["target"], report

    # A graph name instead of a key: the job's latest entry of that name.
    code, out, err = explain(daemon, "tanh")
    assert code == 0, err
    assert json.loads(out)["differs"] == ["graph"]
    # The human-readable form names the part too.
    env = dict(os.environ, PYTHONPATH=str(CLIENT), TCCD_JOB_ID=JOB)
    text = subprocess.run([sys.executable, "-m", "tccd", "explain", "wider", "--address",
                           daemon.address], capture_output=True, text=True, timeout=60, env=env)
    assert text.returncode == 0, text.stderr
    assert "differs: inputs: %a0 f32[8,16]" in text.stdout, text.stdout
    assert "same: graph, target, options, compiler" in text.stdout


def test_explain_names_a_compiler_change(daemon):
    base = daemon.stub().Compile(_request(), timeout=120)
    daemon.stop()
    os.environ["TCCD_DISABLE_FUSION"] = "1"  # part of the compiler identity
    daemon.start()
    report = _miss_then_explain(daemon, _request())
    assert report["nearest"] == base.manifest.key
    assert report["differs"] == ["compiler"], report


def test_explain_without_an_entry_says_so(daemon):
    code, _, err = explain(daemon, "0" * 64)
    assert code == 1
    assert "no entry" in err
    code, _, err = explain(daemon, "no-such-graph")
    assert code == 1
    assert "no-such-graph" in err
