"""GPU check for column kernels with a pointwise prologue (issue 7): a transformer/ConvNeXt MLP
block, Linear -> GELU -> Linear under bf16 autocast, forward and backward, eager vs Inductor vs
tccd, each backend in its own process. Its backward holds the kernels in question: the GELU
backward (the first matmul's input gradient) fused with the first Linear's bias gradient (a
column sum over the tokens) into one column kernel, and the second Linear's bias gradient (a
column sum of the incoming gradient).

One command on a GPU machine (starts its own daemons from the given binaries, in temp dirs):

  PYTHONPATH=client python deploy/column_bench.py [--tccd build/bin/tccd] [--batch 64] \
      [--baseline <another tccd binary>] [--cases cnx1,vit]

Backends (--backends, comma-separated): eager, inductor, tccd, tccd-off (this binary with
TCCD_DISABLE_PASSES=<--disable>, default column-sum-split: the one-kernel column sums),
tccd-base (the --baseline binary: before/after a change in one run), tccd-old (this binary with
the split off and TCCD_COLUMN_UNROLL=1: one row's loads in flight per thread, as before), and
tccd-NAME for every --variant NAME:ENV=V[+ENV=V...] (this binary, its daemon started with those
environment variables: the TCCD_COLUMN_* / TCCD_SOFT_CASTS knobs of codegen/pipeline.cc), e.g.

  --variant soft:TCCD_SOFT_CASTS=1 --variant v8:TCCD_COLUMN_VEC_BYTES=8 \
  --variant split:TCCD_COLUMN_STORED_PROLOGUE=0 --backends eager,inductor,tccd,tccd-soft,tccd-v8,tccd-split

Cases (tokens x in -> hidden; --batch B images or sequences):
  cnx1..cnx4  ConvNeXt-T's stages: B*56*56 x 96 -> 384, B*28*28 x 192 -> 768,
              B*14*14 x 384 -> 1536, B*7*7 x 768 -> 3072 (exact GELU)
  vit         ViT-B/16: B*197 x 768 -> 3072 (exact GELU)
  gpt2        GPT-2: 16*512 x 768 -> 3072 (tanh GELU), independent of --batch
  bert        BERT-base: 16*512 x 768 -> 3072 (exact GELU), independent of --batch

Per case and backend: device time per training step (sum of GPU kernel time from
torch.profiler over --iters steps), the kernels by time (tccd's names end in _contig or
_strided: the entry each launch took), and the largest relative L2 error of the output and of
the gradients (input, both weights and biases) against eager on the same inputs (bf16 autocast
both; ~1e-2 is bf16's rounding of a sum of 2^20 terms in another order). Bytes: the fused GELU
backward + bias-gradient kernel reads the matmul's output gradient and the saved pre-activation
and writes the GELU gradient (3 x 2 bytes per element): tokens x hidden x 6 bytes, the figure to
divide its time by.
`--device cpu` runs the same on the CPU (a smoke test of the script, not a benchmark).
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "deploy"))
from bench_daemon import BenchDaemon  # noqa: E402

CASES = {
    "cnx1": (56 * 56, 96, 384, "none"),
    "cnx2": (28 * 28, 192, 768, "none"),
    "cnx3": (14 * 14, 384, 1536, "none"),
    "cnx4": (7 * 7, 768, 3072, "none"),
    "vit": (197, 768, 3072, "none"),
    "gpt2": (None, 768, 3072, "tanh"),
    "bert": (None, 768, 3072, "none"),
}


def worker(spec):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    from profiling import device_time_per_iter, profile_kernels

    backend, device = spec["backend"], spec["device"]
    if backend.startswith("tccd"):
        import tccd  # registers the backend
    results = {}
    for name, (per_item, d, h, approximate) in CASES.items():
        if spec.get("cases") and name not in spec["cases"]:
            continue
        tokens = 16 * 512 if per_item is None else spec["batch"] * per_item
        if device == "cpu":
            tokens = min(tokens, 4096)
        torch._dynamo.reset()
        torch.manual_seed(0)
        fc, proj = nn.Linear(d, h).to(device), nn.Linear(h, d).to(device)

        def fn(x):
            return proj(F.gelu(fc(x), approximate=approximate))

        g = torch.Generator(device=device).manual_seed(1)
        x = torch.randn(tokens, d, generator=g, device=device).requires_grad_(True)
        dy = torch.randn(tokens, d, generator=g, device=device, dtype=torch.bfloat16)
        params = [x, fc.weight, fc.bias, proj.weight, proj.bias]
        run = fn if backend == "eager" else torch.compile(fn, backend="tccd" if backend.startswith("tccd") else backend)
        dtype = torch.bfloat16

        def step(f):
            for a in params:
                a.grad = None
            with torch.autocast(device, dtype=dtype):
                y = f(x)
            y.backward(dy)
            return y

        ref = step(fn).detach().float()
        ref_grads = [a.grad.detach().float() for a in params]
        init_s = _cuda_init_seconds(backend)
        y = step(run)

        def rel(got, want):
            return float((got.float() - want).norm() / max(float(want.norm()), 1e-30))

        errors = {"out": rel(y, ref)}
        for label, a, rg in zip(["x", "w1", "b1", "w2", "b2"], params, ref_grads):
            errors[label] = rel(a.grad, rg)
        info = {"error": max(errors.values()), "errors": errors, "tokens": tokens, "hidden": h}
        if backend.startswith("tccd"):
            # Loading the step's plans into the GPU (modules, cuBLASLt objects, matmul
            # autotuning: TCCD_GEMM_AUTOTUNE), from the first call's compile and the first
            # backward's: what autotuning adds to a warm start.
            info["cuda_init_ms"] = round((_cuda_init_seconds(backend) - init_s) * 1e3, 1)
        if device == "cuda":
            for _ in range(3):
                step(run)
            torch.cuda.synchronize()
            kernels = profile_kernels(lambda: step(run), device="cuda", iters=spec["iters"])
            info["us"], info["kernels"] = device_time_per_iter(kernels, spec["iters"], width=90)
        else:
            start = time.perf_counter()
            for _ in range(spec["iters"]):
                step(run)
            info["us"] = round((time.perf_counter() - start) / spec["iters"] * 1e6, 1)
        results[name] = info
    print("RESULT " + json.dumps(results), flush=True)


def _cuda_init_seconds(backend):
    if not backend.startswith("tccd"):
        return 0.0
    from tccd import runtime

    return runtime.cuda_init_seconds()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tccd", default=str(ROOT / "build" / "bin" / "tccd"))
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--backends", default="eager,inductor,tccd,tccd-off,tccd-old")
    p.add_argument("--baseline", help="another tccd binary, run as backend tccd-base")
    p.add_argument("--disable", default="column-sum-split", help="TCCD_DISABLE_PASSES of backend tccd-off")
    p.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    p.add_argument("--top", type=int, default=6, help="kernels listed per case and backend")
    p.add_argument("--variant", action="append", default=[],
                   help="NAME:ENV=V[+ENV=V...]: backend tccd-NAME, this binary with that daemon environment")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        worker(json.loads(args.worker))
        return
    daemon_env = {"tccd": {}, "tccd-base": {}, "tccd-off": {"TCCD_DISABLE_PASSES": args.disable},
                  "tccd-old": {"TCCD_DISABLE_PASSES": "column-sum-split", "TCCD_COLUMN_UNROLL": "1"}}
    for v in args.variant:
        name, _, assignments = v.partition(":")
        env = dict(a.split("=", 1) for a in assignments.split("+") if "=" in a)
        if not name or not env:
            p.error(f"--variant {v!r}: expected NAME:ENV=V[+ENV=V...]")
        daemon_env[f"tccd-{name}"] = env
    binary = {"tccd-base": args.baseline}
    table = {}
    for backend in args.backends.split(","):
        if backend == "tccd-base" and not args.baseline:
            p.error("backend tccd-base needs --baseline")
        daemon = BenchDaemon(binary.get(backend) or args.tccd, daemon_env[backend]) if backend in daemon_env else None
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "client"), os.environ.get("PYTHONPATH", "")]))
        if daemon:
            env = daemon.client_env(env)
        spec = dict(backend=backend, device=args.device, batch=args.batch, iters=args.iters,
                    cases=[c for c in args.cases.split(",") if c])
        try:
            out = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)], env=env,
                                 capture_output=True, text=True, timeout=1500)
        finally:
            if daemon:
                daemon.close()
        line = next((l for l in out.stdout.splitlines() if l.startswith("RESULT ")), None)
        if line is None:
            print(f"{backend}: failed\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
            continue
        table[backend] = json.loads(line[len("RESULT "):])
    names = list(next(iter(table.values())).keys()) if table else []
    print(f"\n{'case':22s} " + " ".join(f"{b:>14s}" for b in table) + "   (us per fwd+bwd step; max error)")
    for name in names:
        cells = []
        for b in table:
            r = table[b].get(name, {})
            cells.append(f"{r.get('us', float('nan')):8.1f} {r.get('error', float('nan')):.0e}")
        print(f"{name:22s} " + " ".join(f"{c:>14s}" for c in cells))
    for name in names:
        for b in table:
            r = table[b].get(name)
            if r is None:
                continue
            gb = r["tokens"] * r["hidden"] * 6 / 1e9
            init = f", plan loads into the GPU {r['cuda_init_ms']} ms" if "cuda_init_ms" in r else ""
            print(f"\n{b} {name} ({r['tokens']} x {r['hidden']}: the GELU backward moves {gb:.3f} GB): "
                  f"errors {r['errors']}{init}")
            for k, us in sorted(r.get("kernels", {}).items(), key=lambda kv: -kv[1])[: args.top]:
                print(f"  {us:10.1f}  {k}")


if __name__ == "__main__":
    main()
