"""Per-call host overhead of running one small plan: the native plan runtime (one ctypes call per
graph, client/tccd/native_plan.py) against the Python interpreter (client/tccd/runtime.py).

    TCCD_BINARY=build/bin/tccd PYTHONPATH=client python deploy/plan_overhead_bench.py [--iters N]
    ... deploy/plan_overhead_bench.py --tensors 300   # the wrapper's cost per tensor

Compiles a small CPU graph (a few fused kernels, a matmul and a reduction as extern steps, views)
once, loads its plan both ways from the same manifest, checks they agree, and prints the median
microseconds per call of each (tiny tensors, so the time is the host's, not the kernels').
Uses the daemon at TCCD_ADDRESS (auto-started as usual).
"""

import argparse
import statistics
import time

import torch

import tccd  # noqa: F401  (registers the backend)
from tccd import config


def graph(x, w):
    h = torch.relu(x @ w + 1.0)
    s = (h * torch.sigmoid(h)).sum(dim=1, keepdim=True)
    return h.t() * 0.5, h / (s + 1.0), torch.tanh(h)[1:3]


def many(*xs):
    return tuple(x + 1.0 for x in xs)


def capture_plans(*inputs, fn=graph):
    """The plan of `fn` under each runtime (compiled once; the second load is a cache hit)."""
    plans = {}
    from tccd import compiler

    original = compiler.compile_request

    def spy(request, cfg, record, key=None):
        plan = original(request, cfg, record, key)
        plans[cfg.native_runtime] = plan
        return plan

    compiler.compile_request = spy
    try:
        for native in (True, False):
            import os

            os.environ["TCCD_NATIVE_RUNTIME"] = "1" if native else "0"
            os.environ["TCCD_AOT_CACHE"] = "0"  # every load goes through compile_request
            config.reload()
            torch._dynamo.reset()
            torch.compile(fn, backend="tccd", dynamic=False)(*inputs)
    finally:
        compiler.compile_request = original
    return plans[True], plans[False]


def per_call_us(plan, args, iters):
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(iters):
            plan(list(args))
        samples.append((time.perf_counter() - start) / iters * 1e6)
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--tensors", type=int, default=0,
                        help="instead: a plan of N inputs and N outputs (x + 1 each), the native call's Python "
                             "side with one foreign call (tccd_plan_run_py) against one ctypes call per tensor")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.tensors:
        return wrapper_cost(args.tensors, args.iters)
    x, w = torch.randn(4, 8), torch.randn(8, 8)
    native, interpreted = capture_plans(x, w)
    if type(native).__name__ != "NativePlan":
        raise SystemExit("the native runtime did not load (see the log line above)")
    inputs = [x, w]
    for a, b in zip(native(list(inputs)), interpreted(list(inputs))):
        torch.testing.assert_close(a, b)
    per_call_us(native, inputs, 200)  # warm up
    per_call_us(interpreted, inputs, 200)
    n_us = per_call_us(native, inputs, args.iters)
    i_us = per_call_us(interpreted, inputs, args.iters)
    steps = len(interpreted.steps)
    print(f"plan: {steps} steps ({interpreted.num_native} native, {interpreted.num_extern} extern); "
          f"python_steps native={native.python_steps} interpreter={interpreted.python_steps}")
    print(f"torch {torch.__version__}, 1 thread, median of 5 x {args.iters} calls")
    print(f"python interpreter: {i_us:7.1f} us/call")
    print(f"native runtime:     {n_us:7.1f} us/call  ({i_us / n_us:.2f}x less host time)")


def wrapper_cost(n, iters):
    xs = [torch.randn(4) for _ in range(n)]
    native, _ = capture_plans(*xs, fn=many)
    if type(native).__name__ != "NativePlan":
        raise SystemExit("the native runtime did not load (see the log line above)")
    lib = native._lib
    run_py = lib.run_py
    if run_py is None:
        raise SystemExit("tccd_plan_run_py is unavailable (TCCD_PLAN_RUN_PY=0?)")
    best = {"one call": [], "per tensor": []}
    for _ in range(3):  # interleaved: the machine's load drifts
        for name, fn in (("one call", run_py), ("per tensor", None)):
            lib.run_py = fn
            best[name].append(per_call_us(native, xs, iters))
    lib.run_py = run_py
    print(f"plan of {n} inputs and {native._num_ref_outputs} outputs, torch {torch.__version__}, "
          f"best of 3 medians of 5 x {iters} calls")
    for name, samples in best.items():
        print(f"{name:>10}: {min(samples):7.1f} us/call")


if __name__ == "__main__":
    main()
