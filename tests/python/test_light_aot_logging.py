"""light_aot_logging.py: tccd's cold compile runs Dynamo's aot_autograd backend without
importing torch._inductor.debug (and the Inductor scheduler, IR... it pulls in), gives the same
results, and leaves no stand-in behind; TCCD_LIGHT_AOT_LOGGING=0 and TORCH_COMPILE_DEBUG=1 import
the real module as before.

Each case is a fresh process (a module once imported stays imported)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent
REPO = TESTS_DIR.parents[1]

# One training step of a small MLP through torch.compile(backend="tccd"), then which of
# Inductor's modules the process holds.
_WORKER = r"""
import json, sys
import torch
import tccd

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))
x = torch.randn(8, 16)
compiled = torch.compile(model, backend="tccd")
before = set(sys.modules)
loss = compiled(x).square().mean()
loss.backward()
print(json.dumps({
    "torch": torch.__version__,
    "debug": "torch._inductor.debug" in sys.modules,
    "scheduler": "torch._inductor.scheduler" in sys.modules,
    "stand_in_left": "tccd's stand-in" in (getattr(sys.modules.get("torch._inductor.debug"), "__doc__", "") or ""),
    # AOTAutograd's modules the step imported (torch.compile() imported its entry points).
    "functorch_imported": sorted(m for m in set(sys.modules) - before if m.startswith("torch._functorch")),
    "loss": float(loss),
    "grad": float(model[0].weight.grad.abs().sum()),
}))
"""


def _run(env_extra, cache_dir):
    # This branch's client first; the rest of PYTHONPATH kept (another torch, e.g. 2.11's, stays).
    path = os.pathsep.join(p for p in [str(REPO / "client"), os.environ.get("PYTHONPATH", "")] if p)
    env = dict(os.environ, PYTHONPATH=path, TCCD_CACHE_DIR=str(cache_dir), **env_extra)
    if "TORCH_COMPILE_DEBUG" not in env_extra:
        env.pop("TORCH_COMPILE_DEBUG", None)
    done = subprocess.run([sys.executable, "-c", _WORKER], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_cold_compile_does_not_import_inductor_debug(daemon_env, tmp_path):
    light = _run({}, tmp_path / "light")
    assert not light["debug"] and not light["scheduler"], light
    assert not light["stand_in_left"]
    real = _run({"TCCD_LIGHT_AOT_LOGGING": "0"}, tmp_path / "real")
    assert real["debug"] and real["scheduler"], real
    assert light["loss"] == pytest.approx(real["loss"], rel=1e-6)
    assert light["grad"] == pytest.approx(real["grad"], rel=1e-6)
    # The warm start (the recipe from the local cache) never runs AOTAutograd: nothing either.
    warm = _run({}, tmp_path / "light")
    assert not warm["debug"] and not warm["scheduler"], warm
    assert warm["functorch_imported"] == [], warm
    assert warm["loss"] == pytest.approx(light["loss"], rel=1e-6)


def test_torch_compile_debug_gets_the_real_module(daemon_env, tmp_path):
    out = _run({"TORCH_COMPILE_DEBUG": "1", "TORCH_COMPILE_DEBUG_DIR": str(tmp_path / "debug")}, tmp_path / "c")
    assert out["debug"], out


def test_scope_installs_and_removes_the_stand_in(monkeypatch):
    sys.path.insert(0, str(REPO / "client"))
    from tccd import light_aot_logging as lal

    monkeypatch.delenv("TORCH_COMPILE_DEBUG", raising=False)
    if lal.DEBUG_MODULE in sys.modules and sys.modules[lal.DEBUG_MODULE] is not lal._STAND_IN:
        # The real module is imported (another test did): the scope must leave it alone.
        real = sys.modules[lal.DEBUG_MODULE]
        with lal.scope(True) as installed:
            assert not installed and sys.modules[lal.DEBUG_MODULE] is real
        return
    with lal.scope(True) as installed:
        assert installed and sys.modules[lal.DEBUG_MODULE] is lal._STAND_IN
        from torch._inductor.debug import enable_aot_logging  # what torch's AotAutograd runs

        with enable_aot_logging():
            # Used once: gone from sys.modules, so later imports get the real module.
            assert lal.DEBUG_MODULE not in sys.modules
    assert lal.DEBUG_MODULE not in sys.modules
    with lal.scope(False) as installed:
        assert not installed and lal.DEBUG_MODULE not in sys.modules
    monkeypatch.setenv("TORCH_COMPILE_DEBUG", "1")
    with lal.scope(True) as installed:
        assert not installed


def test_torch_still_imports_enable_aot_logging_from_the_debug_module():
    """What the stand-in stands in for: if torch's AotAutograd stops importing it, the stand-in
    is dead code (remove it); if torch's enable_aot_logging starts doing something without
    TORCH_COMPILE_DEBUG, the stand-in would skip it (replace the stand-in)."""
    import inspect

    import torch._dynamo.backends.common as common

    assert "from torch._inductor.debug import enable_aot_logging" in inspect.getsource(common.AotAutograd.__call__)
    spec = __import__("importlib.util").util.find_spec("torch._inductor.debug")
    source = Path(spec.origin).read_text()
    body = source[source.index("def enable_aot_logging"):]
    body = body[:body.index("\ndef ", 10)]
    # Without TORCH_COMPILE_DEBUG=1 it yields and returns before anything else.
    assert 'compile_debug = os.environ.get("TORCH_COMPILE_DEBUG", "0") == "1"' in body
    assert body.index("if not compile_debug:") < body.index("stack.enter_context")
