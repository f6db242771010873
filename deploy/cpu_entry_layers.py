"""Where torch.compile's per-call cost goes inside a real CPU training step: the layers between
the caller and tccd's runtime, timed in the training loop (cold caches), not in isolation.

    TCCD_BINARY=build/bin/tccd PYTHONPATH=client nice taskset -c 1 \\
        python deploy/cpu_entry_layers.py [--model mlp] [--steps 2000] [--rounds 2]

Models as deploy/cpu_training_bench.py's (same seed, SGD, one thread). One process per cell:

  eager    the model's step: forward, loss, backward, SGD step
  tccd     torch.compile(model, backend="tccd"), with perf_counter marks at the entry and exit
           of tccd's runtime (the recipe's function Dynamo calls, aot_runtime.build), of its
           forward and backward plan calls, and of OptimizedModule's compile_wrapper: the
           module layers, Dynamo's entry (compile_wrapper, the eval-frame callback, the guard
           tree, the transformed bytecode, the disable wrapper of the compiled function), tccd's
           runtime before and after each plan, the plans, Dynamo's exit
  recipe   the same runtime called with the graph's inputs, Dynamo bypassed
  parts    a tccd step (unmarked), then Dynamo's pieces timed one at a time right after a step's SGD
           update (the caches as the next step's entry finds them): the guard tree's check on
           the compiled frame's locals, the disable wrapper around a no-op, a plain Python
           call; and the same back to back (warm), as cpu10's isolated loops measured them

Each interval is the median over --steps steps, microseconds, by perf_counter (wall time: run it
pinned and niced, and alternate rounds on a loaded machine). The marks are Python frames of their
own (~1-2 us each in the loop): compare variants, not the sum with the step. A model of one graph
(the MLP): with several, the marks are the last graph's.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time


def _build(name):
    import torch

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from cpu_training_bench import build

    torch.set_num_threads(1)
    model, x, y, loss_fn = build(name)
    return model, x, y, loss_fn, torch.optim.SGD(model.parameters(), lr=0.01)


def _instrumented(model, marks):
    """torch.compile(model, backend="tccd") with marks around tccd's runtime and its plans;
    returns (compiled, {"fn": the runtime, "inputs": its last inputs}, the unpatched build)."""
    import torch
    import tccd  # noqa: F401  (registers the backend)
    from tccd import aot_runtime

    clock = time.perf_counter_ns
    real_plan_call, real_build = aot_runtime._plan_call, aot_runtime.build
    plans = []

    def plan_call(plan, lean):
        run = real_plan_call(plan, lean)
        if run is None:
            return run
        tag = "fw" if not plans else "bw"  # build() asks for the forward's first
        plans.append(tag)

        def call(args):
            marks[tag + "0"] = clock()
            out = run(args)
            marks[tag + "1"] = clock()
            return out

        return call

    built = {}

    def build(*args, **kwargs):
        plans.clear()
        fn = real_build(*args, **kwargs)

        def runtime(*inputs):
            marks["rt0"] = clock()
            out = fn(*inputs)
            marks["rt1"] = clock()
            built["fn"], built["inputs"] = fn, inputs
            return out

        return runtime

    aot_runtime._plan_call, aot_runtime.build = plan_call, build
    return torch.compile(model, backend="tccd", dynamic=False), built, real_build


def run_cell(model_name: str, variant: str, steps: int) -> str:
    model, x, y, loss_fn, opt = _build(model_name)
    clock = time.perf_counter_ns
    marks = {}
    spans = {}
    if variant != "eager":
        import tccd  # noqa: F401
        from tccd import aot_runtime

        compiled, built, real_build = _instrumented(model, marks)
        for _ in range(3):  # the first backward stores the recipe; the next call builds its runtime
            loss_fn(compiled(x), y).backward()
        aot_runtime.build = real_build
        if "fn" not in built:
            raise SystemExit("no recipe runtime was built (TCCD_LEAN_RUNTIME=0? a graph without a recipe?)")
        if variant == "recipe":
            fn, inputs = built["fn"], built["inputs"]

            def forward():
                marks["rt0"] = clock()
                out = fn(*inputs)
                marks["rt1"] = clock()
                return out[0]
        elif variant == "parts":
            def forward():
                return compiled(x)
        else:
            wrapper = compiled.forward

            def marked(*args, **kwargs):
                marks["cw0"] = clock()
                out = wrapper(*args, **kwargs)
                marks["cw1"] = clock()
                return out

            compiled.forward = marked

            def forward():
                return compiled(x)
    else:
        def forward():
            return model(x)

    def add(name, ns):
        spans.setdefault(name, []).append(ns)

    def step():
        opt.zero_grad(set_to_none=True)
        a = clock()
        out = forward()
        b = clock()
        loss = loss_fn(out, y)
        c = clock()
        loss.backward()
        d = clock()
        opt.step()
        return a, b, c, d, clock()

    for _ in range(20):
        step()
    if variant == "parts":
        return _parts(model, x, compiled, step, steps)
    for _ in range(steps):
        a, b, c, d, e = step()
        m = marks
        if variant == "eager":
            add("1 forward", b - a)
        else:
            if variant == "tccd":
                add("1a module layers in", m["cw0"] - a)
                add("1b Dynamo entry (wrapper, guards, bytecode, disable)", m["rt0"] - m["cw0"])
            add("2 runtime -> fw plan", m["fw0"] - m["rt0"])
            add("3 fw plan", m["fw1"] - m["fw0"])
            add("4 fw plan -> runtime return", m["rt1"] - m["fw1"])
            if variant == "tccd":
                add("5a Dynamo exit", m["cw1"] - m["rt1"])
                add("5b module layers out", b - m["cw1"])
            else:
                add("5 runtime return -> caller", b - m["rt1"])
        add("6 loss", c - b)
        if variant == "eager":
            add("7 backward", d - c)
        else:
            add("7a backward() -> bw plan", m["bw0"] - c)
            add("7b bw plan", m["bw1"] - m["bw0"])
            add("7c bw plan -> backward() return", d - m["bw1"])
        add("8 SGD step", e - d)
        add("9 step without zero_grad", e - a)
    return "; ".join(f"{k.split(' ', 1)[1]} {statistics.median(v) / 1e3:.1f}" for k, v in sorted(spans.items()))


def _parts(model, x, compiled, step, steps: int) -> str:
    """Dynamo's pieces, each timed right after a step (cold) and back to back (warm)."""
    import torch
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list

    inner = getattr(compiled, "_forward", compiled.forward).__wrapped__  # the frame Dynamo compiled
    entries = _debug_get_cache_entry_list(inner.__code__)
    if len(entries) != 1:
        raise SystemExit(f"expected one compiled frame, found {len(entries)} cache entries")
    guards = entries[0].guard_manager
    frame_locals = {"args": (x,), "kwargs": {}, "fn": model}
    if not guards.check(frame_locals):
        raise SystemExit("the guard tree refuses the frame's locals: this torch's frame differs")
    disabled = torch._dynamo.disable(lambda *a: None)

    def plain(*a):
        return None

    pieces = {"guard tree check": lambda: guards.check(frame_locals),
              "disable wrapper (no-op)": lambda: disabled(x), "plain Python call": lambda: plain(x)}
    clock = time.perf_counter_ns
    cold = {name: [] for name in pieces}
    for _ in range(steps):
        for name, piece in pieces.items():
            step()
            a = clock()
            piece()
            cold[name].append(clock() - a)
    warm = {}
    for name, piece in pieces.items():
        ts = []
        for _ in range(steps):
            a = clock()
            piece()
            ts.append(clock() - a)
        warm[name] = ts
    return "; ".join(f"{name} {statistics.median(cold[name]) / 1e3:.1f} in the loop, "
                     f"{statistics.median(warm[name]) / 1e3:.2f} warm" for name in pieces)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="mlp")
    parser.add_argument("--variants", default="eager,tccd,recipe,parts")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cell", nargs=2, help=argparse.SUPPRESS)  # internal: MODEL VARIANT
    args = parser.parse_args()
    if args.cell:
        print("RESULT " + run_cell(args.cell[0], args.cell[1], args.steps))
        return
    print(f"median us per step over {args.steps} steps, one process per cell")
    for round_ in range(args.rounds):
        for variant in args.variants.split(","):
            proc = subprocess.run(
                [sys.executable, __file__, "--cell", args.model, variant, "--steps", str(args.steps)],
                capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"),
            )
            lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
            if proc.returncode != 0 or not lines:
                raise SystemExit(f"{args.model}/{variant} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
            print(f"round {round_ + 1} {variant:6s} {lines[-1][len('RESULT '):]}", flush=True)


if __name__ == "__main__":
    main()
