"""Where a CPU training step's time goes, by phase, for one variant per process: eager, Dynamo
with no compiler, tccd, and tccd's recipe runtime called without Dynamo (what tccd's own
runtime costs, apart from torch.compile's per-call wrappers).

    TCCD_BINARY=build/bin/tccd PYTHONPATH=client python deploy/cpu_step_phases.py \\
        [--models mlp] [--variants eager,dynamo,tccd,recipe] [--rounds 2] [--steps 200] [--repeats 7]

Models as deploy/cpu_training_bench.py's (same seed, SGD, one thread). Each variant runs in its
own process (a process holding several compiled wrappers of one model measures them polluted by
each other), warms up, then times `--steps` steps `--repeats` times with the thread's CPU time
read between the phases: zero_grad + forward, the loss, the backward, the optimizer step; each
phase's best repeat is printed (microseconds per step). Variants:

  eager    the model itself
  dynamo   torch.compile(model, backend="eager"): Dynamo's guards and wrappers, the captured
           FX graph run eagerly (no AOTAutograd, no compiler): what any backend pays per call
  tccd     torch.compile(model, backend="tccd")
  recipe   the same process's tccd runtime (aot_runtime.build's function: the autograd.Function
           and the native plans) called directly with the graph's inputs, Dynamo bypassed

`--rounds` alternates the variants that many times (a shared machine's load moves single cells
by 5-10 %). The clock reads cost ~1 us each, five per step, in every variant alike.
"""

import argparse
import os
import subprocess
import sys
import time

VARIANTS = ["eager", "dynamo", "tccd", "recipe"]
PHASES = ("zero+fw", "loss", "bw", "opt")


def run(model_name: str, variant: str, steps: int, repeats: int) -> str:
    import torch

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from cpu_training_bench import build

    torch.set_num_threads(1)
    model, x, y, loss_fn = build(model_name)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    if variant in ("tccd", "recipe"):
        import tccd  # noqa: F401  (registers the backend)
        from tccd import aot_runtime

        built = {}
        real_build = aot_runtime.build

        def spy(*args, **kwargs):  # the recipe runtime's function and the inputs Dynamo gives it
            fn = real_build(*args, **kwargs)

            def call(*inputs):
                built["fn"], built["inputs"] = fn, inputs
                return fn(*inputs)

            return call

        aot_runtime.build = spy
        compiled = torch.compile(model, backend="tccd", dynamic=False)
        for _ in range(3):  # the first backward stores the recipe; the next call builds its runtime
            loss_fn(compiled(x), y).backward()
        aot_runtime.build = real_build
        if variant == "recipe":
            if "fn" not in built:
                raise SystemExit("no recipe runtime was built (TCCD_LEAN_RUNTIME=0? a graph without a recipe?)")
            fn, inputs = built["fn"], built["inputs"]

            def forward():
                return fn(*inputs)[0]
        else:
            def forward():
                return compiled(x)
    elif variant == "dynamo":
        compiled = torch.compile(model, backend="eager", dynamic=False)

        def forward():
            return compiled(x)
    elif variant == "eager":
        def forward():
            return model(x)
    else:
        raise SystemExit(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
    for _ in range(5):
        opt.zero_grad(set_to_none=True)
        loss_fn(forward(), y).backward()
        opt.step()
    clock = time.thread_time_ns
    best = None
    for _ in range(repeats):
        sums = [0] * len(PHASES)
        for _ in range(steps):
            a = clock()
            opt.zero_grad(set_to_none=True)
            out = forward()
            b = clock()
            loss = loss_fn(out, y)
            c = clock()
            loss.backward()
            d = clock()
            opt.step()
            e = clock()
            for i, v in enumerate((b - a, c - b, d - c, e - d)):
                sums[i] += v
        best = sums if best is None else [min(p, q) for p, q in zip(best, sums)]
    us = [v / steps / 1e3 for v in best]
    return " ".join(f"{name} {v:7.1f}" for name, v in zip(PHASES, us)) + f"  sum {sum(us):7.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="mlp")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--cell", nargs=2, help=argparse.SUPPRESS)  # internal: MODEL VARIANT
    args = parser.parse_args()
    if args.cell:
        print("RESULT " + run(args.cell[0], args.cell[1], args.steps, args.repeats))
        return
    print(f"thread CPU us per step, best of {args.repeats} x {args.steps} steps, one process per cell")
    for model in args.models.split(","):
        for round_ in range(args.rounds):
            for variant in args.variants.split(","):
                proc = subprocess.run(
                    [sys.executable, __file__, "--cell", model, variant, "--steps", str(args.steps),
                     "--repeats", str(args.repeats)],
                    capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"),
                )
                lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
                if proc.returncode != 0 or not lines:
                    raise SystemExit(f"{model}/{variant} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
                print(f"{model:12s} round {round_ + 1} {variant:7s} {lines[-1][len('RESULT '):]}", flush=True)


if __name__ == "__main__":
    main()
