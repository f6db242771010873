"""Micro-benchmark: ViT's q/k/v gradient (stack -> permute -> clone, issue 7) and two relatives,
eager vs Inductor vs tccd (and optionally a second tccd build), each backend in its own process.

One command on a GPU machine (starts its own daemon(s) from the given binaries, in temp dirs):

  PYTHONPATH=client python deploy/stack_permute_bench.py [--baseline /path/to/other/tccd]

Per case and backend: device time per call (sum of GPU kernel time from torch.profiler over
--iters calls), the kernels launched and, for tccd, the generated kernels' kinds and ATen ops; every
result is checked bit for bit against eager (these are copies). Cases:
  vit_stack   3 x bf16[B, 12, 197, 64] -> stack -> permute(1, 3, 0, 2, 4) -> clone -> [B*197, 2304]
  cat_perm    3 x bf16[B, 12, 197, 64] -> cat(dim=1) -> transpose(1, 2) -> clone
  pad_perm    bf16[B, 197, 768] -> pad last dim by (0, 8) -> transpose(1, 2) -> clone
  transpose_cast  f32[B*3, 512, 64] -> transpose(1, 2) * 0.125 -> bf16 -> clone (BERT's scaled K^T
              cast: inputs contiguous along one dim, the output along another: a tiled kernel)
  to_nhwc     bf16[B, 128, 56, 56] -> channels_last copy (ConvNeXt/ResNet layout copies)
  to_nchw     bf16[B, 128, 56, 56] channels_last -> contiguous
The "tccd" daemon runs with TCCD_TILE_KERNELS=1 (tiled kernels are opt-in for now);
`--tile-ab` also runs the same tccd with TCCD_DISABLE_PASSES=tile-kernels in the daemon
("tccd-notile": the transposing copies on the strided entry, as before the tiled kernels).
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


def cases(batch, device):
    import torch

    dt = torch.bfloat16

    def vit_stack(q, k, v):
        return torch.stack([q, k, v]).permute(1, 3, 0, 2, 4).contiguous().view(-1, 3 * 12 * 64)

    def cat_perm(q, k, v):
        return torch.cat([q, k, v], dim=1).transpose(1, 2).contiguous()

    def pad_perm(x):
        return torch.nn.functional.pad(x, (0, 8)).transpose(1, 2).contiguous()

    g = torch.Generator(device=device).manual_seed(0)
    qkv = [torch.randn(batch, 12, 197, 64, device=device, dtype=dt, generator=g) for _ in range(3)]
    x = torch.randn(batch, 197, 768, device=device, dtype=dt, generator=g)
    def transpose_cast(t):
        return (t.transpose(1, 2) * 0.125).to(dt).contiguous()

    def to_nhwc(t):
        return t.contiguous(memory_format=torch.channels_last)

    def to_nchw(t):
        return t.contiguous()

    k = torch.randn(batch * 3, 512, 64, device=device, generator=g)
    maps = torch.randn(batch, 128, 56, 56, device=device, dtype=dt, generator=g)
    return {"vit_stack": (vit_stack, qkv), "cat_perm": (cat_perm, qkv), "pad_perm": (pad_perm, [x]),
            "transpose_cast": (transpose_cast, [k]), "to_nhwc": (to_nhwc, [maps]),
            "to_nchw": (to_nchw, [maps.contiguous(memory_format=torch.channels_last)])}


def worker(spec):
    import torch

    from profiling import device_time_per_iter, profile_kernels

    backend, device = spec["backend"], spec["device"]
    if backend.startswith("tccd"):
        import tccd  # registers the backend
    results = {}
    for name, (fn, args) in cases(spec["batch"], device).items():
        torch._dynamo.reset()
        seen = len(tccd.last_compile_stats()) if backend.startswith("tccd") else 0
        expected = fn(*args)
        run = fn if backend == "eager" else torch.compile(fn, backend="tccd" if backend.startswith("tccd") else backend)
        got = run(*args)
        exact = bool(torch.equal(got, expected))
        info = {"exact": exact}
        if backend.startswith("tccd"):
            import tccd

            stats = tccd.last_compile_stats()[seen:]
            info["tccd_kernels"] = [(k["kind"], k["ops"]) for s in stats for k in s["kernels"]]
            info["fallback"] = [s["fallback"] for s in stats if s["fallback"]]
        if device == "cuda":
            for _ in range(5):
                run(*args)
            torch.cuda.synchronize()
            kernels = profile_kernels(lambda: run(*args), device="cuda", iters=spec["iters"])
            info["us"], info["kernels"] = device_time_per_iter(kernels, spec["iters"], width=60)
        else:
            start = time.perf_counter()
            for _ in range(spec["iters"]):
                run(*args)
            info["us"] = round((time.perf_counter() - start) / spec["iters"] * 1e6, 1)
        results[name] = info
    print("RESULT " + json.dumps(results), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tccd", default=str(ROOT / "build" / "bin" / "tccd"))
    p.add_argument("--baseline", help="a second tccd binary (e.g. main's build) timed the same way")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--tile-ab", action="store_true",
                   help="also run --tccd with TCCD_DISABLE_PASSES=tile-kernels (tccd-notile)")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        worker(json.loads(args.worker))
        return
    # Tiled kernels are opt-in for now (TCCD_TILE_KERNELS=1 in the daemon's environment).
    runs = [("eager", None, None), ("inductor", None, None), ("tccd", args.tccd, {"TCCD_TILE_KERNELS": "1"})]
    if args.tile_ab:
        runs.append(("tccd-notile", args.tccd, {"TCCD_DISABLE_PASSES": "tile-kernels"}))
    if args.baseline:
        runs.append(("tccd-baseline", args.baseline, None))
    table = {}
    for backend, binary, daemon_env in runs:
        daemon = BenchDaemon(binary, daemon_env) if binary else None
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "client"), os.environ.get("PYTHONPATH", "")]))
        if daemon:
            env = daemon.client_env(env)
        spec = dict(backend=backend, device=args.device, batch=args.batch, iters=args.iters)
        try:
            out = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)], env=env,
                                 capture_output=True, text=True, timeout=1200)
        finally:
            if daemon:
                daemon.close()
        line = next((l for l in out.stdout.splitlines() if l.startswith("RESULT ")), None)
        if line is None:
            print(f"{backend}: failed\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
            continue
        table[backend] = json.loads(line[len("RESULT "):])
    names = list(next(iter(table.values())).keys()) if table else []
    print(f"\n{'case':10s} " + " ".join(f"{b:>14s}" for b in table) + "   (us per call; * = not equal to eager)")
    for name in names:
        cells = []
        for b in table:
            r = table[b].get(name, {})
            cells.append(f"{r.get('us', float('nan')):13.1f}{'' if r.get('exact') else '*'}")
        print(f"{name:10s} " + " ".join(f"{c:>14s}" for c in cells))
    for b, res in table.items():
        for name, r in res.items():
            print(f"\n{b} {name}: kernels {r.get('kernels', {})}")
            if "tccd_kernels" in r:
                print(f"  generated: {r['tccd_kernels']}  fallback: {r['fallback']}")


if __name__ == "__main__":
    main()
