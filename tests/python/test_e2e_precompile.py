"""End to end (CPU, real daemon): torch.compile's ahead-of-time flow with tccd
(client/tccd/precompile.py). One process aot-compiles and saves a training function; a fresh
process with an empty local cache loads it and runs forward and backward: results equal eager's,
and the daemon compiled nothing and was not even asked to (no Compile call: only GetManifest and
artifact fetches).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from e2e_precompile_worker import inputs, step
from test_e2e_training import ATOL, RTOL

WORKER = Path(__file__).resolve().parent / "e2e_precompile_worker.py"


def _run(env, *argv):
    r = subprocess.run([sys.executable, str(WORKER), *argv], capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0, f"{argv} failed:\n{r.stdout}\n{r.stderr}"
    return json.loads(r.stdout.strip().splitlines()[-1])


def _eager():
    args = inputs()
    out = step(*args)
    out.square().mean().backward()
    return out.detach(), [a.grad for a in args[1:]]


def _assert_eager(result):
    out, grads = _eager()
    torch.testing.assert_close(torch.tensor(result["out"]), out, rtol=RTOL, atol=ATOL)
    for got, want in zip(result["grads"], grads):
        torch.testing.assert_close(torch.tensor(got), want, rtol=RTOL, atol=ATOL)


def test_saved_in_one_process_loaded_in_a_fresh_one_without_compiling(daemon, daemon_env, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TCCD_")}
    env.update({k: daemon_env[k] for k in ("TCCD_ADDRESS", "TCCD_JOB_ID", "TCCD_NO_AUTOSTART", "TCCD_AOT_SHARE")})
    saved = tmp_path / "step.pt2"

    env["TCCD_CACHE_DIR"] = str(tmp_path / "cache-save")
    cold = _run(env, "save", str(saved))
    assert saved.stat().st_size > 0
    assert sorted(s["kind"] for s in cold["stats"]) == ["backward", "forward"]
    assert all(s["fallback"] is None for s in cold["stats"])
    _assert_eager(cold)

    before = daemon.stats()
    env["TCCD_CACHE_DIR"] = str(tmp_path / "cache-load")  # empty: a fresh machine's process
    warm = _run(env, "load", str(saved))
    after = daemon.stats()
    _assert_eager(warm)
    assert warm["out"] == cold["out"] and warm["grads"] == cold["grads"]
    assert sorted(s["kind"] for s in warm["stats"]) == ["backward", "forward"]
    assert all(s["aot_skipped"] for s in warm["stats"]), warm["stats"]
    assert sorted(s["key"] for s in warm["stats"]) == sorted(s["key"] for s in cold["stats"])
    assert after["compiles"] == before["compiles"], "the loading process compiled something"
    assert after["cache_hits"] == before["cache_hits"] and after["cache_misses"] == before["cache_misses"], (
        "the loading process sent a Compile request")
    assert after["manifest_reads"] == before["manifest_reads"] + 2


def test_a_graph_without_a_recipe_cannot_be_saved_and_says_why(daemon_env, tmp_path):
    def returns_a_view(x, w):
        return x.t(), torch.relu(x @ w)

    compiled = torch.compile(returns_a_view, backend="tccd", fullgraph=True, dynamic=False)
    aot = compiled.aot_compile(((torch.randn(4, 3, requires_grad=True), torch.randn(3, 5, requires_grad=True)), {}))
    with pytest.raises(RuntimeError, match="tccd cannot save this compiled graph: .*output 0 is alias_of_input"):
        aot.save_compiled_function(str(tmp_path / "f.pt2"))


def test_saved_with_the_guard_filter_loads_and_matches_eager(daemon_env, tmp_path):
    """tccd.precompile.serializable_guards (what real transformers models need to be saved,
    precompile.py) keeps the guards the load needs: a module passed as external data, results
    equal eager's in a fresh process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TCCD_")}
    env.update({k: daemon_env[k] for k in ("TCCD_ADDRESS", "TCCD_JOB_ID", "TCCD_NO_AUTOSTART", "TCCD_AOT_SHARE")})
    saved = tmp_path / "step.pt2"
    env["TCCD_CACHE_DIR"] = str(tmp_path / "cache-save")
    cold = _run(env, "save-activation", str(saved))
    _assert_eager(cold)
    env["TCCD_CACHE_DIR"] = str(tmp_path / "cache-load")
    warm = _run(env, "load-activation", str(saved))
    _assert_eager(warm)
    assert all(s["aot_skipped"] for s in warm["stats"]), warm["stats"]


def _refusals(daemon_env, tmp_path, **knobs):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TCCD_")}
    env.update({k: daemon_env[k] for k in ("TCCD_ADDRESS", "TCCD_JOB_ID", "TCCD_NO_AUTOSTART", "TCCD_AOT_SHARE")})
    env.update(knobs)
    saved = tmp_path / "step.pt2"
    env["TCCD_CACHE_DIR"] = str(tmp_path / "cache-save")
    cold = _run(env, "save-lean", str(saved))
    env["TCCD_CACHE_DIR"] = str(tmp_path / "cache-load")
    warm = _run(env, "load-mismatch", str(saved))
    return cold, warm


# What a refusal names, per case of e2e_precompile_worker's load-mismatch (torch's TensorCheck
# wording, 2.11 and 2.15, from Dynamo's guard or tccd's input check alike).
SAYS = {"float64": ("dtype",), "shape": ("rank", "size"), "frozen": ("requires_grad",),
        "meta": ("dispatch key", "device"), "stride": ("stride",), "inference": ("dispatch key",),
        "grad_x": ("requires_grad",)}


def test_a_loaded_function_checks_its_inputs_instead_of_tensor_guards(daemon_env, tmp_path):
    """Under the lean filter the saved function keeps no TENSOR_MATCH guard of its graph inputs
    (x, w1, b1, w2): it checks them itself at every call (tccd.input_check). Called with an input
    of another dtype, shape, strides, device (meta for the saved CPU), dispatch keys (an
    inference tensor) or requires_grad, it raises tccd's error naming the input and what
    differs, and never runs its plans on them; the same call with the saved kinds of tensors
    then computes eager's results."""
    cold, warm = _refusals(daemon_env, tmp_path)
    assert "TENSOR_MATCH" not in cold["kept_types"], cold["kept_types"]
    assert "refuses its inputs: " in cold["refused_in_saver"] and "dtype" in cold["refused_in_saver"]
    assert sorted(warm["refused"]) == sorted(SAYS)
    for case, error in warm["refused"].items():
        assert error is not None, f"{case}: the loaded function ran"
        assert error.startswith("RuntimeError: tccd: the loaded function refuses its inputs: "), (
            f"{case}: {error}")
        assert any(w in error for w in SAYS[case]), f"{case}: {error}"
    _assert_eager(warm)


def test_a_loaded_function_refuses_parameters_unlike_the_saved_ones(daemon_env, tmp_path):
    """TCCD_AOT_INPUT_CHECK=0 (the behaviour before the input check): the ahead-of-time flow
    keeps every tensor guard under the lean filter: a loaded function called with a tensor unlike
    the saved ones raises torch's guard failure naming the tensor and what differs, and never
    runs its plans on them. The same call with the saved kinds of tensors then computes eager's
    results."""
    cold, warm = _refusals(daemon_env, tmp_path, TCCD_AOT_INPUT_CHECK="0")
    assert cold["kept_types"].get("TENSOR_MATCH") == 4, cold["kept_types"]
    assert "guard" in cold["refused_in_saver"].lower() and "dtype" in cold["refused_in_saver"]
    assert sorted(warm["refused"]) == sorted(SAYS)
    for case, error in warm["refused"].items():
        assert error is not None, f"{case}: the loaded function ran"
        assert "guard" in error.lower() and "tccd" not in error and any(w in error for w in SAYS[case]), (
            f"{case}: {error}")
    _assert_eager(warm)
