"""End to end (CPU, real daemon): torch's caching_precompile with tccd (client/tccd/
caching_precompile.py, TCCD_CACHING_PRECOMPILE=1). A first process compiles a model with a plain
torch.compile(model, backend="tccd") and leaves Dynamo's package in TORCHINDUCTOR_CACHE_DIR; a
second one, with an empty tccd local cache, runs the same script: its torch.compile loads the
package, the first call traces nothing (no Dynamo frame, no AOTAutograd, no Compile request) and
the results are eager's. A package that no longer fits (changed source, other plan knobs, a
daemon without its manifests) is dropped with one log line and the function traced as usual.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conftest import TCCD_BINARY, Daemon, short_tempdir
from test_e2e_training import ATOL, RTOL

WORKER = Path(__file__).resolve().parent / "e2e_caching_precompile_worker.py"

# The model's module, written into each test's directory; ACTIVATION is replaced to change the
# source without moving a line (the package is found by the function's name and first line).
MODEL = '''import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 4)

    def forward(self, x):
        h = ACTIVATION(self.fc1(x))
        return torch.tanh(self.fc2(h)) * 2 + 1


def inputs():
    return torch.randn(8, 16, generator=torch.Generator().manual_seed(1))
'''


def _write_model(directory: Path, activation: str = "torch.relu") -> None:
    (directory / "pkgmodel.py").write_text(MODEL.replace("ACTIVATION", activation))
    for cached in (directory / "__pycache__").glob("pkgmodel*"):
        cached.unlink()


def _eager(directory: Path, what: str, rows: int = 0, double: bool = False, freeze_fc1: bool = False):
    """The model's outputs and gradients, eagerly, from the module file as it is now (the
    worker's --double and --freeze-fc1 alike)."""
    namespace: dict = {}
    exec(compile((directory / "pkgmodel.py").read_text(), "pkgmodel.py", "exec"), namespace)
    torch.manual_seed(0)
    model = namespace["Model"]()
    if freeze_fc1:
        model.fc1.weight.requires_grad_(False)
    if double:
        model.double()
    x = namespace["inputs"]().to(next(model.parameters()).dtype)
    if rows:
        x = torch.cat([x, x])[:rows]
    if what == "infer":
        with torch.no_grad():
            return model(x), []
    out = model(x)
    out.square().mean().backward()
    return out.detach(), [p.grad for p in model.parameters()]


def _assert_eager(directory: Path, what: str, result, rows: int = 0, **variant: bool) -> None:
    out, grads = _eager(directory, what, rows, **variant)
    torch.testing.assert_close(torch.tensor(result["out"], dtype=out.dtype), out, rtol=RTOL, atol=ATOL)
    assert len(result["grads"]) == len(grads)
    for got, want in zip(result["grads"], grads):
        if want is None:
            assert got is None
            continue
        torch.testing.assert_close(torch.tensor(got, dtype=want.dtype), want, rtol=RTOL, atol=ATOL)


# Another torch to run the workers with (TCCD_TEST_OTHER_TORCH_SITE: a directory holding its
# `torch` package, e.g. torch 2.11's wheel unpacked; TCCD_TEST_OTHER_TORCH_LIBS: the CUDA
# libraries it loads, LD_LIBRARY_PATH style): the tests marked with it run once more under it.
OTHER_TORCH_SITE = os.environ.get("TCCD_TEST_OTHER_TORCH_SITE", "")
OTHER_TORCH_LIBS = os.environ.get("TCCD_TEST_OTHER_TORCH_LIBS", "")


def _torch_env(other: bool) -> dict:
    if not other:
        return {}
    if not OTHER_TORCH_SITE:
        pytest.skip("TCCD_TEST_OTHER_TORCH_SITE is not set (another torch, e.g. 2.11 unpacked)")
    return {"PYTHONPATH": OTHER_TORCH_SITE + os.pathsep + os.environ.get("PYTHONPATH", ""),
            "LD_LIBRARY_PATH": OTHER_TORCH_LIBS}


class _Processes:
    """Runs the worker in new processes sharing one torch cache dir (Dynamo's packages), each
    with an empty tccd local cache unless told otherwise."""

    def __init__(self, daemon_env, tmp_path: Path, knob: bool = True, other_torch: bool = False):
        self.tmp = tmp_path
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("TCCD_", "TORCH"))}
        self.env.update({k: daemon_env[k] for k in ("TCCD_ADDRESS", "TCCD_JOB_ID", "TCCD_NO_AUTOSTART",
                                                    "TCCD_AOT_SHARE")})
        self.env["TORCHINDUCTOR_CACHE_DIR"] = str(tmp_path / "torch-cache")
        self.env["E2E_MODEL_DIR"] = str(tmp_path)
        if knob:
            self.env["TCCD_CACHING_PRECOMPILE"] = "1"
        self.env.update(_torch_env(other_torch))
        self.runs = 0

    def packages(self):
        return sorted((self.tmp / "torch-cache" / "dynamo").glob("*/entry"))

    def run(self, what: str, *argv: str, cache_dir: str = "", **env: str):
        self.runs += 1
        run_env = dict(self.env, TCCD_CACHE_DIR=cache_dir or str(self.tmp / f"tccd-cache-{self.runs}"), **env)
        r = subprocess.run([sys.executable, str(WORKER), what, *argv], capture_output=True, text=True,
                           timeout=600, env=run_env)
        assert r.returncode == 0, f"{what} {argv} failed:\n{r.stdout}\n{r.stderr}"
        result = json.loads(r.stdout.strip().splitlines()[-1])
        result["stderr"] = r.stderr
        return result


def _traced(result) -> None:
    assert result["unique_graphs"] == 1, result
    assert not any(s["dynamo_package"] for s in result["stats"]), result["stats"]


def _from_package(result, kinds) -> None:
    assert result["unique_graphs"] == 0, "Dynamo traced a frame: " + json.dumps(result)
    assert result["dynamo_cache"].get("dynamo_cache_hit") == 1, result["dynamo_cache"]
    assert sorted(s["kind"] for s in result["stats"]) == sorted(kinds), result["stats"]
    assert all(s["dynamo_package"] and s["aot_skipped"] and s["fallback"] is None for s in result["stats"])


@pytest.mark.parametrize("what,kinds", [("train", ["forward", "backward"]), ("infer", ["inference"])])
def test_the_second_process_loads_dynamos_package_and_traces_nothing(daemon, daemon_env, tmp_path, what, kinds):
    _write_model(tmp_path)
    procs = _Processes(daemon_env, tmp_path)
    cold = procs.run(what)
    _traced(cold)
    assert cold["dynamo_cache"] == {"dynamo_cache_miss": 1} and cold["caching_precompile"]
    _assert_eager(tmp_path, what, cold)
    assert len(procs.packages()) == 1, "the first process wrote no package"

    before = daemon.stats()
    warm = procs.run(what)  # an empty local cache: a new machine's process
    after = daemon.stats()
    _from_package(warm, kinds)
    _assert_eager(tmp_path, what, warm)
    assert warm["out"] == cold["out"] and warm["grads"] == cold["grads"]
    assert sorted(s["key"] for s in warm["stats"]) == sorted(s["key"] for s in cold["stats"])
    # The plans came by key: no Compile request reached the daemon.
    assert (after["cache_hits"], after["cache_misses"]) == (before["cache_hits"], before["cache_misses"])
    assert after["manifest_reads"] == before["manifest_reads"] + len(kinds)


def test_a_recipe_hit_completes_the_package_when_dynamo_records_the_frame(daemon_env, tmp_path):
    """A graph whose AOT recipe is known at compile time (here from the local cache of a first
    process without the knob) records its artifact before Dynamo has recorded the frame; the
    package is written right after that (DynamoCache.record_package, wrapped)."""
    _write_model(tmp_path)
    procs = _Processes(daemon_env, tmp_path)
    filled = str(tmp_path / "filled-cache")
    procs.run("train", cache_dir=filled, TCCD_CACHING_PRECOMPILE="0")
    assert not procs.packages()
    hit = procs.run("train", cache_dir=filled)
    assert all(s["aot_skipped"] for s in hit["stats"]) and hit["unique_graphs"] == 1, hit
    assert len(procs.packages()) == 1
    warm = procs.run("train")
    _from_package(warm, ["forward", "backward"])
    _assert_eager(tmp_path, "train", warm)
    # A filled local cache loads the package as well (the plans' artifacts from it).
    local = procs.run("train", cache_dir=filled)
    _from_package(local, ["forward", "backward"])
    _assert_eager(tmp_path, "train", local)


def test_a_changed_source_is_traced_again_and_computes_the_new_code(daemon_env, tmp_path):
    _write_model(tmp_path)
    procs = _Processes(daemon_env, tmp_path)
    procs.run("train")
    _write_model(tmp_path, activation="torch.sigmoid")  # same lines, other code
    changed = procs.run("train")
    _traced(changed)
    _assert_eager(tmp_path, "train", changed)
    assert "Dynamo traces the function" in changed["stderr"] and "Traceback" not in changed["stderr"]
    # Written again for the new source: the next process loads that one.
    again = procs.run("train")
    _from_package(again, ["forward", "backward"])
    _assert_eager(tmp_path, "train", again)


def test_other_plan_knobs_drop_the_package_with_one_line(daemon_env, tmp_path):
    _write_model(tmp_path)
    procs = _Processes(daemon_env, tmp_path)
    procs.run("train")
    other = procs.run("train", TCCD_PARTITIONER="default")
    _traced(other)
    assert other["dynamo_cache"] == {"dynamo_cache_error": 1}
    _assert_eager(tmp_path, "train", other)
    lines = [line for line in other["stderr"].splitlines() if "Dynamo traces the function" in line]
    assert len(lines) == 1 and "saved under other client knobs (partitioner)" in lines[0], other["stderr"]
    assert "Traceback" not in other["stderr"]


def test_a_daemon_without_the_packages_plans_drops_it(daemon_env, tmp_path):
    """The package names plans by key; a daemon that does not hold them (another cluster's, an
    emptied store) cannot serve them: the function is traced and compiled there."""
    _write_model(tmp_path)
    procs = _Processes(daemon_env, tmp_path)
    procs.run("train")
    root = short_tempdir("tccd-pkg-")
    other = Daemon(TCCD_BINARY, root)
    other.start()
    try:
        fresh = procs.run("train", TCCD_ADDRESS=other.address)
    finally:
        other.stop()
    _traced(fresh)
    assert fresh["dynamo_cache"] == {"dynamo_cache_error": 1}
    assert all(s["fallback"] is None for s in fresh["stats"])
    _assert_eager(tmp_path, "train", fresh)


def test_without_the_knob_torchs_flag_stays_off_and_nothing_is_written(daemon_env, tmp_path):
    _write_model(tmp_path)
    procs = _Processes(daemon_env, tmp_path, knob=False)
    result = procs.run("train")
    assert not result["caching_precompile"] and result["dynamo_cache"] == {}
    assert not procs.packages()


def test_torchs_own_flag_alone_gets_no_tccd_graphs_and_the_next_process_traces(daemon_env, tmp_path):
    """TORCH_CACHING_PRECOMPILE=1 without tccd's knob, the packages written by torch's
    torch.compiler.save_cache_artifacts(): tccd records no artifact (torch's save has the bugs
    the knob works around), so torch marks the frame bypassed and the next process traces it."""
    _write_model(tmp_path)
    procs = _Processes(daemon_env, tmp_path, knob=False)
    procs.run("train", "--save-artifacts", TORCH_CACHING_PRECOMPILE="1")
    assert len(procs.packages()) == 1
    again = procs.run("train", TORCH_CACHING_PRECOMPILE="1")
    _traced(again)
    _assert_eager(tmp_path, "train", again)


def test_guards_that_cannot_be_saved_leave_the_frame_out_of_the_package(daemon_env, tmp_path):
    """A frame whose guards Dynamo cannot serialise (PackageError) is compiled and run as usual
    and left out of the package (torch 2.11 asserted here: caching_precompile._tolerate_unsaved_guards);
    the next process traces it."""
    _write_model(tmp_path)
    procs = _Processes(daemon_env, tmp_path)
    cold = procs.run("train", "--unsaved-guards")
    _traced(cold)
    _assert_eager(tmp_path, "train", cold)
    assert "package bypass" in cold["stderr"] and "test: these guards cannot be serialized" in cold["stderr"]
    assert not procs.packages()
    again = procs.run("train")
    _traced(again)
    _assert_eager(tmp_path, "train", again)


@pytest.mark.parametrize("other_torch", [False, True], ids=["this-torch", "other-torch"])
def test_a_model_called_under_autocast_loads_its_package(daemon_env, tmp_path, other_torch):
    """The package of a model called under autocast loads and traces nothing. torch 2.11 built
    the loaded tensor guards with the dispatch keys of the torch.compile() call, outside
    autocast, and every guard set failed (session 16's GPU cells; with torch 2.11 on the CPU
    the same): caching_precompile._load_guards_under_saved_autocast. other-torch: with
    TCCD_TEST_OTHER_TORCH_SITE (torch 2.11 unpacked)."""
    _write_model(tmp_path)
    procs = _Processes(daemon_env, tmp_path, other_torch=other_torch)
    cold = procs.run("train", "--autocast")
    _traced(cold)
    assert (cold["torch"] != torch.__version__) == other_torch, cold["torch"]
    warm = procs.run("train", "--autocast")
    _from_package(warm, ["forward", "backward"])
    assert warm["out"] == cold["out"] and warm["grads"] == cold["grads"]
    if other_torch:
        # And a guard that fails after the load (another batch size) traces without the clash
        # of torch 2.11's global names.
        other = procs.run("train", "--autocast", "--rows", "12")
        assert other["unique_graphs"] == 1 and other["dynamo_cache"] == {"dynamo_cache_hit": 1}, other


def test_a_guard_that_fails_after_the_load_traces_with_torch_2_11s_global_names(daemon_env, tmp_path):
    """Another batch size than the package's: its guards fail and Dynamo traces the frame in a
    module where the package's install bound `__builtins_dict___0`. torch 2.11 named the new
    frame's global from its process counter alone and asserted on the clash (session 16's GPU
    run: every warm-pre cell); with install_global as 2.11 has it, the trace works and computes
    eager's results (caching_precompile._mint_unbound_globals). The recompile joins the
    package: the next process at that size traces nothing."""
    _write_model(tmp_path)
    procs = _Processes(daemon_env, tmp_path)
    procs.run("train")
    other = procs.run("train", "--rows", "12", "--torch-2.11-names")
    assert other["dynamo_cache"] == {"dynamo_cache_hit": 1} and other["unique_graphs"] == 1, other
    _assert_eager(tmp_path, "train", other, rows=12)
    again = procs.run("train", "--rows", "12")
    assert again["unique_graphs"] == 0 and again["dynamo_cache"] == {"dynamo_cache_hit": 1}, again
    _assert_eager(tmp_path, "train", again, rows=12)
    third = procs.run("train", "--rows", "10")
    assert third["unique_graphs"] == 1, third
    _assert_eager(tmp_path, "train", third, rows=10)


# Guards on the modules' structure that TCCD_PACKAGE_LEAN_GUARDS leaves out of the package
# (precompile.MODULE_STRUCTURE_GUARD_TYPES).
_STRUCTURE = {"EMPTY_NN_MODULE_HOOKS_DICT", "NOT_PRESENT_IN_GENERIC_DICT", "DICT_KEYS_MATCH"}


@pytest.mark.parametrize("knobs,builds,lean", [({}, 1, True),
                                               ({"TCCD_LOADED_GUARDS_ONCE": "0", "TCCD_PACKAGE_LEAN_GUARDS": "0"},
                                                2, False)], ids=["new", "knobs-off"])
@pytest.mark.parametrize("other_torch", [False, True], ids=["this-torch", "other-torch"])
def test_the_package_keeps_lean_guards_and_its_load_builds_them_once(daemon_env, tmp_path, knobs, builds, lean,
                                                                     other_torch):
    """A loaded package's guards are built once (torch's caching_precompile builds them twice:
    caching_precompile._build_loaded_guards_once), and the package holds the AOT flow's lean
    guards (no guards on the modules' structure) with every tensor guard still in it
    (TCCD_PACKAGE_LEAN_GUARDS). knobs-off: torch's own behaviour, both knobs 0. other-torch:
    with TCCD_TEST_OTHER_TORCH_SITE (torch 2.11 unpacked: the same double build there)."""
    _write_model(tmp_path)
    procs = _Processes(daemon_env, tmp_path, other_torch=other_torch)
    procs.run("train", **knobs)
    warm = procs.run("train", **knobs)
    _from_package(warm, ["forward", "backward"])
    _assert_eager(tmp_path, "train", warm)
    assert warm["load_guard_builds"] == builds, warm["load_guard_types"]
    types = warm["load_guard_types"]
    # The model's four parameters and its input, each guarded in full (dtype, device, shape,
    # stride, requires_grad, dispatch keys).
    assert types.get("TENSOR_MATCH") == 5, types
    assert bool(_STRUCTURE & set(types)) != lean, types


@pytest.mark.parametrize("variant", ["double", "freeze_fc1"])
def test_a_parameter_unlike_the_packages_is_traced_never_run_with_the_packages_plans(daemon_env, tmp_path, variant):
    """After the lean package loads, a model whose parameters differ from the saved ones (other
    dtype; one not requiring grad) fails the package's tensor guards, which the lean filter
    keeps: Dynamo traces it and the results are eager's (fc1's weight gets no gradient when
    frozen), never the package's plans run on the wrong tensors."""
    _write_model(tmp_path)
    procs = _Processes(daemon_env, tmp_path)
    procs.run("train")
    other = procs.run("train", "--" + variant.replace("_", "-"))
    assert other["dynamo_cache"] == {"dynamo_cache_hit": 1} and other["unique_graphs"] == 1, other
    _assert_eager(tmp_path, "train", other, **{variant: True})
    if variant == "freeze_fc1":
        assert other["grads"][0] is None
