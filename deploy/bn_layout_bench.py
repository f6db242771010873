"""GPU check for fixed-layout entries (issue 7): channels-last batch norm (and a ConvNeXt-style
layer norm over a permuted map), forward and backward, eager vs Inductor vs tccd, and tccd again
with its kernels on the strided entry as before (the same binary, the daemon started with
TCCD_DISABLE_PASSES=fixed-layout-entries), each backend in its own process.

One command on a GPU machine (starts its own daemons from the given binary, in temp dirs):

  PYTHONPATH=client python deploy/bn_layout_bench.py [--tccd build/bin/tccd] [--batch 64] \
      [--baseline <another tccd binary>] [--disable pass,pass]

Backends (--backends, comma-separated): eager, inductor, tccd, tccd-strided (fixed-layout
entries off), tccd-base (the --baseline binary: before/after a change in one run), tccd-off (the
daemon with TCCD_DISABLE_PASSES=<--disable> and the --off-env variables: a new pass or emitter
knob against its absence, same binary),
tccd-cols (the daemon with TCCD_SPLIT_COLUMNS=<--split-columns>, default 8192: wider stage-one
column tiles of the channels-last BN sums and the LayerNorm2d parameter gradients).

Per case and backend: device time per training step of the case (sum of GPU kernel time from
torch.profiler over --iters steps: forward, backward), the kernels (tccd's names end in _contig or
_strided: the entry each launch took), and the largest relative L2 error of the output and of the gradients
against eager in float64 on the same bf16 inputs (compiled backends keep the norm in f32, eager
rounds its output to bf16: ~3e-3 is bf16's rounding). Cases, x bf16 channels-last [B, C, H, W], parameters f32 (as under autocast):
  bn_relu_C_HW       relu(batch_norm(x))           ResNet-50's stage shapes at --batch
  bn_add_relu_C_HW   relu(batch_norm(x) + r)       the residual form
  ln2d_C_HW          layer_norm over C of x permuted to [B, H, W, C], permuted back (timm
                     ConvNeXt's LayerNorm2d); weight/bias gradients are sums over B, H, W
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

SHAPES = [(64, 112, 112), (256, 56, 56), (512, 28, 28), (1024, 14, 14), (2048, 7, 7)]


def cases(batch, device, quick):
    import torch
    import torch.nn.functional as F

    def bn_relu(x, w, b, rm, rv):
        return F.batch_norm(x, rm, rv, w, b, training=True).relu()

    def bn_add_relu(x, w, b, rm, rv, r):
        return (F.batch_norm(x, rm, rv, w, b, training=True) + r).relu()

    def ln2d(x, w, b):
        return F.layer_norm(x.permute(0, 2, 3, 1), (x.shape[1],), w, b).permute(0, 3, 1, 2)

    out = {}
    shapes = SHAPES[1:2] if quick else SHAPES
    g = torch.Generator(device=device).manual_seed(0)

    def randn(*shape, dtype=torch.float32, grad=False, cl=False):
        t = torch.randn(*shape, generator=g, device=device, dtype=torch.float32)
        t = t.to(dtype)
        if cl:
            t = t.contiguous(memory_format=torch.channels_last)
        return t.requires_grad_(grad)

    for c, h, w in shapes:
        shape = (batch, c, h, w)
        tag = f"{c}_{h}"
        x = randn(*shape, dtype=torch.bfloat16, grad=True, cl=True)
        wt, bs = randn(c, grad=True), randn(c, grad=True)
        rm, rv = torch.zeros(c, device=device), torch.ones(c, device=device)
        r = randn(*shape, dtype=torch.bfloat16, cl=True)
        out[f"bn_relu_{tag}"] = (bn_relu, [x, wt, bs, rm, rv], [x, wt, bs])
        out[f"bn_add_relu_{tag}"] = (bn_add_relu, [x, wt, bs, rm.clone(), rv.clone(), r], [x, wt, bs])
        if c <= 1024:
            lw, lb = randn(c, grad=True), randn(c, grad=True)
            out[f"ln2d_{tag}"] = (ln2d, [x, lw, lb], [x, lw, lb])
    return out


def worker(spec):
    import torch

    from profiling import device_time_per_iter, profile_kernels

    backend, device = spec["backend"], spec["device"]
    if backend.startswith("tccd"):
        import tccd  # registers the backend
    results = {}
    for name, (fn, args, grads) in cases(spec["batch"], device, spec["quick"]).items():
        if spec.get("cases") and not any(name.startswith(c) for c in spec["cases"]):
            continue
        torch._dynamo.reset()
        # The reference: eager on float64 copies of the same inputs (running stats cloned).
        ref_args = [a.detach().double().requires_grad_(a.requires_grad) if a.is_floating_point() else a for a in args]
        ref = fn(*ref_args)
        dy = torch.randn(ref.shape, generator=torch.Generator(device=device).manual_seed(1), device=device)
        ref.backward(dy)
        ref_grads = [a.grad for a in ref_args if a.requires_grad]
        run = fn if backend == "eager" else torch.compile(fn, backend="tccd" if backend.startswith("tccd") else backend)
        dy_bf16 = dy.to(torch.bfloat16).contiguous(memory_format=torch.channels_last)

        def step():
            for a in grads:
                a.grad = None
            y = run(*args)
            y.backward(dy_bf16)
            return y

        y = step()
        # Relative L2 errors: a relu whose mask flips at a few bf16-rounded elements moves the
        # largest elementwise error to the size of the gradient itself, the norm barely.
        def rel(got, want):
            return float((got.double() - want).norm() / want.norm())

        errors = {"out": rel(y, ref)}
        for i, (a, rg) in enumerate(zip(grads, ref_grads)):
            errors[f"grad{i}"] = rel(a.grad, rg)
        info = {"error": max(errors.values()), "errors": errors}
        if device == "cuda":
            for _ in range(3):
                step()
            torch.cuda.synchronize()
            kernels = profile_kernels(step, device="cuda", iters=spec["iters"])
            info["us"], info["kernels"] = device_time_per_iter(kernels, spec["iters"], width=90)
        else:
            start = time.perf_counter()
            for _ in range(spec["iters"]):
                step()
            info["us"] = round((time.perf_counter() - start) / spec["iters"] * 1e6, 1)
        results[name] = info
    print("RESULT " + json.dumps(results), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tccd", default=str(ROOT / "build" / "bin" / "tccd"))
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--quick", action="store_true", help="one shape (256 x 56 x 56) only")
    p.add_argument("--backends", default="eager,inductor,tccd,tccd-strided")
    p.add_argument("--baseline", help="another tccd binary, run as backend tccd-base")
    p.add_argument("--disable", default="", help="TCCD_DISABLE_PASSES of backend tccd-off")
    p.add_argument("--off-env", default="",
                   help="more daemon environment of backend tccd-off, K=V[,K=V] (e.g. TCCD_ROW_EARLY_LOADS=0)")
    p.add_argument("--split-columns", default="8192",
                   help="TCCD_SPLIT_COLUMNS of backend tccd-cols (stage-one columns of split sums)")
    p.add_argument("--cases", default="", help="only cases whose name starts with one of these (comma-separated)")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        worker(json.loads(args.worker))
        return
    daemon_env = {"tccd": {}, "tccd-strided": {"TCCD_DISABLE_PASSES": "fixed-layout-entries"},
                  "tccd-base": {},
                  "tccd-off": dict([("TCCD_DISABLE_PASSES", args.disable)] +
                                   [kv.split("=", 1) for kv in args.off_env.split(",") if "=" in kv]),
                  "tccd-cols": {"TCCD_SPLIT_COLUMNS": args.split_columns}}
    binary = {"tccd-base": args.baseline}
    table = {}
    for backend in args.backends.split(","):
        if backend == "tccd-base" and not args.baseline:
            p.error("backend tccd-base needs --baseline")
        daemon = BenchDaemon(binary.get(backend) or args.tccd, daemon_env[backend]) if backend in daemon_env else None
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "client"), os.environ.get("PYTHONPATH", "")]))
        if daemon:
            env = daemon.client_env(env)
        spec = dict(backend=backend, device=args.device, batch=args.batch, iters=args.iters, quick=args.quick,
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
    for b, res in table.items():
        for name, r in res.items():
            print(f"\n{b} {name}: errors {r['errors']}\n  kernels {r.get('kernels', {})}")


if __name__ == "__main__":
    main()
