"""End to end against the real daemon: training under backend="tccd" matches eager, and the
cache carries across processes, daemon restarts and a stopped daemon.

Tolerances: fused kernels compute f32 pointwise ops with LLVM-generated code (their own
exp/tanh/sigmoid code paths, possibly FMA-contracted), so each element may differ from ATen by
a few ulp (~1e-7 relative). Five SGD steps with momentum carry such differences through matmuls
and convolutions without amplifying them beyond ~1e-6 relative, so rtol=1e-4 / atol=1e-5 leave
two orders of magnitude of headroom while still catching any real miscompile (a wrong op, a
wrong stride or broadcast gives errors of order 1e-2 and up). Processes that reuse the same
kernels must agree bit for bit.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import tccd
from tccd_testlib import run_training

RTOL, ATOL = 1e-4, 1e-5
WORKER = Path(__file__).resolve().parent / "e2e_worker.py"


def _assert_used_native_kernels(stats, kinds=("forward", "backward")):
    by_kind = {}
    for s in stats:
        assert s["fallback"] is None, f"{s['name']} fell back: {s['fallback']}"
        by_kind.setdefault(s["kind"], []).append(s)
    for kind in kinds:
        assert kind in by_kind, f"no {kind} graph compiled: {[s['name'] for s in stats]}"
        assert sum(s["native_kernels"] for s in by_kind[kind]) > 0, f"no fused kernel in {kind}"
        assert all(s["key"] for s in by_kind[kind])
        kernels = [k for s in by_kind[kind] for k in s["kernels"]]
        assert kernels and all(k["ops"] for k in kernels), "every kernel names the ops it fused"


@pytest.mark.parametrize("partitioner", ["min_cut", "default"])
@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_training_matches_eager_and_uses_fused_kernels(daemon_env, monkeypatch, model, partitioner):
    monkeypatch.setenv("TCCD_PARTITIONER", partitioner)
    tccd.config.reload()
    eager_losses, eager_state = run_training(model, steps=5)
    losses, state = run_training(model, steps=5, backend="tccd")
    torch.testing.assert_close(losses, eager_losses, rtol=RTOL, atol=ATOL)
    assert eager_state.keys() == state.keys()
    for k in eager_state:
        torch.testing.assert_close(state[k], eager_state[k], rtol=RTOL, atol=ATOL, msg=k)
    # Sanity: training did something (so "equal to eager" is not vacuous).
    assert not torch.equal(losses[0], losses[-1])
    _assert_used_native_kernels(tccd.last_compile_stats())


def _worker(env_overrides, out_dir: Path, name: str, model: str = "cnn"):
    out = out_dir / f"{name}.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TCCD_")}
    env["TCCD_AOT_SHARE"] = "0"  # the session daemon serves every test: see conftest.daemon_env
    env.update(env_overrides)
    r = subprocess.run(
        [sys.executable, str(WORKER), "--model", model, "--steps", "5", "--out", str(out)],
        capture_output=True, text=True, timeout=600, env=env,
    )
    assert r.returncode == 0, f"{name} failed:\n{r.stdout}\n{r.stderr}"
    return json.loads(out.read_text())


def _same_training(a, b):
    assert a["losses_hex"] == b["losses_hex"], (a["losses"], b["losses"])
    assert a["params"] == b["params"]


def test_cache_survives_processes_restarts_and_a_stopped_daemon(daemon, daemon_env, tmp_path):
    job = daemon_env["TCCD_JOB_ID"]
    base = {"TCCD_ADDRESS": daemon.address, "TCCD_JOB_ID": job, "TCCD_NO_AUTOSTART": "1"}
    cache_a = str(tmp_path / "cache-a")

    # Process 1 compiles (or hits the daemon's cache, if an earlier test compiled these graphs).
    p1 = _worker({**base, "TCCD_CACHE_DIR": cache_a}, tmp_path, "p1")
    assert p1["warnings"] == []
    _assert_used_native_kernels(p1["stats"])
    keys = sorted(s["key"] for s in p1["stats"])
    eager_losses, _ = run_training("cnn", steps=5)
    torch.testing.assert_close(torch.tensor(p1["losses"]), eager_losses, rtol=RTOL, atol=ATOL)

    # Process 2: same job, fresh local cache: everything from the daemon's cache, no compile.
    before = daemon.stats()
    p2 = _worker({**base, "TCCD_CACHE_DIR": str(tmp_path / "cache-b")}, tmp_path, "p2")
    after = daemon.stats()
    assert after["compiles"] == before["compiles"], "process 2 compiled something"
    assert after["cache_hits"] >= before["cache_hits"] + len(keys)
    assert all(s["cache_hit"] and not s["local_hit"] for s in p2["stats"]), p2["stats"]
    assert sorted(s["key"] for s in p2["stats"]) == keys
    _same_training(p1, p2)

    # The job index saw both processes use every key.
    r = subprocess.run([sys.executable, "-m", "tccd", "job", job, "--json", "--address", daemon.address],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    entries = {e["key"]: e for e in json.loads(r.stdout)["entries"]}
    for key in keys:
        assert key in entries, f"job index lacks {key}"
        assert entries[key]["uses"] >= 2

    # Restart the daemon on the same database: still no compile, same results.
    daemon.restart()
    before = daemon.stats()
    p3 = _worker({**base, "TCCD_CACHE_DIR": str(tmp_path / "cache-c")}, tmp_path, "p3")
    after = daemon.stats()
    assert after["compiles"] == before["compiles"], "compiled after a restart"
    assert all(s["cache_hit"] for s in p3["stats"])
    _same_training(p1, p3)

    # A corrupt artifact in a local cache is detected, refetched (not recompiled) and repaired.
    artifacts = [p for p in Path(cache_a, "artifacts").rglob("*") if p.is_file()]
    assert artifacts
    for path in artifacts:
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    before = daemon.stats()
    p4 = _worker({**base, "TCCD_CACHE_DIR": cache_a}, tmp_path, "p4")
    assert daemon.stats()["compiles"] == before["compiles"]
    assert p4["warnings"] == []
    assert not any(s["local_hit"] for s in p4["stats"])
    _same_training(p1, p4)

    # Daemon stopped, populated local cache: runs without any warning, entirely locally.
    assert daemon.stop() == 0
    try:
        p5 = _worker({**base, "TCCD_CACHE_DIR": cache_a}, tmp_path, "p5")
    finally:
        daemon.start()
    assert p5["warnings"] == []
    assert all(s["local_hit"] and s["fallback"] is None for s in p5["stats"]), p5["stats"]
    _same_training(p1, p5)


def test_daemon_down_and_no_binary_falls_back_per_graph(tmp_path):
    """A fresh process, nothing at its address, TCCD_BINARY pointing nowhere: eager results and
    exactly one TccdFallbackWarning per graph."""
    dead = {
        "TCCD_ADDRESS": f"unix:{tmp_path}/nothing.sock",
        "TCCD_BINARY": str(tmp_path / "no-tccd-here"),
        "TCCD_CACHE_DIR": str(tmp_path / "cache"),
    }
    res = _worker(dead, tmp_path, "dead", model="mlp")
    stats = res["stats"]
    assert len(stats) == 2 and all(s["fallback"] for s in stats)
    assert len(res["warnings"]) == len(stats)
    for s, w in zip(stats, res["warnings"]):
        assert s["name"] in w["message"] and "TCCD_BINARY" in w["message"]
    eager_losses, _ = run_training("mlp", steps=5)
    assert [float(x).hex() for x in eager_losses.tolist()] == res["losses_hex"]


def test_strict_mode_in_a_fresh_process_raises(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TCCD_")}
    env.update({"TCCD_ADDRESS": f"unix:{tmp_path}/nothing.sock", "TCCD_NO_AUTOSTART": "1",
                "TCCD_STRICT": "1", "TCCD_CACHE_DIR": str(tmp_path / "cache")})
    code = ("import torch, tccd\n"
            "m = torch.compile(torch.nn.Linear(3, 3), backend='tccd')\n"
            "try:\n"
            "    m(torch.randn(2, 3))\n"
            "except Exception as e:\n"
            "    chain = []\n"
            "    while e is not None and len(chain) < 10:\n"
            "        chain.append(e); e = getattr(e, 'inner_exception', None) or e.__cause__\n"
            "    print('TccdError' if any(isinstance(x, tccd.TccdError) for x in chain) else repr(chain))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "TccdError"


def test_without_local_cache_every_process_asks_the_daemon(daemon_env, monkeypatch):
    monkeypatch.setenv("TCCD_LOCAL_CACHE", "0")
    tccd.config.reload()
    f = lambda x, y: torch.sigmoid(x) * y - 2  # noqa: E731
    x, y = torch.randn(3, 5), torch.randn(5)
    for attempt in range(2):
        torch._dynamo.reset()
        out = torch.compile(f, backend="tccd")(x, y)
        torch.testing.assert_close(out, f(x, y), rtol=RTOL, atol=ATOL)
    stats = tccd.last_compile_stats()
    assert len(stats) == 2 and not any(s["local_hit"] for s in stats)
    assert stats[1]["cache_hit"] and stats[1]["key"] == stats[0]["key"]
    assert not os.path.exists(os.path.join(daemon_env["TCCD_CACHE_DIR"], "manifests"))
