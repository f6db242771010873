"""Where a warm first step goes: eager, Inductor and tccd, each in a new process, on the CPU.

    python deploy/warm_start_bench.py [--threads N] [--repeat R] [--no-share] [--json OUT]

The model is a 2-layer transformer language model built from plain torch.nn (vocab 512, d=256,
4 heads, batch 2, seq 64); one training step is forward, cross-entropy, backward and SGD. The
compiled function is the loss as a function of (parameters, tokens, targets)
(torch.func.functional_call), in every scenario, because that is what aot_compile can save.
Every scenario runs in its own process (this script with --child), timed from the first call:

  eager            eager's own first step (the floor everything is compared with)
  inductor-warm    torch.compile(backend="inductor"), Inductor's local caches filled by a
                   previous process (FX graph cache, AOTAutograd cache)
  tccd-cold        backend="tccd", empty daemon and local caches (fills the daemon)
  tccd-warm        new process, EMPTY local cache, daemon cache filled (another machine): the
                   AOT recipe comes from the daemon (--no-share: AOTAutograd traces)
  tccd-local       new process, local cache filled too (AOT recipe hit: no AOTAutograd trace)
  tccd-aot         torch.compiler.load_compiled_function of a function saved by aot_compile
                   (precompile.py), empty local cache: no Dynamo, no AOTAutograd, no compile

Each child splits its first step (seconds) into:
  dynamo        Dynamo's trace and guards (torch's compile_inner minus the backend call)
  backend       inside the backend but outside what is listed below: AOTAutograd's trace and
                partitioning (tccd), AOTAutograd + Inductor (inductor)
  recipe        tccd's AOT recipe lookup (key, JSON), outside the plan loads it does
  request       tccd: serialising graphs into CompileRequests and their hashes
  compile_rpc   tccd: the Compile round trips (the daemon answers from its cache)
  fetch         tccd: GetManifest / FetchArtifact round trips and writing the local cache
  load          tccd: dlopen and binding of plans (runtime.load_plan, native_plan.load)
  aot_load      torch.compiler.load_compiled_function (tccd-aot; includes its fetch and load)
  rest          everything else: the first calls themselves, autograd, the optimizer step
The daemon is build/bin/tccd (or --binary), started by this script on a private socket.
--cold measures cold first steps instead (empty caches everywhere, a new daemon per tccd run):
tccd-cold with the backward prefetch (prefetch.py), tccd-cold-serial without it, inductor-cold;
with them the daemon's compile time summed over the graphs and the backward's wait for it.
Prints one table and, with --json, writes every child's numbers.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_daemon import BenchDaemon  # noqa: E402
from phase_timers import PHASES, Timers  # noqa: E402


# ---------------------------------------------------------------------------------------------
# The model (child side)
# ---------------------------------------------------------------------------------------------


import torch  # noqa: E402  (the model's classes must be at module level for aot_compile)
import torch.nn as nn  # noqa: E402


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab=512, d=256, heads=4, layers=2, seq=64):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(seq, d))
        self.blocks = nn.Sequential(*[Block(d, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, tokens, targets):
        x = self.tok(tokens) + self.pos
        logits = self.head(self.ln(self.blocks(x)))
        return nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())


def make_model():
    torch.manual_seed(0)
    model = TinyLM()
    tokens = torch.randint(0, 512, (2, 64))
    targets = torch.randint(0, 512, (2, 64))
    return model, tokens, targets


def functional_step(model):
    """The loss as a function of (parameters, tokens, targets): what aot_compile saves (a
    function whose tensors are all inputs, so that a new process passes its own model's)."""
    import torch

    def loss_fn(params, tokens, targets):
        return torch.func.functional_call(model, params, (tokens, targets))

    return loss_fn


def save_aot(path: str) -> None:
    import torch

    torch._dynamo.reset()
    torch._dynamo.config.enable_aot_compile = True  # torch 2.11's default is False
    model, tokens, targets = make_model()
    params = dict(model.named_parameters())
    compiled = torch.compile(functional_step(model), backend="tccd", fullgraph=True, dynamic=False)
    # The module object itself is the caller's (external data): a new process passes its own.
    aot = compiled.aot_compile(((params, tokens, targets), {}))
    aot.save_compiled_function(path, external_data={"model": model})


def child(mode: str, saved: str) -> Dict[str, float]:
    import torch

    model, tokens, targets = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    timers = Timers()
    if mode.startswith("tccd"):
        import tccd

        timed_backend = timers.instrument_tccd()
    timers.begin()
    start = time.perf_counter()
    if mode == "eager":
        step_fn = model
    elif mode == "tccd-aot":
        import tccd.precompile  # noqa: F401  (the saved file names its classes)

        timers.instrument_aot_load()
        with open(saved, "rb") as f:
            fn = torch.compiler.load_compiled_function(f, external_data={"model": model})
        params = dict(model.named_parameters())

        def step_fn(tokens, targets):
            return fn(params, tokens, targets)
    else:
        if mode == "inductor-warm":
            timers.instrument_inductor()
            compiled = torch.compile(functional_step(model), backend="inductor", dynamic=False)
        else:
            compiled = torch.compile(functional_step(model), backend=timed_backend, dynamic=False)
        params = dict(model.named_parameters())

        def step_fn(tokens, targets):
            return compiled(params, tokens, targets)
    loss = step_fn(tokens, targets)
    loss.backward()
    opt.step()
    first_step = time.perf_counter() - start
    out = {"first_step_s": first_step, "loss": float(loss.detach())}
    out.update(timers.finish(first_step, compiled=mode not in ("eager", "tccd-aot")))
    if mode.startswith("tccd"):
        stats = tccd.last_compile_stats()
        out["graphs"] = len(stats)
        out["aot_skipped"] = sum(s["aot_skipped"] for s in stats)
        out["local_hits"] = sum(s["local_hit"] for s in stats)
        out["fallbacks"] = sum(s["fallback"] is not None for s in stats)
        out["daemon_compile_s"] = round(sum(s["compile_ms"] for s in stats) / 1e3, 4)
        out["prefetched"] = sum(s["prefetched"] for s in stats)
        out["prefetch_wait_s"] = round(sum(s["prefetch_wait_ms"] for s in stats) / 1e3, 4)
    if mode == "tccd-cold" and saved:
        save_aot(saved)
    return out


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------


def run_child(mode: str, env: Dict[str, str], saved: str, threads: int) -> Dict[str, float]:
    cmd = [sys.executable, __file__, "--child", mode, "--saved", saved, "--threads", str(threads)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(f"{mode} failed:\n{r.stdout[-3000:]}\n{r.stderr[-6000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


@contextlib.contextmanager
def daemon(binary: str, root: str):
    """A daemon on an empty cache in `root` (bench_daemon.py; the dir stays, as the caller's)."""
    with BenchDaemon(binary, root=root, start_timeout_s=30) as d:
        yield d.address


def warm_scenarios(args, base: Dict[str, str], root: str, saved: str,
                   results: Dict[str, List[Dict[str, float]]]) -> None:
    """Eager, Inductor and tccd warm starts (the default table), on one daemon."""
    with daemon(args.binary, root) as address:
        tccd_env = dict(base, TCCD_ADDRESS=address, TCCD_NO_AUTOSTART="1",
                        TCCD_AOT_SHARE="0" if args.no_share else "1")

        def run(mode, env, label=None):
            r = run_child(mode, env, saved, args.threads)
            results.setdefault(label or mode, []).append(r)
            print(f"  {label or mode}: {r['first_step_s']:.2f} s", file=sys.stderr, flush=True)

        run("eager", base)
        run("inductor-warm", base, "inductor-cold")  # fills Inductor's caches
        run("tccd-cold", dict(tccd_env, TCCD_CACHE_DIR=os.path.join(root, "local-cold")))
        for i in range(args.repeat):
            run("eager", base)
            run("inductor-warm", base)
            run("tccd-warm", dict(tccd_env, TCCD_CACHE_DIR=os.path.join(root, f"local-empty-{i}")))
            local = os.path.join(root, f"local-filled-{i}")
            shutil.copytree(os.path.join(root, "local-cold"), local)
            run("tccd-local", dict(tccd_env, TCCD_CACHE_DIR=local))
            run("tccd-aot", dict(tccd_env, TCCD_CACHE_DIR=os.path.join(root, f"local-aot-{i}")))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--child")
    parser.add_argument("--saved", default="")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per process (default 1)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each warm scenario; the table shows the median")
    parser.add_argument("--binary", default=str(REPO / "build" / "bin" / "tccd"))
    parser.add_argument("--json", help="write every run's numbers here")
    parser.add_argument("--no-share", action="store_true",
                        help="TCCD_AOT_SHARE=0: recipes stay local (the tccd-warm of before they were shared)")
    parser.add_argument("--cold", action="store_true",
                        help="cold first steps only: eager, Inductor with empty caches, tccd with empty "
                             "daemon and local caches, with the backward prefetch (tccd-cold) and "
                             "without it (tccd-cold-serial, TCCD_PREFETCH_BACKWARD=0); a new daemon each")
    parser.add_argument("--no-inductor", action="store_true", help="--cold without Inductor's row")
    args = parser.parse_args()
    if args.child:
        import torch

        torch.set_num_threads(args.threads)
        print(json.dumps(child(args.child, args.saved)))
        return 0

    root = tempfile.mkdtemp(prefix="tccd-warm-", dir="/tmp")
    results: Dict[str, List[Dict[str, float]]] = {}
    try:
        base = {k: v for k, v in os.environ.items() if not k.startswith(("TCCD_", "TORCHINDUCTOR_"))}
        base["PYTHONPATH"] = str(REPO / "client") + os.pathsep + base.get("PYTHONPATH", "")
        base["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(root, "inductor-cache")
        saved = os.path.join(root, "step.pt2")
        if args.cold:
            for i in range(args.repeat):
                for label, prefetch in (("tccd-cold", "1"), ("tccd-cold-serial", "0")):
                    run_root = os.path.join(root, f"{label}-{i}")
                    os.makedirs(run_root)
                    with daemon(args.binary, run_root) as address:
                        env = dict(base, TCCD_ADDRESS=address, TCCD_NO_AUTOSTART="1",
                                   TCCD_PREFETCH_BACKWARD=prefetch,
                                   TCCD_CACHE_DIR=os.path.join(run_root, "local"))
                        r = run_child("tccd-cold", env, "", args.threads)
                    results.setdefault(label, []).append(r)
                    print(f"  {label}: {r['first_step_s']:.2f} s (daemon compile {r['daemon_compile_s']:.2f} s, "
                          f"backward waited {r['prefetch_wait_s']:.2f} s)", file=sys.stderr, flush=True)
                if not args.no_inductor:
                    env = dict(base, TORCHINDUCTOR_CACHE_DIR=os.path.join(root, f"inductor-cold-{i}"))
                    results.setdefault("inductor-cold", []).append(run_child("inductor-warm", env, "", args.threads))
                results.setdefault("eager", []).append(run_child("eager", base, "", args.threads))
        if not args.cold:
            warm_scenarios(args, base, root, saved, results)
    finally:
        shutil.rmtree(root, ignore_errors=True)

    def median(xs):
        xs = sorted(xs)
        return xs[len(xs) // 2]

    eager = median([r["first_step_s"] for r in results["eager"]])
    # --cold: the daemon's compile time summed over the graphs, and how long the first
    # .backward() still waited for its prefetched compile.
    columns = PHASES + (("daemon_compile_s", "prefetch_wait_s") if args.cold else ())
    print(f"{'scenario':<17}{'first step':>11}{'- eager':>9}" + "".join(f"{p:>12}" for p in columns))
    for mode, runs in results.items():
        row = {p: median([r.get(p, 0.0) for r in runs]) for p in columns + ("first_step_s",)}
        print(f"{mode:<17}{row['first_step_s']:>11.3f}{row['first_step_s'] - eager:>9.3f}"
              + "".join(f"{row[p]:>12.3f}" for p in columns))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
