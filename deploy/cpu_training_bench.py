"""CPU training step time, one thread: tccd (native plan runtime) against eager, on a small MLP,
CNN and transformer (the "CPU training" target of issue 8: tccd's step <= eager's on each).

    TCCD_BINARY=build/bin/tccd PYTHONPATH=client python deploy/cpu_training_bench.py \\
        [--steps N] [--repeats N] [--rounds N] [--models mlp,cnn,transformer] [--profile] \\
        [--backends eager,tccd,inductor,dynamo]

Each (model, backend) cell runs in its own process with torch.set_num_threads(1): build the
model (same seed), compile it (tccd) and warm up, then time `--steps` training steps (forward,
backward, SGD step) `--repeats` times and take the median ms per step. The eager and tccd cells
alternate for `--rounds` rounds and the table shows each backend's best round (a shared machine's
other load only ever adds time), by wall time and by the thread's CPU time (`cpu`: what the
step cost the core, which other processes' load moves much less than wall time). Prints a table, and
with --profile the top ops by self CPU time of the tccd cell (where the time goes). tccd cells
also report python_steps (extern steps that went through the Python callback: 0 is the goal)
and whether any graph fell back to eager. Uses the daemon at TCCD_ADDRESS (auto-started).

--backends adds columns (each against eager, by CPU time): `inductor` (torch.compile's default
backend), and `dynamo` (torch.compile with backend="eager": Dynamo's guards and wrappers around
the captured graph run eagerly, no AOTAutograd, no compiler): what any backend pays per graph
call before its own runtime starts, the floor under tccd's and Inductor's per-step cost.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

MODELS = ["mlp", "cnn", "transformer"]
# --backends beside eager and tccd: name -> torch.compile's backend.
COMPILED = {"inductor": "inductor", "dynamo": "eager"}


def build(name):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    if name == "mlp":
        model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
        x, y = torch.randn(64, 256), torch.randint(0, 10, (64,))
    elif name == "cnn":
        model = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
            nn.Flatten(), nn.Linear(32, 10),
        )
        x, y = torch.randn(16, 3, 32, 32), torch.randint(0, 10, (16,))
    elif name == "transformer":
        class Tiny(nn.Module):
            def __init__(self, vocab=1000, d=128, heads=4, layers=2):
                super().__init__()
                self.emb = nn.Embedding(vocab, d)
                layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True,
                                                   norm_first=True, activation="gelu")
                self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
                self.head = nn.Linear(d, vocab)

            def forward(self, ids):
                return self.head(self.enc(self.emb(ids)))

        model = Tiny()
        x = torch.randint(0, 1000, (8, 64))
        y = torch.randint(0, 1000, (8, 64))
    else:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(MODELS)}")

    def loss_fn(out, target):
        return F.cross_entropy(out.reshape(-1, out.shape[-1]), target.reshape(-1))

    return model, x, y, loss_fn


def cell(spec):
    import torch

    torch.set_num_threads(1)
    model, x, y, loss_fn = build(spec["model"])
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    forward = model
    if spec["backend"] == "tccd":
        import tccd  # noqa: F401  (registers the backend)

        forward = torch.compile(model, backend="tccd", dynamic=False)
    elif spec["backend"] in COMPILED:
        forward = torch.compile(model, backend=COMPILED[spec["backend"]], dynamic=False)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(forward(x), y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(3):  # compile and warm up
        step()
    samples, cpu_samples = [], []
    for _ in range(spec["repeats"]):
        start, cpu_start = time.perf_counter(), time.thread_time()
        for _ in range(spec["steps"]):
            step()
        cpu_samples.append((time.thread_time() - cpu_start) / spec["steps"] * 1e3)
        samples.append((time.perf_counter() - start) / spec["steps"] * 1e3)
    # cpu_ms: this thread's CPU time per step. With one intra-op thread the whole step runs on
    # this thread (CPU autograd runs on the caller's, the plan runtime too), so it is the step's
    # cost without the time other processes of a shared machine took the core away.
    out = {"ms": statistics.median(samples), "cpu_ms": statistics.median(cpu_samples), "loss": float(step())}
    if spec["backend"] == "tccd":
        import tccd

        stats = tccd.last_compile_stats()
        out["python_steps"] = sum(s["python_steps"] for s in stats)
        out["graphs"] = len(stats)
        out["fallbacks"] = [s["fallback"] for s in stats if s["fallback"]]
    if spec.get("profile"):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from profiling import profile_kernels, table

        def steps():
            for _ in range(spec["steps"]):
                step()

        out["profile"] = table(profile_kernels(steps, device="cpu"), iters=spec["steps"], limit=25)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--profile", action="store_true", help="print the tccd cells' top ops by self CPU time")
    parser.add_argument("--backends", default="eager,tccd",
                        help="eager,tccd and any of " + ",".join(COMPILED) + " (extra columns: CPU time / eager's)")
    parser.add_argument("--cell", help=argparse.SUPPRESS)  # internal: one cell, as JSON
    args = parser.parse_args()
    if args.cell:
        print("RESULT " + json.dumps(cell(json.loads(args.cell))))
        return
    import torch

    print(f"torch {torch.__version__}, 1 thread, {args.steps} steps x {args.repeats} repeats, median ms/step, "
          f"best of {args.rounds} alternating rounds")
    extra = [b for b in args.backends.split(",") if b not in ("eager", "tccd")]
    for b in extra:
        if b not in COMPILED:
            raise SystemExit(f"unknown backend {b!r}; known: eager, tccd, {', '.join(COMPILED)}")
    print(f"{'model':12s} {'eager ms':>9s} {'tccd ms':>9s} {'tccd/eager':>10s} {'eager cpu':>9s} {'tccd cpu':>9s} "
          f"{'cpu t/e':>8s} {'python_steps':>12s}  loss eager / tccd"
          + "".join(f"  {b} cpu, /eager" for b in extra))
    for name in args.models.split(","):
        results = {}
        best_cpu = {}  # each backend's best round by CPU time (its own round: load varies)
        for round_ in range(args.rounds):
            for backend in ["eager", "tccd"] + extra:
                spec = {"model": name, "backend": backend, "steps": args.steps, "repeats": args.repeats,
                        "profile": args.profile and backend == "tccd" and round_ == 0}
                proc = subprocess.run([sys.executable, __file__, "--cell", json.dumps(spec)], capture_output=True,
                                      text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
                lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
                if proc.returncode != 0 or not lines:
                    raise SystemExit(f"{name}/{backend} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
                result = json.loads(lines[-1][len("RESULT "):])
                best_cpu[backend] = min(best_cpu.get(backend, result["cpu_ms"]), result["cpu_ms"])
                if backend not in results or result["ms"] < results[backend]["ms"]:
                    result.setdefault("profile", results.get(backend, {}).get("profile"))
                    results[backend] = result
        e, t = results["eager"], results["tccd"]
        note = f"  fallbacks: {t['fallbacks']}" if t["fallbacks"] else ""
        ec, tc = best_cpu["eager"], best_cpu["tccd"]
        print(f"{name:12s} {e['ms']:9.2f} {t['ms']:9.2f} {t['ms'] / e['ms']:10.2f} {ec:9.2f} {tc:9.2f} {tc / ec:8.2f} "
              f"{t['python_steps']:12d}  "
              f"{e['loss']:.5f} / {t['loss']:.5f}"
              + "".join(f"  {b} {best_cpu[b]:.2f}, {best_cpu[b] / ec:.2f}" for b in extra) + note)
        if args.profile:
            print(t["profile"])


if __name__ == "__main__":
    main()
