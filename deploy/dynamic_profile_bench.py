#!/usr/bin/env python3
"""Automatic-dynamic profiles shared by job id (issue 9): recompiles of a first and a second
process of one job, over varying sequence lengths and batch sizes.

    PYTHONPATH=client python deploy/dynamic_profile_bench.py [--workload infer|train|both]
        [--binary build/bin/tccd] [--device cpu|cuda]

starts a daemon of its own (temp dir, unix socket), runs the loop in a first process of a fresh
job id, then in a second process of the same job id (fresh local caches: torch's and tccd's, as
on another machine or after a restart), and prints per process: Dynamo compiles per frame, the
daemon's compiles during that process, and the largest difference to eager over all steps.

    python deploy/dynamic_profile_bench.py worker --workload infer --out r.json

is one such process (the end-to-end tests run it too), against the daemon TCCD_ADDRESS names.
--vary seq|batch|both picks what changes between steps: 16 sequence lengths 32..512 (seq), batch
sizes 2..8 (batch), or both. --steps N keeps the first N steps (the tests run 6: a frame goes
dynamic at its second distinct size, and the steps after it check that it stays so).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "deploy"))
from bench_daemon import BenchDaemon  # noqa: E402
SEQ_LENS = list(range(32, 513, 32))  # 16 lengths
BATCHES = [2, 3, 4, 5, 6, 7, 8, 4]


class Block(torch.nn.Module):
    # A transformer-ish block over [batch, seq, 64]: every op sees the varying dims. At module
    # level on purpose: torch's PGO cannot carry a closure's frame to another process (its
    # CodeId has a per-process closure hash), so a model class defined inside a function would
    # recompile in every process.
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(64)
        self.up = torch.nn.Linear(64, 128)
        self.down = torch.nn.Linear(128, 64)

    def forward(self, x):
        h = self.down(torch.nn.functional.gelu(self.up(self.norm(x))))
        return x + h


def _shapes(vary: str, steps: int = 0):
    if vary == "seq":
        shapes = [(4, s) for s in SEQ_LENS]
    elif vary == "batch":
        shapes = [(b, 64) for b in BATCHES]
    else:
        shapes = [(BATCHES[i % len(BATCHES)], s) for i, s in enumerate(SEQ_LENS)]
    return shapes[:steps] if steps > 0 else shapes


def worker(args) -> int:
    from tccd import channel, config
    from tccd.backend import tccd as tccd_backend
    from tccd.v1 import tccd_pb2 as pb

    torch.manual_seed(0)
    device = torch.device(args.device)

    eager = Block().to(device)
    model = Block().to(device)
    model.load_state_dict(eager.state_dict())

    frames = collections.Counter()

    def counting_backend(gm, example_inputs):
        from torch._guards import CompileContext

        cid = CompileContext.current_compile_id()
        frames[str(cid.frame_id) if cid is not None else "?"] += 1
        return tccd_backend(gm, example_inputs)

    compiled = torch.compile(model, backend=counting_backend)
    stub = channel.connect(config.get())
    before = stub.GetStats(pb.StatsRequest()).counters
    max_diff = 0.0
    opt_e = torch.optim.SGD(eager.parameters(), lr=0.01)
    opt_c = torch.optim.SGD(model.parameters(), lr=0.01)
    t0 = time.perf_counter()
    for batch, seq in _shapes(args.vary, args.steps):
        x = torch.randn(batch, seq, 64, device=device)
        if args.workload == "infer":
            with torch.no_grad():
                got, want = compiled(x), eager(x)
            max_diff = max(max_diff, (got - want).abs().max().item())
            continue
        for m, opt in ((compiled, opt_c), (eager, opt_e)):
            opt.zero_grad()
            loss = m(x).square().mean()
            loss.backward()
            opt.step()
            if m is compiled:
                got = loss.detach()
            else:
                want = loss.detach()
        max_diff = max(max_diff, (got - want).abs().item())
        for p, q in zip(model.parameters(), eager.parameters()):
            max_diff = max(max_diff, (p.detach() - q.detach()).abs().max().item())
    seconds = time.perf_counter() - t0
    after = stub.GetStats(pb.StatsRequest()).counters
    result = {
        "workload": args.workload,
        "vary": args.vary,
        "steps": len(_shapes(args.vary, args.steps)),
        "dynamo_compiles_per_frame": dict(frames),
        "daemon_compiles": after["compiles"] - before["compiles"],
        "profile_puts": after["dynamic_profile_puts"] - before["dynamic_profile_puts"],
        "profile_hits": after["dynamic_profile_hits"] - before["dynamic_profile_hits"],
        "max_abs_diff_vs_eager": max_diff,
        "loop_s": round(seconds, 2),
    }
    text = json.dumps(result, sort_keys=True)
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


def _run_process(env, workload, vary, device, root, name):
    fresh = Path(root) / name
    env = dict(env, TORCHINDUCTOR_CACHE_DIR=str(fresh / "inductor"), TCCD_CACHE_DIR=str(fresh / "tccd"))
    out = fresh / "result.json"
    fresh.mkdir(parents=True)
    r = subprocess.run(
        [sys.executable, __file__, "worker", "--workload", workload, "--vary", vary,
         "--device", device, "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit(f"{name} failed:\n{r.stdout}\n{r.stderr[-3000:]}")
    return json.loads(out.read_text())


def bench(args) -> int:
    with BenchDaemon(str(args.binary), prefix="tccd-pgo-") as daemon:
        root = daemon.root
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TCCD_", "TORCH"))}
        env.update(TCCD_ADDRESS=daemon.address, TCCD_NO_AUTOSTART="1",
                   PYTHONPATH=str(REPO / "client") + os.pathsep + env.get("PYTHONPATH", ""))
        workloads = ["infer", "train"] if args.workload == "both" else [args.workload]
        rows = []
        for workload in workloads:
            job_env = dict(env, TORCH_COMPILE_JOB_ID=f"bench-{workload}-{os.getpid()}-{time.time_ns()}")
            for name in ("first", "second"):
                r = _run_process(job_env, workload, args.vary, args.device, root, f"{workload}-{name}")
                rows.append((workload, name, r))
        print(f"{'workload':<9}{'process':<8}{'steps':>6}  {'dynamo compiles/frame':<22}"
              f"{'daemon compiles':>16}{'max |diff| vs eager':>21}{'loop s':>8}")
        for workload, name, r in rows:
            per_frame = ",".join(str(v) for v in r["dynamo_compiles_per_frame"].values())
            print(f"{workload:<9}{name:<8}{r['steps']:>6}  {per_frame:<22}{r['daemon_compiles']:>16}"
                  f"{r['max_abs_diff_vs_eager']:>21.3g}{r['loop_s']:>8}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", nargs="?", default="bench", choices=["bench", "worker"])
    parser.add_argument("--workload", default="both", choices=["infer", "train", "both"])
    parser.add_argument("--vary", default="seq", choices=["seq", "batch", "both"])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=0, help="only the first N steps (0: all)")
    parser.add_argument("--binary", default=str(REPO / "build" / "bin" / "tccd"))
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.mode == "worker":
        if args.workload == "both":
            parser.error("worker runs one workload")
        return worker(args)
    return bench(args)


if __name__ == "__main__":
    sys.exit(main())
